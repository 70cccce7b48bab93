"""
The pretrained transformer of the parsers, as one token embedder: a word is the mean of its word
pieces' vectors, with the arguments and weights of AllenNLP's `pretrained_transformer_mismatched`
(which `TransformerWordEmbedder` extends), and with what parsing on a CPU and long sentences
need, each in its own module:

- precision: the transformer runs under `torch.autocast` in `precision` (`"bfloat16"`,
  `"float16"`, or `"auto"`: the device's native low precision, else float32), in training and
  parsing; the word vectors come out in float32, so whatever reads them is unchanged. At parse
  time its linear layers get their weights cast once and kept (`cast_weights`) instead of cast
  by autocast in every batch: the same output, bit for bit.
- packing (`packed_transformer`): at parse time on the CPU a BERT encoder runs on the batch's
  real word pieces only, not on its padding: the same vectors there, less arithmetic.
- overlapping windows (`overlapping_windows`): a sentence with more word pieces than the
  transformer has positions (`word_piece_limit`) is encoded in windows that overlap by half a
  window instead of failing; batches within the limit go through AllenNLP's code unchanged.
- fast dropout (`fast_dropout`): the transformer's dropout layers draw cheaper CPU masks.

Its indexer is `transformer_indexer` (the same lists as AllenNLP's, split in one call).
Archives and configs that name AllenNLP's `pretrained_transformer_mismatched` get this embedder
too, with torch's own dropout (`AllenNLPNamedTransformerEmbedder`), so models trained before it
existed parse as they did, as fast.
"""
import contextlib
import logging
from typing import Any, Dict, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.token_embedders import (
    PretrainedTransformerEmbedder,
    PretrainedTransformerMismatchedEmbedder,
    TokenEmbedder,
)
from allennlp.nn import util

from lal_allennlp.modules.cast_weights import CastWeights
from lal_allennlp.modules.fast_dropout import replace_dropout
from lal_allennlp.modules.overlapping_windows import plan_windows
from lal_allennlp.modules.packed_transformer import packed_hidden_states, supports_packing
from lal_allennlp.modules.word_piece_limit import transformer_position_limit

logger = logging.getLogger(__name__)

_AUTOCAST_DTYPES = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}
"""The fixed values of `precision` and the autocast dtype of each (None: no autocast)."""
PRECISIONS = tuple(_AUTOCAST_DTYPES) + ("auto",)
"""The values of `precision` (and of the `--precision` options). `"auto"` is bfloat16 on a
device with native bfloat16 arithmetic and float32 elsewhere (`native_autocast_dtype`)."""


def check_precision(precision: str, name: str = "precision") -> str:
    """`precision` if it is one of `PRECISIONS`, else a `ConfigurationError` naming `name`."""
    if precision not in PRECISIONS:
        raise ConfigurationError(
            f'{name} must be one of {sorted(PRECISIONS)}, not "{precision}"'
        )
    return precision


def native_autocast_dtype(device: torch.device) -> Optional[torch.dtype]:
    """The low-precision dtype in which `device` runs a transformer's matrix products faster
    than in float32, or None (float32) where it has none.

    - CPU: bfloat16 with AVX-512 BF16 or AMX. Without them torch's bfloat16 kernels convert
      every operand and run slower than float32 (several times, on an AVX2 CPU: see the
      benchmark page), and float16 is never chosen on a CPU.
    - CUDA: bfloat16 where the GPU supports it (Ampere and later), float16 before.
    """
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu":
        cpu = getattr(torch, "cpu", None)
        checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
        if any(getattr(cpu, name, lambda: False)() for name in checks):
            return torch.bfloat16
    return None


def resolve_autocast_dtype(
    precision: str, device: torch.device, what: str = "The model"
) -> Optional[torch.dtype]:
    """The autocast dtype of `precision` (one of `PRECISIONS`) on `device`, None for float32.
    A fixed low precision on a CPU that only emulates it is kept, as asked, with a warning that
    names `what` runs in it."""
    if precision == "auto":
        return native_autocast_dtype(device)
    dtype = _AUTOCAST_DTYPES[precision]
    if dtype is not None and device.type == "cpu" and not _native_on_cpu(dtype):
        logger.warning(
            "%s's precision is %s, but this CPU (%s) has no native %s arithmetic: torch "
            'emulates it, and it runs several times slower than in float32. Set the precision '
            'to "auto" or "float32" (lal-parse --precision auto; "precision" in a config).',
            what,
            precision,
            torch.backends.cpu.get_cpu_capability(),
            precision,
        )
    return dtype


def _native_on_cpu(dtype: torch.dtype) -> bool:
    """Whether the CPU runs `dtype` matrix products natively (AVX-512 BF16 / AMX, AVX-512 FP16
    / AMX-FP16)."""
    if dtype == torch.bfloat16:
        return native_autocast_dtype(torch.device("cpu")) == torch.bfloat16
    check = getattr(getattr(torch, "cpu", None), "_is_amx_fp16_supported", lambda: False)
    fp16 = getattr(torch.ops.mkldnn, "_is_mkldnn_fp16_supported", lambda: False)
    return bool(check() or fp16())


class WordPieceTransformer(PretrainedTransformerEmbedder):
    """
    AllenNLP's `PretrainedTransformerEmbedder` (word pieces in, word piece vectors out) that
    packs parse-time batches (`packs`) and encodes rows longer than the transformer's positions
    in overlapping windows (`window_limit`); every other call is AllenNLP's `forward`. The inner
    half of `TransformerWordEmbedder`, not registered on its own.

    Both leave the output zero at the batch's padding, where AllenNLP's forward leaves the
    transformer's vectors; the mismatched embedder reads neither.
    """

    def window_limit(self, token_ids: torch.LongTensor) -> Optional[int]:
        """The transformer's number of positions when `token_ids` `(batch_size,
        num_wordpieces)` has more word pieces than that and nothing folds them (`max_length`
        unset), else `None`: such a batch is encoded in windows."""
        if self._max_length is not None:
            return None
        limit = transformer_position_limit(self)
        return limit if limit is not None and token_ids.size(1) > limit else None

    def packs(
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor],
    ) -> bool:
        """Whether this call runs packed: at parse time (no gradients, eval mode) on the CPU, a
        plain BERT encoder (`supports_packing`), a batch with padding, one segment (type ids
        all 0), within the transformer's positions and not folded (`max_length` unset).
        Training, GPUs (not measured there yet) and other transformers keep the padded
        forward."""
        if torch.is_grad_enabled() or self.training or self._max_length is not None:
            return False
        if token_ids.device.type != "cpu" or self.window_limit(token_ids) is not None:
            return False
        if bool(mask.all()) or (type_ids is not None and bool(type_ids.any())):
            return False
        return supports_packing(self.transformer_model)

    def embed_packed(self, token_ids: torch.LongTensor, mask: torch.BoolTensor) -> torch.Tensor:
        """What AllenNLP's forward returns without folding (the scalar mix of the layers, or the
        last one), computed by `packed_hidden_states`: `(batch_size, num_wordpieces, dim)`."""
        hidden_states = packed_hidden_states(self.transformer_model, token_ids, mask)
        if self._scalar_mix is not None:
            # The embedding layer's output is not in the scalar mix, as in AllenNLP's forward.
            return self._scalar_mix(hidden_states[1:])
        return hidden_states[-1]

    def embed_in_windows(
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor],
        window_length: int,
    ) -> torch.Tensor:
        """
        The output for `token_ids` `(batch_size, num_wordpieces)` encoded in overlapping
        windows of at most `window_length` word pieces (special tokens included), shape
        `(batch_size, num_wordpieces, embedding_size)`. Each window has the tokenizer's special
        tokens around it (`[CLS] ... [SEP]` for BERT), as AllenNLP's folding does; all windows
        of the batch go through the transformer (and its scalar mix) as one batch, and each word
        piece takes its vector from the window in which it is farthest from a cut. Rows that
        fit are one window each. `mask` is true on every row's word pieces, all before its
        padding.
        """
        plan = plan_windows(
            mask, window_length, self._num_added_start_tokens, self._num_added_end_tokens
        )
        # shape (num_windows, window_positions)
        window_ids = plan.fold(token_ids)
        window_types = None if type_ids is None else plan.fold(type_ids)
        # shape (num_windows, window_positions, embedding_size)
        window_embeddings = super().forward(window_ids, plan.window_mask, type_ids=window_types)
        return plan.unfold(window_embeddings)

    def forward(
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor] = None,
        segment_concat_mask: Optional[torch.BoolTensor] = None,
    ) -> torch.Tensor:
        """AllenNLP's `forward` (same arguments, same output at the real word pieces), packed
        or in windows where the class docstring says."""
        if self.packs(token_ids, mask, type_ids):
            return self.embed_packed(token_ids, mask)
        limit = self.window_limit(token_ids)
        if limit is not None:
            return self.embed_in_windows(token_ids, mask, type_ids, limit)
        return super().forward(token_ids, mask, type_ids, segment_concat_mask)


def mean_of_word_pieces(
    embeddings: torch.Tensor, offsets: torch.LongTensor, sub_token_mode: Optional[str]
) -> torch.Tensor:
    """
    The word vectors `(batch_size, num_words, dim)` from the word piece vectors `embeddings`
    `(batch_size, num_wordpieces, dim)`: per word, the mean of its pieces (`sub_token_mode`
    `"avg"`) or its first piece (`"first"`), zero for a word without pieces. This is
    AllenNLP's `PretrainedTransformerMismatchedEmbedder.forward` after its transformer call,
    operation for operation, so the vectors are the same bit for bit.
    """
    # span_embeddings: (batch_size, num_words, max_span_length, dim)
    # span_mask: (batch_size, num_words, max_span_length)
    span_embeddings, span_mask = util.batched_span_select(embeddings.contiguous(), offsets)
    span_mask = span_mask.unsqueeze(-1)
    span_embeddings *= span_mask  # zero out paddings
    if sub_token_mode == "first":
        return span_embeddings[:, :, 0, :]
    if sub_token_mode == "avg":
        # shape (batch_size, num_words, dim)
        span_embeddings_sum = span_embeddings.sum(2)
        # shape (batch_size, num_words, 1)
        span_embeddings_len = span_mask.sum(2)
        words = span_embeddings_sum / torch.clamp_min(span_embeddings_len, 1)
        words[(span_embeddings_len == 0).expand(words.shape)] = 0
        return words
    raise ConfigurationError(f"Do not recognise 'sub_token_mode' {sub_token_mode}")


@TokenEmbedder.register("lal_transformer")
class TransformerWordEmbedder(PretrainedTransformerMismatchedEmbedder):
    """
    A pretrained transformer's word vectors: a word is the mean of its word pieces' vectors
    (see the module docstring for what it adds to AllenNLP's embedder). Goes with the
    `lal_transformer` indexer (or AllenNLP's `pretrained_transformer_mismatched`: the same
    lists).

    Registered as a `TokenEmbedder` with name "lal_transformer" (and, with torch's dropout,
    under AllenNLP's name: `AllenNLPNamedTransformerEmbedder`).

    # Parameters

    model_name : `str`
        The `transformers` model (name or folder), the same as the indexer's.
    max_length, sub_module, train_parameters, last_layer_only, override_weights_file,
    override_weights_strip_prefix, load_weights, gradient_checkpointing, tokenizer_kwargs,
    transformer_kwargs, sub_token_mode
        Those of AllenNLP's `pretrained_transformer_mismatched`, with its defaults (e.g.
        `last_layer_only=false`: a learned scalar mix of all layers; `transformer_kwargs
        {"num_hidden_layers": k}`: the first k layers only). With `max_length` AllenNLP folds
        long inputs itself, and this embedder neither packs nor opens windows.
    precision : `str`, optional (default = `"float32"`)
        `"bfloat16"` or `"float16"`: the transformer runs under `torch.autocast` with that dtype,
        in training and parsing; the word vectors come out in float32. bfloat16 pays on CPUs
        with native bfloat16 arithmetic (AVX-512 BF16 or AMX); elsewhere torch emulates it and
        it is several times slower than float32, which a warning says. `"auto"`: bfloat16 where
        the device has native bfloat16 arithmetic (float16 on a GPU without it), float32
        elsewhere, decided on the device each batch runs on, so that an archive trained on one
        machine parses at its best on another. A setting for a trained archive too:
        `lal-parse --precision`, `Parser.load(..., precision=...)`.
    """

    fast_dropout = True
    """Whether the transformer's dropout layers become `FastDropout`s: torch's CPU dropout
    draws every mask element with `bernoulli_`, `FastDropout` the same kind of mask from fewer
    random bits."""

    def __init__(
        self,
        model_name: str,
        max_length: Optional[int] = None,
        sub_module: Optional[str] = None,
        train_parameters: bool = True,
        last_layer_only: bool = True,
        override_weights_file: Optional[str] = None,
        override_weights_strip_prefix: Optional[str] = None,
        load_weights: bool = True,
        gradient_checkpointing: Optional[bool] = None,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        transformer_kwargs: Optional[Dict[str, Any]] = None,
        sub_token_mode: Optional[str] = "avg",
        precision: str = "float32",
    ) -> None:
        # TokenEmbedder's constructor, not the mismatched embedder's: that one builds AllenNLP's
        # word piece embedder, and this one builds `WordPieceTransformer` in its place (the
        # same module name, so the same parameter names in archives).
        TokenEmbedder.__init__(self)
        self._matched_embedder = WordPieceTransformer(
            model_name,
            max_length=max_length,
            sub_module=sub_module,
            train_parameters=train_parameters,
            last_layer_only=last_layer_only,
            override_weights_file=override_weights_file,
            override_weights_strip_prefix=override_weights_strip_prefix,
            load_weights=load_weights,
            gradient_checkpointing=gradient_checkpointing,
            tokenizer_kwargs=tokenizer_kwargs,
            transformer_kwargs=transformer_kwargs,
        )
        self.sub_token_mode = sub_token_mode
        if self.fast_dropout:
            replace_dropout(self._matched_embedder)
        # Parse-time copies of the transformer's linear weights in the autocast dtype.
        self._cast_weights = CastWeights()
        self.precision = precision

    @property
    def precision(self) -> str:
        return self._precision

    @precision.setter
    def precision(self, precision: str) -> None:
        self._precision = check_precision(precision)
        # The autocast dtype of this setting by device type, resolved on first use.
        self._autocast_dtypes: Dict[str, Optional[torch.dtype]] = {}

    def autocast_dtype(self, device: torch.device) -> Optional[torch.dtype]:
        """The autocast dtype of `precision` on `device` (None: float32), resolved once per
        setting and device type. A fixed low precision on a CPU that only emulates it is kept,
        as asked, with one warning."""
        if device.type not in self._autocast_dtypes:
            self._autocast_dtypes[device.type] = self._resolve_autocast_dtype(device)
        return self._autocast_dtypes[device.type]

    def _resolve_autocast_dtype(self, device: torch.device) -> Optional[torch.dtype]:
        return resolve_autocast_dtype(self._precision, device, "The transformer")

    def train(self, mode: bool = True) -> "TransformerWordEmbedder":
        """`nn.Module.train`; going into training mode also drops the parse-time weight copies,
        which an optimizer step does not always invalidate (`CastWeights`)."""
        if mode and hasattr(self, "_cast_weights"):
            self._cast_weights.clear()
        return super().train(mode)

    def forward(
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        offsets: torch.LongTensor,
        wordpiece_mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor] = None,
        segment_concat_mask: Optional[torch.BoolTensor] = None,
    ) -> torch.Tensor:
        """
        The word vectors, shape `(batch_size, num_words, embedding_size)`, from the indexer's
        `token_ids` and `type_ids` `(batch_size, num_wordpieces)`, `offsets` `(batch_size,
        num_words, 2)` (each word's first and last piece), `wordpiece_mask` and `mask` (the
        words'); as AllenNLP's mismatched embedder. float32 when `precision` runs the
        transformer under an autocast of its own; in float32 no autocast is entered at all, so
        an autocast around the whole model (allennlp's `use_amp`) reaches the transformer.
        """
        dtype = self.autocast_dtype(token_ids.device)
        with self._autocast(token_ids.device, dtype):
            # shape (batch_size, num_wordpieces, embedding_size)
            embeddings = self._embed_word_pieces(
                token_ids, wordpiece_mask, type_ids, segment_concat_mask, dtype
            )
            words = mean_of_word_pieces(embeddings, offsets, self.sub_token_mode)
        return words if dtype is None else words.float()

    @staticmethod
    def _autocast(
        device: torch.device, dtype: Optional[torch.dtype]
    ) -> Union[torch.autocast, contextlib.nullcontext]:
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=dtype)

    def _embed_word_pieces(
        self,
        token_ids: torch.LongTensor,
        wordpiece_mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor],
        segment_concat_mask: Optional[torch.BoolTensor],
        dtype: Optional[torch.dtype],
    ) -> torch.Tensor:
        """The word piece vectors. When parsing (no gradients) under a low-precision autocast,
        the transformer's linear layers get weights cast once and kept (`CastWeights`) instead
        of cast by autocast in every batch: the same output, bit for bit."""
        arguments = (token_ids, wordpiece_mask)
        keywords = {"type_ids": type_ids, "segment_concat_mask": segment_concat_mask}
        if dtype is None or self.training or torch.is_grad_enabled():
            return self._matched_embedder(*arguments, **keywords)
        weights = self._cast_weights.copies(self._matched_embedder, dtype)
        return torch.func.functional_call(self._matched_embedder, weights, arguments, keywords)


@TokenEmbedder.register("pretrained_transformer_mismatched", exist_ok=True)
class AllenNLPNamedTransformerEmbedder(TransformerWordEmbedder):
    """
    `TransformerWordEmbedder` under AllenNLP's name, "pretrained_transformer_mismatched", in
    processes that import `lal_allennlp`. Archives and configs written before this package had
    its own embedder name AllenNLP's (with `embedder_precision` on the span parsers, which pass
    it on): they load with the same weights (the same parameter names) and parse as fast as
    when packing and windows were patches of AllenNLP's class. Other packages' models that name
    it get the same vectors at the real word pieces as from AllenNLP's class, and torch's own
    dropout: their training draws the same random masks as with AllenNLP's. AllenNLP's class
    itself is left as it is (code that constructs it directly gets AllenNLP's).
    """

    fast_dropout = False
