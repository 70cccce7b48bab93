"""
The stack-based multi-layer attention parser (Zhang et al. 2017, "Stack-based Multi-layer
Attention for Transition-based Dependency Parsing"): dependency parsing as sequence-to-sequence
learning, from the words to their arc-standard transitions.

words (+ POS) -> any `Seq2SeqEncoder` -> `h_1..h_n`, with a learned root vector `h_0` in front
-> a GRU decoder that emits one transition per step (`SHIFT`, `LEFT-ARC(l)`, `RIGHT-ARC(l)`):

    c_i = StackAttention(z_{i-1}, h, s, r)         (section 3.2, `modules/stack_attention.py`)
    z_i = GRU([y_{i-1}; c_i], z_{i-1})              (section 2, the decoder)
    p(y_i | y_<i, x) = softmax over the legal transitions of g(y_{i-1}, z_i, c_i)

where `s` / `r` mark the words pushed onto / popped from the stack by `y_<i`. The root vector
is never popped, so the attention always has a word to look at; it also lets the attention
point at the root when the root arc is due.

Training is teacher forcing on the static oracle's transitions (the `lal_dependencies` reader
gives them, skipping non-projective training trees); the loss is the mean cross-entropy per
transition. Decoding (greedy or beam search, the paper: beam 8), the legal transitions and the
outputs are those of `transition_parser_base`, which steps this model's decoder through a
`StackAttentionScorer`; `stack_attention_ensemble` decodes several of these models by the same
loop.

The POS embedding, the number of attention layers and the two stack vectors are the paper's
ablations (section 4.3); `attention_layers = 1` with neither vector is the plain seq2seq parser.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from allennlp.common.checks import check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Embedding, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util

from lal_allennlp.metrics.attachment_scores import PTB_PUNCTUATION_TAGS
from lal_allennlp.models.transition_parser_base import (
    Hypotheses,
    TransitionParserBase,
    TransitionScorer,
)
from lal_allennlp.modules.stack_attention import StackAttention
from lal_allennlp.structs.arc_standard import ArcStandardBatch


@Model.register("stack_attention_parser")
class StackAttentionParser(TransitionParserBase):
    """
    Registered as a `Model` with name "stack_attention_parser". Reads the instances of the
    `lal_dependencies` reader: `words`, `pos_tags` (namespace `pos`), `head_indices`, `head_tags`
    (namespace `head_tags`) and, for training, `transitions` (namespace `transitions`).

    # Parameters

    vocab : `Vocabulary`
        Needs `transitions` (the decoder's outputs, from the training data) and `head_tags`.
    text_field_embedder : `TextFieldEmbedder`
        The words (the paper: 300-d GloVe vectors).
    encoder : `Seq2SeqEncoder`
        Over the words and POS embeddings (the paper: a 3-layer bidirectional GRU, 500 units).
    pos_tag_embedding : `Embedding`, optional (default = `None`)
        POS embeddings concatenated to the words (the paper: 32-d); `None` is the "- POS"
        ablation. The `pos_tags` field is still read, to leave punctuation out of UAS/LAS.
    decoder_hidden_dim : `int`, optional (default = `500`)
        Size of the decoder GRU's state `z`.
    decoder_layers : `int`, optional (default = `3`)
        Stacked GRU cells of the decoder; the top one's state is `z`.
    transition_embedding_dim : `int`, optional (default = `32`)
        Embedding of the previous transition `y_{i-1}` (the paper's label embeddings: 32-d).
    attention_dim : `int`, optional (default = `None`)
        Scoring space of the attention; `decoder_hidden_dim` if `None`.
    attention_layers : `int`, optional (default = `3`)
        Layers of the multi-layer attention (the paper's best: 3; its ablation: 1 to 4).
    use_pushed : `bool`, optional (default = `True`)
        Whether the attention sees `s` (words pushed onto the stack).
    use_popped : `bool`, optional (default = `True`)
        Whether popped words (`r`) get no attention.
    dropout : `float`, optional (default = `0.2`)
        On the encoder's input and output, between decoder layers and before the output layer.
    beam_size : `int`, optional (default = `8`)
        Beam of the decoder at evaluation and prediction; 1 is greedy decoding.
    punctuation_tags : `Sequence[str]`, optional (default = `` `` '' , . : ``)
        Gold POS tags of the words left out of UAS/LAS (`["PUNCT"]` with UD's UPOS tags).
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        pos_tag_embedding: Optional[Embedding] = None,
        decoder_hidden_dim: int = 500,
        decoder_layers: int = 3,
        transition_embedding_dim: int = 32,
        attention_dim: Optional[int] = None,
        attention_layers: int = 3,
        use_pushed: bool = True,
        use_popped: bool = True,
        dropout: float = 0.2,
        beam_size: int = 8,
        punctuation_tags: Sequence[str] = PTB_PUNCTUATION_TAGS,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, beam_size, punctuation_tags, **kwargs)
        self.text_field_embedder = text_field_embedder
        self.pos_tag_embedding = pos_tag_embedding
        self.encoder = encoder
        input_dim = text_field_embedder.get_output_dim()
        if pos_tag_embedding is not None:
            input_dim += pos_tag_embedding.get_output_dim()
        check_dimensions_match(
            input_dim, encoder.get_input_dim(), "word (+ POS) embedding dim", "encoder input dim"
        )
        encoder_dim = encoder.get_output_dim()
        self._dropout = torch.nn.Dropout(dropout)

        self.root_vector = torch.nn.Parameter(torch.empty(encoder_dim))
        torch.nn.init.normal_(self.root_vector, std=encoder_dim**-0.5)
        # The last embedding row stands for "no previous transition" at the first step.
        self.transition_embedding = torch.nn.Embedding(
            self.num_transitions + 1, transition_embedding_dim
        )
        self.initial_state = torch.nn.Linear(encoder_dim, decoder_hidden_dim * decoder_layers)
        self.attention = StackAttention(
            decoder_hidden_dim,
            encoder_dim,
            attention_dim or decoder_hidden_dim,
            attention_layers,
            use_pushed,
            use_popped,
        )
        self.decoder_cells = torch.nn.ModuleList(
            torch.nn.GRUCell(
                transition_embedding_dim + encoder_dim if layer == 0 else decoder_hidden_dim,
                decoder_hidden_dim,
            )
            for layer in range(decoder_layers)
        )
        # g(y_{i-1}, z_i, c_i): one tanh layer, then a score per transition.
        self.output_hidden = torch.nn.Linear(
            transition_embedding_dim + decoder_hidden_dim + encoder_dim, decoder_hidden_dim
        )
        self.output_layer = torch.nn.Linear(decoder_hidden_dim, self.num_transitions)

        initializer(self)

    # ------------------------------------------------------------------------------------------
    # Encoder and one decoder step
    # ------------------------------------------------------------------------------------------

    def _encode(
        self, words: TextFieldTensors, pos_tags: Optional[torch.Tensor]
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """The encoded words with the root vector in front, `(batch, 1 + words, dim)`, and
        their mask."""
        mask = util.get_text_field_mask(words)
        embedded = self.text_field_embedder(words)
        if self.pos_tag_embedding is not None:
            if pos_tags is None:
                raise ValueError(
                    "this model reads POS tags: give `tags` with the words (or train it "
                    "without pos_tag_embedding)"
                )
            embedded = torch.cat([embedded, self.pos_tag_embedding(pos_tags)], dim=-1)
        encoded = self._dropout(self.encoder(self._dropout(embedded), mask))
        root = self.root_vector.expand(encoded.size(0), 1, -1)
        root_mask = mask.new_ones(mask.size(0), 1)
        return torch.cat([root, encoded], dim=1), torch.cat([root_mask, mask], dim=1)

    def _initial_hidden(self, memory: torch.Tensor, mask: torch.Tensor) -> List[torch.Tensor]:
        """`z_0` of each decoder layer from the mean of the encoded words."""
        words = mask.clone()
        words[:, 0] = False
        mean = util.masked_mean(memory, words.unsqueeze(-1), dim=1)
        return list(torch.tanh(self.initial_state(mean)).chunk(len(self.decoder_cells), dim=-1))

    def _step(
        self,
        memory: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        state: ArcStandardBatch,
        hidden: List[torch.Tensor],
        previous: torch.Tensor,
    ) -> Tuple[torch.Tensor, List[torch.Tensor]]:
        """
        One decoder step for every row: the log-probabilities of the transitions
        `(rows, num_transitions)`, `-inf` for the illegal ones (a finished row, which has no
        legal transition, gets a uniform distribution that nothing reads), and the new states.
        """
        context, _ = self.attention(hidden[-1], keys, memory, mask, state.pushed, state.popped)
        previous_embedded = self.transition_embedding(previous)
        layer_input = torch.cat([previous_embedded, context], dim=-1)
        new_hidden = []
        for cell, layer_hidden in zip(self.decoder_cells, hidden):
            layer_hidden = cell(layer_input, layer_hidden)
            new_hidden.append(layer_hidden)
            layer_input = self._dropout(layer_hidden)
        features = torch.tanh(
            self.output_hidden(torch.cat([previous_embedded, layer_input, context], dim=-1))
        )
        scores = self.output_layer(self._dropout(features))
        legal = self._legal_transitions(state)
        legal = legal | ~legal.any(dim=-1, keepdim=True)
        return torch.log_softmax(scores.masked_fill(~legal, float("-inf")), dim=-1), new_hidden

    # ------------------------------------------------------------------------------------------
    # Training: teacher forcing on the oracle's transitions
    # ------------------------------------------------------------------------------------------

    def _loss(
        self,
        memory: torch.Tensor,
        mask: torch.Tensor,
        lengths: torch.Tensor,
        transitions: torch.Tensor,
    ) -> torch.Tensor:
        """Mean cross-entropy per gold transition (`transitions`: `(batch, steps)`, -1 after
        each sentence's `2n`). A sentence with a transition the vocabulary lacks (only
        possible outside the training data) is left out."""
        known = (transitions < 0) | (self._transition_kinds[transitions.clamp(min=0)] >= 0)
        rows = known.all(dim=1).nonzero().squeeze(1)
        if rows.numel() < transitions.size(0):
            memory, mask = memory[rows], mask[rows]
            lengths, transitions = lengths[rows], transitions[rows]
        if rows.numel() == 0:
            return memory.sum() * 0.0  # zero, and still a loss that backward() accepts
        scorer = self.scorer(memory, mask, 1)
        state = ArcStandardBatch(lengths, memory.size(1) - 1)
        previous = transitions.new_full((transitions.size(0),), self.num_transitions)
        total = memory.new_zeros(())
        for step in range(min(transitions.size(1), 2 * int(lengths.max()))):
            log_probs = scorer.step(state, previous)
            gold = transitions[:, step]
            active = gold >= 0
            gold = gold.clamp(min=0)
            total = total - log_probs.gather(1, gold.unsqueeze(1)).squeeze(1)[active].sum()
            self._apply_transitions(state, gold, ~active)
            previous = torch.where(active, gold, previous)
        return total / (transitions >= 0).sum()

    # ------------------------------------------------------------------------------------------
    # Decoding, by the loops of `TransitionParserBase`
    # ------------------------------------------------------------------------------------------

    def scorer(
        self, memory: torch.Tensor, mask: torch.Tensor, rows_per_sentence: int
    ) -> "StackAttentionScorer":
        """This model's decoder over the encoded batch `memory` `(batch, 1 + words, dim)` (and
        its `mask`), with `rows_per_sentence` rows (hypotheses) per sentence."""
        return StackAttentionScorer(self, memory, mask, rows_per_sentence)

    def decode_greedy(
        self, memory: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor
    ) -> Hypotheses:
        """The most probable transition at every step: one hypothesis per sentence."""
        return self.greedy_search(self.scorer(memory, mask, 1), lengths, memory.size(1) - 1)

    def decode_beam(
        self, memory: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor, beam_size: int
    ) -> Hypotheses:
        """
        Beam search over transition sequences: the final `beam_size` hypotheses of each
        sentence, the greedy hypothesis always among them.
        """
        scorer = self.scorer(memory, mask, beam_size)
        return self.beam_search(scorer, lengths, memory.size(1) - 1, beam_size)

    def decode(
        self, memory: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor, beam_size: int
    ) -> Hypotheses:
        if beam_size == 1:
            return self.decode_greedy(memory, mask, lengths)
        return self.decode_beam(memory, mask, lengths, beam_size)

    # ------------------------------------------------------------------------------------------
    # Model API
    # ------------------------------------------------------------------------------------------

    def forward(  # type: ignore[override]
        self,
        words: TextFieldTensors,
        metadata: List[Dict[str, Any]],
        pos_tags: Optional[torch.LongTensor] = None,
        head_tags: Optional[torch.LongTensor] = None,
        head_indices: Optional[torch.LongTensor] = None,
        transitions: Optional[torch.LongTensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        Training (`transitions` given, model in training mode): the loss only. Otherwise the
        decoded trees too (`TransitionParserBase._outputs`), and UAS/LAS when the gold heads
        are given.
        """
        memory, mask = self._encode(words, pos_tags)
        lengths = mask.sum(dim=1) - 1
        loss = None
        if transitions is not None:
            loss = self._loss(memory, mask, lengths, transitions)
            if self.training:
                return {"metadata": metadata, "loss": loss}
        hypotheses = self.decode(memory, mask, lengths, self.beam_size)
        output = self._outputs(hypotheses, metadata, mask[:, 1:], pos_tags, head_indices, head_tags)
        if loss is not None:
            output["loss"] = loss
        return output


class StackAttentionScorer(TransitionScorer):
    """
    A `StackAttentionParser`'s decoder over one batch, for the decoding loops: its step is the
    model's `_step`, and it keeps each row's decoder state `z` (the attention's keys and the
    encoded words are those of the row's sentence).

    # Parameters

    model : `StackAttentionParser`
    memory : `torch.Tensor`
        `(batch, 1 + words, dim)`, the encoded words with the root in front (`_encode`).
    mask : `torch.BoolTensor`
        `(batch, 1 + words)`.
    rows_per_sentence : `int`
        Hypotheses per sentence: 1 for greedy decoding, the beam for beam search.
    """

    def __init__(
        self,
        model: StackAttentionParser,
        memory: torch.Tensor,
        mask: torch.Tensor,
        rows_per_sentence: int,
    ) -> None:
        super().__init__(memory.dtype)
        if rows_per_sentence > 1:
            # One row per hypothesis, sentence-major: row b * rows_per_sentence + k.
            memory = memory.repeat_interleave(rows_per_sentence, dim=0)
            mask = mask.repeat_interleave(rows_per_sentence, dim=0)
        self.model = model
        self.memory, self.mask = memory, mask
        self.keys = model.attention.project_keys(memory)
        self.hidden = model._initial_hidden(memory, mask)

    def step(self, state: ArcStandardBatch, previous: torch.Tensor) -> torch.Tensor:
        log_probs, self.hidden = self.model._step(
            self.memory, self.keys, self.mask, state, self.hidden, previous
        )
        return log_probs

    def select(self, rows: torch.Tensor) -> None:
        # The rows of a sentence share its words: only the decoder state moves.
        self.hidden = [layer_hidden.index_select(0, rows) for layer_hidden in self.hidden]
