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

Only legal transitions are scored (`structs/arc_standard.py`), so every output is a projective
tree with one root whatever the scores. Training is teacher forcing on the static oracle's
transitions (the `lal_dependencies` reader gives them, skipping non-projective training trees);
the loss is the mean cross-entropy per transition. Decoding is greedy (`beam_size = 1`) or beam
search over whole transition sequences (the paper: beam 8), batched over sentences: every
sentence of `n` words takes exactly `2n` transitions, so the hypotheses of a sentence finish
together and compare by their summed log-probabilities without length normalisation. The beam
always keeps the greedy hypothesis, so beam search never returns a lower model score than
greedy decoding (a plain beam can prune the greedy path and end below it).

The POS embedding, the number of attention layers and the two stack vectors are the paper's
ablations (section 4.3); `attention_layers = 1` with neither vector is the plain seq2seq parser.
"""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch
from allennlp.common.checks import check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Embedding, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util

from lal_allennlp.metrics.attachment_scores import (
    PTB_PUNCTUATION_TAGS,
    PunctuationFreeAttachmentScores,
)
from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.modules.stack_attention import StackAttention
from lal_allennlp.structs.arc_standard import LEFT_ARC, NO_OP, RIGHT_ARC, SHIFT, ArcStandardBatch
from lal_allennlp.structs.confidence import sentence_confidence
from lal_allennlp.syntax import arc_standard
from lal_allennlp.syntax.dependencies import DependencySentence, to_conllu

CONFIDENCE_KEYS = (
    "head_confidences",
    "dependency_label_confidences",
    "tree_probability",
    "sentence_confidence",
)
"""What `confidence` adds to a parse (`StackAttentionParser._confidences`)."""

_KINDS = {arc_standard.SHIFT: SHIFT, arc_standard.LEFT_ARC: LEFT_ARC, arc_standard.RIGHT_ARC: RIGHT_ARC}


class Hypotheses(NamedTuple):
    """
    The decoder's final hypotheses, `beam` per sentence, in sentence-major rows
    (`b * beam + k`; greedy decoding has one per sentence).
    """

    state: ArcStandardBatch
    """The final configurations, one row per hypothesis."""
    scores: torch.Tensor
    """`(batch, beam)`: each hypothesis' summed transition log-probability (`-inf` for a slot
    that never held a hypothesis: fewer derivations than the beam)."""
    transitions: torch.Tensor
    """`(batch * beam, steps)`: the transitions, -1 after each sentence's `2n`."""
    log_probs: torch.Tensor
    """`(batch * beam, steps)`: per step, the log-probability of its transition given the steps
    before (0 after the sentence's `2n`)."""
    kind_log_probs: torch.Tensor
    """`(batch * beam, steps)`: per step, the log-probability of its transition's kind (SHIFT,
    LEFT-ARC or RIGHT-ARC, summed over the labels) given the steps before."""

    def best(self) -> torch.Tensor:
        """`(batch,)`: the row of each sentence's highest-scoring hypothesis."""
        batch, beam = self.scores.shape
        return torch.arange(batch, device=self.scores.device) * beam + self.scores.argmax(dim=-1)


@Model.register("stack_attention_parser")
class StackAttentionParser(Model):
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

    default_predictor = "lal_dependency_parser"
    capabilities = ParseCapabilities(
        trees=False, heads=True, pos_tags=False, explanations=False, confidences=True, kbest=True
    )
    """Heads and labels, with the decoder's step probabilities as confidences (`_confidences`);
    the tags in its output are those given with the words."""

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
        super().__init__(vocab, **kwargs)
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
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
        self.beam_size = beam_size
        self._dropout = torch.nn.Dropout(dropout)

        # The decoder's output vocabulary: every transition of the training data. Each entry's
        # kind (SHIFT / LEFT-ARC / RIGHT-ARC, -1 for padding and unknown entries, never legal)
        # and its label as an index of `head_tags`, the namespace of the gold labels.
        kinds, labels = [], []
        for index, name in vocab.get_index_to_token_vocabulary("transitions").items():
            assert index == len(kinds)
            try:
                action, label = arc_standard.parse_transition_name(name)
            except ValueError:  # @@PADDING@@, @@UNKNOWN@@
                kinds.append(-1)
                labels.append(-1)
                continue
            kinds.append(_KINDS[action])
            labels.append(-1 if label is None else vocab.get_token_index(label, "head_tags"))
        if SHIFT not in kinds:
            raise ValueError(
                "the vocabulary's 'transitions' namespace has no SHIFT: build the vocabulary "
                "from instances of the lal_dependencies reader with transitions=true"
            )
        self.num_transitions = len(kinds)
        self.register_buffer("_transition_kinds", torch.tensor(kinds), persistent=False)
        self.register_buffer("_transition_labels", torch.tensor(labels), persistent=False)

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

        self.punctuation_tags = tuple(punctuation_tags)
        self.attachment_scores = PunctuationFreeAttachmentScores(
            vocab, self.punctuation_tags, "pos"
        )
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

    def _legal_transitions(self, state: ArcStandardBatch) -> torch.Tensor:
        """`(rows, num_transitions)`: which entries of the output vocabulary are legal."""
        kinds = self._transition_kinds
        legal_kinds = state.legal_kinds()
        # shape (rows, num_transitions)
        legal = legal_kinds[:, kinds.clamp(min=0)]
        return legal & (kinds >= 0)

    def _kind_log_probs(self, log_probs: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        """`(rows,)`: the log-probability of the kind of each row's `chosen` transition, the sum
        over the transitions of that kind (all labels of a LEFT-ARC, say) of `log_probs`."""
        kinds = self._transition_kinds
        same = kinds.unsqueeze(0) == kinds[chosen].unsqueeze(1)
        return log_probs.masked_fill(~same, float("-inf")).logsumexp(dim=-1)

    def _apply_transitions(
        self, state: ArcStandardBatch, transitions: torch.Tensor, finished: torch.Tensor
    ) -> None:
        kinds = torch.where(finished, NO_OP, self._transition_kinds[transitions])
        state.apply(kinds, self._transition_labels[transitions])

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
        keys = self.attention.project_keys(memory)
        state = ArcStandardBatch(lengths, memory.size(1) - 1)
        hidden = self._initial_hidden(memory, mask)
        previous = transitions.new_full((transitions.size(0),), self.num_transitions)
        total = memory.new_zeros(())
        for step in range(min(transitions.size(1), 2 * int(lengths.max()))):
            log_probs, hidden = self._step(memory, keys, mask, state, hidden, previous)
            gold = transitions[:, step]
            active = gold >= 0
            gold = gold.clamp(min=0)
            total = total - log_probs.gather(1, gold.unsqueeze(1)).squeeze(1)[active].sum()
            self._apply_transitions(state, gold, ~active)
            previous = torch.where(active, gold, previous)
        return total / (transitions >= 0).sum()

    # ------------------------------------------------------------------------------------------
    # Decoding
    # ------------------------------------------------------------------------------------------

    def decode_greedy(
        self, memory: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor
    ) -> Hypotheses:
        """The most probable transition at every step: one hypothesis per sentence."""
        keys = self.attention.project_keys(memory)
        state = ArcStandardBatch(lengths, memory.size(1) - 1)
        hidden = self._initial_hidden(memory, mask)
        previous = lengths.new_full((lengths.size(0),), self.num_transitions)
        steps = 2 * int(lengths.max())
        history = lengths.new_full((lengths.size(0), steps), -1)
        step_log_probs = memory.new_zeros(lengths.size(0), steps)
        kind_log_probs = memory.new_zeros(lengths.size(0), steps)
        for step in range(steps):
            log_probs, hidden = self._step(memory, keys, mask, state, hidden, previous)
            best = log_probs.argmax(dim=-1)
            finished = state.finished
            chosen = log_probs.gather(1, best.unsqueeze(1)).squeeze(1)
            step_log_probs[:, step] = torch.where(finished, 0.0, chosen)
            kind_log_probs[:, step] = torch.where(
                finished, 0.0, self._kind_log_probs(log_probs, best)
            )
            self._apply_transitions(state, best, finished)
            previous = torch.where(finished, previous, best)
            history[:, step] = torch.where(finished, -1, best)
        scores = step_log_probs.sum(dim=1, keepdim=True)
        return Hypotheses(state, scores, history, step_log_probs, kind_log_probs)

    def decode_beam(
        self, memory: torch.Tensor, mask: torch.Tensor, lengths: torch.Tensor, beam_size: int
    ) -> Hypotheses:
        """
        Beam search over transition sequences: the final `beam_size` hypotheses of each
        sentence, the greedy hypothesis always among them.
        """
        batch, beam = lengths.size(0), beam_size
        transitions = self.num_transitions
        # One row per hypothesis, sentence-major: row b * beam + k.
        memory = memory.repeat_interleave(beam, dim=0)
        mask = mask.repeat_interleave(beam, dim=0)
        keys = self.attention.project_keys(memory)
        state = ArcStandardBatch(lengths.repeat_interleave(beam), memory.size(1) - 1)
        hidden = self._initial_hidden(memory, mask)
        previous = lengths.new_full((batch * beam,), transitions)
        # Only the first hypothesis is alive at the start (the others would repeat it).
        beam_scores = memory.new_full((batch, beam), float("-inf"))
        beam_scores[:, 0] = 0.0
        greedy_slot = lengths.new_zeros(batch)
        sentences = torch.arange(batch, device=lengths.device)
        # What a finished hypothesis may do: the no-op, stored in column 0, at no cost.
        stay = memory.new_full((transitions,), float("-inf"))
        stay[0] = 0.0
        steps = 2 * int(lengths.max())
        history = lengths.new_full((batch * beam, steps), -1)
        step_log_probs = memory.new_zeros(batch * beam, steps)
        kind_log_probs = memory.new_zeros(batch * beam, steps)
        for step in range(steps):
            log_probs, hidden = self._step(memory, keys, mask, state, hidden, previous)
            finished = state.finished.view(batch, beam, 1)
            log_probs = torch.where(finished, stay, log_probs.view(batch, beam, transitions))
            # shape (batch, beam * transitions)
            candidates = (beam_scores.unsqueeze(-1) + log_probs).view(batch, -1)
            top_scores, top_index = candidates.topk(beam, dim=-1)
            # A dead pick (score -inf: fewer live candidates than the beam) copies the best
            # pick, so that its transition is legal; its score keeps it from ever winning.
            dead = torch.isinf(top_scores)
            top_index = torch.where(dead, top_index[:, :1], top_index)
            # The greedy hypothesis' best continuation stays in the beam, in the last slot if
            # it did not make it.
            greedy_index = greedy_slot * transitions + log_probs[sentences, greedy_slot].argmax(-1)
            kept = (top_index == greedy_index.unsqueeze(1)) & ~dead
            missing = ~kept.any(dim=-1)
            top_index[missing, -1] = greedy_index[missing]
            top_scores[missing, -1] = candidates[missing, greedy_index[missing]]
            kept[missing, -1] = True
            greedy_slot = kept.long().argmax(dim=-1)

            rows = (sentences.unsqueeze(1) * beam + top_index // transitions).view(-1)
            chosen = (top_index % transitions).view(-1)
            state.select(rows)
            hidden = [layer_hidden.index_select(0, rows) for layer_hidden in hidden]
            previous = previous.index_select(0, rows)
            history = history.index_select(0, rows)
            step_log_probs = step_log_probs.index_select(0, rows)
            kind_log_probs = kind_log_probs.index_select(0, rows)
            done = state.finished
            parent = log_probs.view(batch * beam, transitions).index_select(0, rows)
            picked = parent.gather(1, chosen.unsqueeze(1)).squeeze(1)
            step_log_probs[:, step] = torch.where(done, 0.0, picked)
            kind_log_probs[:, step] = torch.where(
                done, 0.0, self._kind_log_probs(parent, chosen)
            )
            self._apply_transitions(state, chosen, done)
            previous = torch.where(done, previous, chosen)
            history[:, step] = torch.where(done, -1, chosen)
            beam_scores = top_scores
        return Hypotheses(state, beam_scores, history, step_log_probs, kind_log_probs)

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
        decoded trees too: `heads` and `head_tags`, `(batch, words)` (head 0 the root,
        padding -1), `scores` (each tree's summed transition log-probability), the decoded
        `transitions` `(batch, steps)` (-1 after each sentence's), and UAS/LAS when the gold
        heads are given.
        """
        memory, mask = self._encode(words, pos_tags)
        lengths = mask.sum(dim=1) - 1
        output: Dict[str, Any] = {"metadata": metadata}
        if transitions is not None:
            output["loss"] = self._loss(memory, mask, lengths, transitions)
            if self.training:
                return output
        hypotheses = self.decode(memory, mask, lengths, self.beam_size)
        best = hypotheses.best()
        output["heads"] = hypotheses.state.heads[best, 1:]
        output["head_tags"] = hypotheses.state.labels[best, 1:]
        output["scores"] = hypotheses.scores.view(-1)[best]
        output["transitions"] = hypotheses.transitions[best]
        output["step_log_probs"] = hypotheses.log_probs[best]
        output["kind_log_probs"] = hypotheses.kind_log_probs[best]
        # The request's `"kbest"` (the predictor checks it), in each sentence's metadata.
        wanted = [int(m.get("kbest", 1)) for m in metadata]
        if max(wanted) > 1:
            output["kbest"] = self._kbest(hypotheses, wanted)
        if head_indices is not None and head_tags is not None:
            self.attachment_scores(
                output["heads"], output["head_tags"], head_indices, head_tags, mask[:, 1:], pos_tags
            )
        return output

    def _kbest(self, hypotheses: Hypotheses, wanted: List[int]) -> List[Optional[List[Dict]]]:
        """
        Per sentence that asked for `kbest` (>= 2), the distinct trees of the final beam, best
        first, at most `kbest` of them: `heads`, `dependency_labels`, `score` (the summed
        log-probability of the best derivation of that tree in the beam) and `probability`
        (its exponential). The beam holds `beam_size` derivations, so a sentence gets at most
        `beam_size` trees (fewer when two derivations build the same tree); widen the beam
        (`model.beam_size`) for more.
        """
        batch, beam = hypotheses.scores.shape
        scores = hypotheses.scores.tolist()
        heads, labels = hypotheses.state.heads.tolist(), hypotheses.state.labels.tolist()
        lengths = hypotheses.state.lengths.tolist()
        result: List[Optional[List[Dict]]] = []
        for b, k in enumerate(wanted):
            if k < 2:
                result.append(None)
                continue
            trees: List[Dict[str, Any]] = []
            seen = set()
            for slot in sorted(range(beam), key=lambda slot: -scores[b][slot]):
                row, score = b * beam + slot, scores[b][slot]
                if score == float("-inf") or len(trees) == k:
                    break
                n = lengths[row]
                tree = (tuple(heads[row][1 : n + 1]), tuple(labels[row][1 : n + 1]))
                if tree in seen:
                    continue
                seen.add(tree)
                trees.append(
                    {
                        "heads": list(tree[0]),
                        "dependency_labels": [
                            self.vocab.get_token_from_index(label, "head_tags") for label in tree[1]
                        ],
                        "score": score,
                        "probability": float(np.exp(score)),
                    }
                )
            result.append(trees)
        return result

    @staticmethod
    def _confidences(
        transitions: List[str], step_log_probs: List[float], kind_log_probs: List[float]
    ) -> Dict[str, Any]:
        """
        A decoded sentence's confidences, from its transitions and their step probabilities
        (`Hypotheses`). They are the decoder's local probabilities, each given the decoded
        steps before it, not marginals over trees:

        - `head_confidences`: per word, the probability of the arc that attached it at the step
          that did (LEFT-ARC or RIGHT-ARC, summed over the labels): how sure the decoder was,
          there, to make this word a dependent of that neighbour on the stack rather than do
          something else;
        - `dependency_label_confidences`: per word, the probability of its label given that
          arc (the labelled transition's probability over its kind's);
        - `tree_probability`: the probability of the whole transition sequence, the product of
          every step (shifts too). A projective tree may have several arc-standard
          derivations, so this is a lower bound on the tree's probability; training puts the
          mass on the static oracle's derivation, which makes it close to it;
        - `sentence_confidence`: the mean of the head and label confidences.
        """
        length = len(transitions) // 2
        configuration = arc_standard.Configuration(length)
        heads: List[float] = [0.0] * length
        labels: List[float] = [0.0] * length
        for name, log_p, kind_log_p in zip(transitions, step_log_probs, kind_log_probs):
            action, label = arc_standard.parse_transition_name(name)
            if action != arc_standard.SHIFT:
                stack = configuration.stack
                dependent = stack[-2] if action == arc_standard.LEFT_ARC else stack[-1]
                heads[dependent - 1] = float(np.exp(kind_log_p))
                labels[dependent - 1] = float(np.exp(log_p - kind_log_p))
            configuration.apply(action, label)
        log_p = float(sum(step_log_probs))
        return {
            "head_confidences": heads,
            "dependency_label_confidences": labels,
            "tree_probability": float(np.exp(log_p)),
            "sentence_confidence": sentence_confidence(heads + labels, log_p),
        }

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """Per sentence: `words`, `pos`, `heads` (1-based, 0 the root), `dependency_labels`,
        `conllu`, the decoded `transitions` (names) and the tree's model `score`; for the
        sentences whose metadata has `confidence` true, the keys of `_confidences` (`None` for
        the others)."""
        words, tags, heads, labels, conllu, transitions = [], [], [], [], [], []
        confidences: Dict[str, List[Any]] = {key: [] for key in CONFIDENCE_KEYS}
        for row, meta in enumerate(output_dict["metadata"]):
            sentence_words = list(meta["words"])
            length = len(sentence_words)
            sentence_heads = output_dict["heads"][row, :length].tolist()
            sentence_labels = [
                self.vocab.get_token_from_index(int(label), "head_tags")
                for label in output_dict["head_tags"][row, :length].tolist()
            ]
            sentence_tags = list(meta.get("pos") or ["_"] * length)
            names = [
                self.vocab.get_token_from_index(int(index), "transitions")
                for index in output_dict["transitions"][row, : 2 * length].tolist()
            ]
            transitions.append(names)
            words.append(sentence_words)
            tags.append(sentence_tags)
            heads.append(sentence_heads)
            labels.append(sentence_labels)
            conllu.append(
                to_conllu(
                    DependencySentence(
                        sentence_words, sentence_tags, sentence_heads, sentence_labels
                    )
                )
            )
            given = {}
            if meta.get("confidence", False):
                given = self._confidences(
                    names,
                    output_dict["step_log_probs"][row, : 2 * length].tolist(),
                    output_dict["kind_log_probs"][row, : 2 * length].tolist(),
                )
            for key, values in confidences.items():
                values.append(given.get(key))
        output_dict["words"] = words
        output_dict["pos"] = tags
        output_dict["heads"] = heads
        output_dict["dependency_labels"] = labels
        output_dict["conllu"] = conllu
        output_dict["transitions"] = transitions
        output_dict["score"] = output_dict.pop("scores").tolist()
        if any(meta.get("confidence", False) for meta in output_dict["metadata"]):
            output_dict.update(confidences)
        for key in ("head_tags", "step_log_probs", "kind_log_probs"):
            del output_dict[key]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        # Trees are decoded only outside training: no UAS/LAS of 0 in the training progress bar.
        if self.training and self.attachment_scores._total_words == 0:
            return {}
        return self.attachment_scores.get_metric(reset)
