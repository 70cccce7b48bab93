"""
The Tree Transformer's unsupervised parser (Wang, Lee & Chen 2019): a masked language model over
a `tree_transformer` encoder, trained on raw words; its link probabilities give trees. Over any
other encoder (e.g. AllenNLP's `pytorch_transformer`) the same masked language model without
trees: the baseline of the paper's perplexity comparison.
"""
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import util
from allennlp.training.metrics import Average, CategoricalAccuracy

from lal_allennlp.metrics.unlabelled_f1 import UnlabelledF1
from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.modules.transformer_embedder import check_precision, resolve_autocast_dtype
from lal_allennlp.modules.tree_transformer import TreeTransformerEncoder, copy_bert_layers
from lal_allennlp.syntax.trees import tree_to_string
from lal_allennlp.syntax.unsupervised import induce_spans, spans_to_unlabelled_tree

# The seed of the masks drawn at evaluation: the same positions are masked in every validation
# pass, so dev perplexities of different epochs compare like with like.
EVALUATION_MASK_SEED = 13


@dataclass
class MaskedTokens:
    """Which positions a masked language model predicts, and what it sees there."""

    selected: torch.BoolTensor  # predicted positions (loss on these only)
    to_mask: torch.BoolTensor  # selected, and shown as the [MASK] vector
    to_random: torch.BoolTensor  # selected, and shown as a random word
    random_ids: torch.LongTensor  # the random words (used where `to_random`)


def choose_masked_tokens(
    mask: torch.BoolTensor,
    vocab_size: int,
    probability: float,
    generator: Optional[torch.Generator] = None,
    first_word_id: int = 2,
) -> MaskedTokens:
    """
    BERT's masking (Devlin et al. 2019), as the Tree Transformer uses it: each word is selected
    with `probability`; of the selected, 80 % are shown as `[MASK]`, 10 % as a random word and
    10 % unchanged. Random words are drawn from the ids `first_word_id .. vocab_size - 1`
    (AllenNLP's padding and unknown ids are 0 and 1). Padding is never selected.
    """
    if vocab_size <= first_word_id:
        raise ConfigurationError(
            f"the vocabulary has {vocab_size} entries, none of them a word to draw from"
        )
    device = mask.device
    draws = torch.rand(mask.shape + (2,), generator=generator, device=device)
    selected = (draws[..., 0] < probability) & mask
    to_mask = selected & (draws[..., 1] < 0.8)
    to_random = selected & (draws[..., 1] >= 0.8) & (draws[..., 1] < 0.9)
    random_ids = torch.randint(
        first_word_id, vocab_size, mask.shape, generator=generator, device=device
    )
    return MaskedTokens(selected, to_mask, to_random, random_ids)


@Model.register("tree_transformer_lm")
class TreeTransformerLanguageModel(Model):
    """
    A masked language model whose encoder is a `tree_transformer`; trees come from its link
    probabilities, with no treebank in training.

    Training: words are masked as in `choose_masked_tokens` (fresh masks every batch), the
    encoder reads them, and a linear layer predicts the masked words (cross-entropy on the
    selected positions only). At evaluation the same, with a fixed seed, gives `perplexity` and
    `masked_accuracy`; the unmasked sentence is encoded once more and its links are turned into
    a tree (`lal_allennlp.syntax.unsupervised.induce_spans`, the authors' top-down procedure
    and thresholds); instances with a gold tree (the `lal_sentences` reader over a treebank)
    are scored by `lal_unlabelled_f1` (`sentence_f1`, `corpus_f1`, ...).

    Registered as a `Model` with name "tree_transformer_lm".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Word embeddings; the words must come from a single-id indexer named `tokens` (the
        random replacement words are looked up through the same embedder).
    encoder : `Seq2SeqEncoder`
        A `tree_transformer`, whose links give the trees; any other encoder (or a
        `tree_transformer` with `constituent_prior: false`) makes a plain masked language
        model (perplexity and masked accuracy only, nothing to parse).
    mask_probability : `float`, optional (default = `1/7`)
        The paper's rate.
    split_threshold, descend_threshold, min_layer : optional (defaults 0.8, 0.7, 2)
        Tree induction's thresholds (see `induce_spans`); the authors' values.
    dropout : `float`, optional (default = `0.1`)
        On the encoder output, before the word prediction layer.
    initial_weights : `str`, optional (default = `None`)
        A local directory of a BERT-style model (e.g. MiniLM) to start from, the Tree
        Transformer paper's "initialised from BERT" experiment: each word's embedding starts as
        the embedding of its first word piece, the `[MASK]` input as BERT's `[MASK]` embedding,
        and the encoder's layers as BERT's (`copy_bert_layers`; a `tree_transformer` of the
        pretrained model's sizes). Read when the model is built, so an archive of such a model
        needs the directory to load as well.
    precision : `str`, optional (default = `"float32"`)
        `"bfloat16"` (or `"float16"` on a GPU): the encoder and the word prediction layer run
        under `torch.autocast` in that dtype, in training and evaluation; `"auto"`: the
        device's native low precision (bfloat16 on a CPU with AVX-512 BF16 or AMX), else
        float32. The loss, the prior's log-space sums and the links read for trees stay in
        float32.
    """

    default_predictor = "lal_unsupervised_parser"

    @property
    def gives_trees(self) -> bool:
        """Whether the encoder is a `tree_transformer` with its constituent prior, whose links
        give the trees."""
        return isinstance(self.encoder, TreeTransformerEncoder) and self.encoder.constituent_prior

    @property
    def capabilities(self) -> ParseCapabilities:
        """Unlabelled trees over the words without punctuation and link probabilities on
        request, with a `tree_transformer`; nothing with another encoder."""
        trees = self.gives_trees
        return ParseCapabilities(
            trees=trees, heads=False, pos_tags=False, explanations=trees, confidences=False,
            kbest=False,
        )

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        mask_probability: float = 1 / 7,
        split_threshold: float = 0.8,
        descend_threshold: float = 0.7,
        min_layer: int = 2,
        dropout: float = 0.1,
        initial_weights: Optional[str] = None,
        precision: str = "float32",
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self.precision = check_precision(precision, "tree_transformer_lm: precision")
        self._autocast_dtypes: Dict[str, Optional[torch.dtype]] = {}
        if not 0.0 < mask_probability < 1.0:
            raise ConfigurationError(
                f"tree_transformer_lm: mask_probability must be in (0, 1), got {mask_probability}"
            )
        self.text_field_embedder = text_field_embedder
        self.encoder = encoder
        self.mask_probability = mask_probability
        self.split_threshold = split_threshold
        self.descend_threshold = descend_threshold
        self.min_layer = min_layer
        self.vocab_size = vocab.get_vocab_size("tokens")
        embedding_dim = text_field_embedder.get_output_dim()
        # The [MASK] input: a learned vector rather than a vocabulary entry, so the vocabulary
        # is the corpus's words only.
        self.mask_embedding = torch.nn.Parameter(torch.randn(embedding_dim) * 0.02)
        self.dropout = torch.nn.Dropout(dropout)
        self.word_scorer = torch.nn.Linear(encoder.get_output_dim(), self.vocab_size)
        self.loss_average = Average()
        self.masked_accuracy = CategoricalAccuracy()
        self.unlabelled_f1 = UnlabelledF1()
        if initial_weights is not None:
            self._start_from(initial_weights, vocab)

    def _start_from(self, model_dir: str, vocab: Vocabulary) -> None:
        """The `initial_weights` of the docstring, from the BERT-style model in `model_dir`."""
        from transformers import AutoModel, AutoTokenizer

        if not isinstance(self.encoder, TreeTransformerEncoder):
            raise ConfigurationError(
                "tree_transformer_lm: initial_weights starts a tree_transformer encoder from a "
                f"pretrained model's layers; this encoder is a {type(self.encoder).__name__}"
            )
        bert = AutoModel.from_pretrained(model_dir)
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        embedding = self.text_field_embedder._token_embedders["tokens"]
        pretrained = bert.get_input_embeddings().weight
        if embedding.weight.size(1) != pretrained.size(1):
            raise ConfigurationError(
                f"tree_transformer_lm: the word embeddings have {embedding.weight.size(1)} "
                f"dimensions, the pretrained model's {pretrained.size(1)}: make them equal"
            )
        special = {vocab._padding_token: tokenizer.pad_token_id, vocab._oov_token: tokenizer.unk_token_id}
        first_pieces = []
        for index in range(self.vocab_size):
            word = vocab.get_token_from_index(index, "tokens")
            pieces = [] if word in special else tokenizer(word, add_special_tokens=False).input_ids
            first_pieces.append(pieces[0] if pieces else special.get(word, tokenizer.unk_token_id))
        with torch.no_grad():
            embedding.weight.copy_(pretrained[torch.tensor(first_pieces)])
            self.mask_embedding.copy_(pretrained[tokenizer.mask_token_id])
        copy_bert_layers(self.encoder, bert)

    def _autocast(self, device: torch.device) -> Any:
        """`torch.autocast` in the model's `precision` on `device`, or a no-op context."""
        if device.type not in self._autocast_dtypes:  # resolved (and warned about) once
            self._autocast_dtypes[device.type] = resolve_autocast_dtype(
                self.precision, device, "tree_transformer_lm"
            )
        dtype = self._autocast_dtypes[device.type]
        return torch.autocast(device.type, dtype=dtype, enabled=dtype is not None)

    def _masked_loss(
        self, tokens: TextFieldTensors, embedded: torch.Tensor, mask: torch.BoolTensor
    ) -> torch.Tensor:
        """The loss of predicting masked words; `embedded` are the words' own embeddings."""
        token_ids = util.get_token_ids_from_text_field_tensors(tokens)
        generator = None
        if not self.training:
            generator = torch.Generator(device=mask.device).manual_seed(EVALUATION_MASK_SEED)
        chosen = choose_masked_tokens(mask, self.vocab_size, self.mask_probability, generator)
        random_embedded = self.text_field_embedder({"tokens": {"tokens": chosen.random_ids}})
        embedded = torch.where(chosen.to_random.unsqueeze(-1), random_embedded, embedded)
        embedded = torch.where(
            chosen.to_mask.unsqueeze(-1), self.mask_embedding.to(embedded.dtype), embedded
        )
        encoded = self.encoder(embedded, mask)
        # Only the selected positions reach the vocabulary-sized layer.
        logits = self.word_scorer(self.dropout(encoded[chosen.selected]))
        targets = token_ids[chosen.selected]
        if targets.numel() == 0:  # nothing drawn in a tiny batch: no loss, no gradient
            return logits.sum() * 0.0
        loss = torch.nn.functional.cross_entropy(logits.float(), targets)
        self.loss_average(loss.item())
        self.masked_accuracy(logits.unsqueeze(0), targets.unsqueeze(0))
        return loss

    def forward(  # type: ignore[override]
        self,
        tokens: TextFieldTensors,
        metadata: Optional[List[Dict[str, Any]]] = None,
        **kwargs: Any,
    ) -> Dict[str, Any]:
        """
        # Returns

        `loss` (when the batch has words to predict); when not training, per sentence `words`
        (from `metadata`), `spans` (the induced brackets `(start, end)`, the whole sentence
        included), `trees` (`nltk.Tree`, constituents labelled `X`) and `link_probabilities`
        (shape `(num_layers, n - 1)`).
        """
        mask = util.get_text_field_mask(tokens)
        with self._autocast(mask.device):
            embedded = self.text_field_embedder(tokens)
            output: Dict[str, Any] = {"loss": self._masked_loss(tokens, embedded, mask)}
            if self.training or not self.gives_trees:
                return output
            _, links = self.encoder.forward_with_links(embedded, mask)
        link_array = links.float().cpu().numpy()
        # Per sentence, shape (num_layers, n - 1): the links between its own words.
        sentence_links = [link_array[b, :, : n - 1] for b, n in enumerate(mask.sum(-1).tolist())]
        spans = [
            induce_spans(
                sentence.tolist(), self.split_threshold, self.descend_threshold, self.min_layer
            )
            for sentence in sentence_links
        ]
        output["spans"] = spans
        output["link_probabilities"] = sentence_links
        words = [entry["words"] for entry in metadata] if metadata else None
        if words is not None:
            output["words"] = words
            output["trees"] = [spans_to_unlabelled_tree(w, s) for w, s in zip(words, spans)]
            # Sentences without a gold tree are skipped by the metric; calling it for every
            # batch keeps distributed workers in step.
            self.unlabelled_f1(spans, [entry.get("gold_tree") for entry in metadata])
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """One-line bracketed `trees`, `spans` as sorted lists, links as lists of floats."""
        output_dict.pop("loss", None)
        if not self.gives_trees:
            raise ConfigurationError(
                f"This tree_transformer_lm has a plain {type(self.encoder).__name__} encoder: a "
                "masked language model without trees, nothing to parse (evaluate it for its "
                "perplexity); trees need a tree_transformer encoder with its constituent prior"
            )
        if "trees" in output_dict:
            output_dict["trees"] = [tree_to_string(tree) for tree in output_dict["trees"]]
        output_dict["spans"] = [sorted(list(s)) for s in output_dict["spans"]]
        output_dict["link_probabilities"] = [
            links.tolist() for links in output_dict["link_probabilities"]
        ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        loss = self.loss_average.get_metric(reset)
        metrics = {
            "perplexity": float(torch.exp(torch.tensor(min(loss, 50.0)))),
            "masked_accuracy": self.masked_accuracy.get_metric(reset),
        }
        if not self.training and self.gives_trees:
            metrics.update(self.unlabelled_f1.get_metric(reset))
        return metrics
