"""
What the arc-standard dependency parsers share: the stack attention parser
(`stack_attention_parser`) and its ensemble (`stack_attention_ensemble`). That is the decoder's
output vocabulary (one entry per transition of the training data), greedy decoding and beam
search over transition sequences, and the outputs built from the decoded transitions (heads,
labels, scores, confidences, the k best trees, UAS/LAS).

The decoding loops never see a model's decoder state: they step a `TransitionScorer`, which
gives the log-probabilities of every row's next transition and advances its own state. A single
parser's scorer is its own GRU decoder; the ensemble's is the log of its members' averaged
probabilities. So the single model and the ensemble decode by the same loop with the same
semantics.

Only legal transitions are scored (`structs/arc_standard.py`), so every output is a projective
tree with one root whatever the scores. Decoding is greedy (`beam_size = 1`) or beam search
over whole transition sequences, batched over sentences: every sentence of `n` words takes
exactly `2n` transitions, so the hypotheses of a sentence finish together and compare by their
summed log-probabilities without length normalisation. The beam always keeps the greedy
hypothesis, so beam search never returns a lower model score than greedy decoding (a plain beam
can prune the greedy path and end below it).
"""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import numpy as np
import torch
from allennlp.data import Vocabulary
from allennlp.models.model import Model

from lal_allennlp.metrics.attachment_scores import PunctuationFreeAttachmentScores
from lal_allennlp.models.capabilities import ParseCapabilities
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
"""What `confidence` adds to a parse (`TransitionParserBase._confidences`)."""

_KINDS = {
    arc_standard.SHIFT: SHIFT,
    arc_standard.LEFT_ARC: LEFT_ARC,
    arc_standard.RIGHT_ARC: RIGHT_ARC,
}


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


class _Steps:
    """What a decoding loop records per hypothesis row and step (the fields of `Hypotheses`
    but the state and scores): the transitions (-1 once the row's sentence is done), their
    log-probabilities and their kinds' (0 once done)."""

    def __init__(self, rows: int, steps: int, dtype: torch.dtype, device: torch.device) -> None:
        self.steps = steps
        self.transitions = torch.full((rows, steps), -1, dtype=torch.long, device=device)
        self.log_probs = torch.zeros(rows, steps, dtype=dtype, device=device)
        self.kind_log_probs = torch.zeros(rows, steps, dtype=dtype, device=device)

    def select(self, rows: torch.Tensor) -> None:
        """Keeps the records of `rows` (beam search continuing from the hypotheses it kept)."""
        self.transitions = self.transitions.index_select(0, rows)
        self.log_probs = self.log_probs.index_select(0, rows)
        self.kind_log_probs = self.kind_log_probs.index_select(0, rows)

    def hypotheses(self, state: ArcStandardBatch, scores: torch.Tensor) -> Hypotheses:
        return Hypotheses(state, scores, self.transitions, self.log_probs, self.kind_log_probs)


class TransitionScorer:
    """
    One batch's source of transition log-probabilities, which the decoding loops
    (`TransitionParserBase.greedy_search` and `beam_search`) step: the rows are the loop's
    hypotheses, sentence-major (`b * rows_per_sentence + k`), and the scorer keeps whatever
    decoder state each row needs.

    # Parameters

    dtype : `torch.dtype`
        Of the log-probabilities it gives (the loops record them in this type).
    """

    def __init__(self, dtype: torch.dtype) -> None:
        self.dtype = dtype

    def step(self, state: ArcStandardBatch, previous: torch.Tensor) -> torch.Tensor:
        """
        The log-probabilities of each row's next transition, `(rows, num_transitions)`, `-inf`
        for the illegal ones (a finished row, which has no legal transition, gets a
        distribution that nothing reads), given its configuration `state` and its previous
        transition `previous` `(rows,)` (`num_transitions` at the first step); advances the
        scorer's own state by one step.
        """
        raise NotImplementedError

    def select(self, rows: torch.Tensor) -> None:
        """Keeps the states of `rows` `(rows,)` (repeats allowed; each of a row of the same
        sentence), in that order: beam search continuing from the hypotheses it kept."""
        raise NotImplementedError


class TransitionParserBase(Model):
    """
    An arc-standard dependency parser decoding with a `TransitionScorer`; the subclasses
    encode the words and give the scorer. Reads the instances of the `lal_dependencies`
    reader: `words`, `pos_tags` (namespace `pos`), `head_indices`, `head_tags` (namespace
    `head_tags`), `transitions` (namespace `transitions`).

    # Parameters

    vocab : `Vocabulary`
        Needs `transitions` (the decoder's outputs, from the training data) and `head_tags`.
    beam_size : `int`
        Beam of the decoder at evaluation and prediction; 1 is greedy decoding.
    punctuation_tags : `Sequence[str]`
        Gold POS tags of the words left out of UAS/LAS.
    """

    default_predictor = "lal_dependency_parser"
    capabilities = ParseCapabilities(
        trees=False, heads=True, pos_tags=False, explanations=False, confidences=True, kbest=True
    )
    """Heads and labels, with the decoder's step probabilities as confidences (`_confidences`)
    and the beam's trees as the k best; the tags in its output are those given with the
    words."""

    def __init__(
        self,
        vocab: Vocabulary,
        beam_size: int,
        punctuation_tags: Sequence[str],
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {beam_size}")
        self.beam_size = beam_size
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
        self.punctuation_tags = tuple(punctuation_tags)
        self.attachment_scores = PunctuationFreeAttachmentScores(
            vocab, self.punctuation_tags, "pos"
        )

    # ------------------------------------------------------------------------------------------
    # The output vocabulary
    # ------------------------------------------------------------------------------------------

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
    # Decoding
    # ------------------------------------------------------------------------------------------

    def greedy_search(
        self, scorer: TransitionScorer, lengths: torch.Tensor, max_length: int
    ) -> Hypotheses:
        """The most probable transition at every step: one hypothesis per sentence. `scorer`
        has one row per sentence; `lengths` `(batch,)` are the sentences' numbers of words and
        `max_length` the width of the word axis (without the root)."""
        state = ArcStandardBatch(lengths, max_length)
        previous = lengths.new_full((lengths.size(0),), self.num_transitions)
        record = _Steps(lengths.size(0), 2 * int(lengths.max()), scorer.dtype, lengths.device)
        for step in range(record.steps):
            log_probs = scorer.step(state, previous)
            best = log_probs.argmax(dim=-1)
            previous = self._take(state, record, step, log_probs, best, previous)
        scores = record.log_probs.sum(dim=1, keepdim=True)
        return record.hypotheses(state, scores)

    def beam_search(
        self, scorer: TransitionScorer, lengths: torch.Tensor, max_length: int, beam_size: int
    ) -> Hypotheses:
        """
        Beam search over transition sequences: the final `beam_size` hypotheses of each
        sentence, the greedy hypothesis always among them. `scorer` has `beam_size` rows per
        sentence (`b * beam_size + k`); `lengths` and `max_length` as for `greedy_search`.
        """
        batch, beam = lengths.size(0), beam_size
        transitions = self.num_transitions
        dtype, device = scorer.dtype, lengths.device
        state = ArcStandardBatch(lengths.repeat_interleave(beam), max_length)
        previous = lengths.new_full((batch * beam,), transitions)
        # Only the first hypothesis is alive at the start (the others would repeat it).
        beam_scores = torch.full((batch, beam), float("-inf"), dtype=dtype, device=device)
        beam_scores[:, 0] = 0.0
        greedy_slot = lengths.new_zeros(batch)
        sentences = torch.arange(batch, device=device)
        # What a finished hypothesis may do: the no-op, stored in column 0, at no cost.
        stay = torch.full((transitions,), float("-inf"), dtype=dtype, device=device)
        stay[0] = 0.0
        record = _Steps(batch * beam, 2 * int(lengths.max()), dtype, device)
        for step in range(record.steps):
            log_probs = scorer.step(state, previous)
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
            scorer.select(rows)
            record.select(rows)
            parent = log_probs.view(batch * beam, transitions).index_select(0, rows)
            previous = previous.index_select(0, rows)
            previous = self._take(state, record, step, parent, chosen, previous)
            beam_scores = top_scores
        return record.hypotheses(state, beam_scores)

    def _take(
        self,
        state: ArcStandardBatch,
        record: "_Steps",
        step: int,
        log_probs: torch.Tensor,
        chosen: torch.Tensor,
        previous: torch.Tensor,
    ) -> torch.Tensor:
        """Applies each row's `chosen` transition `(rows,)` to `state` and records it, with its
        log-probability and its kind's under `log_probs` `(rows, num_transitions)`, at `step`;
        finished rows are left as they are. Returns each row's previous transition for the
        next step."""
        done = state.finished
        picked = log_probs.gather(1, chosen.unsqueeze(1)).squeeze(1)
        record.log_probs[:, step] = torch.where(done, 0.0, picked)
        record.kind_log_probs[:, step] = torch.where(
            done, 0.0, self._kind_log_probs(log_probs, chosen)
        )
        record.transitions[:, step] = torch.where(done, -1, chosen)
        self._apply_transitions(state, chosen, done)
        return torch.where(done, previous, chosen)

    # ------------------------------------------------------------------------------------------
    # Outputs
    # ------------------------------------------------------------------------------------------

    def _outputs(
        self,
        hypotheses: Hypotheses,
        metadata: List[Dict[str, Any]],
        word_mask: torch.Tensor,
        pos_tags: Optional[torch.Tensor],
        head_indices: Optional[torch.Tensor],
        head_tags: Optional[torch.Tensor],
    ) -> Dict[str, Any]:
        """
        The output of `forward` from the decoded `hypotheses`: `heads` and `head_tags`,
        `(batch, words)` (head 0 the root, padding -1), `scores` (each tree's summed transition
        log-probability), the decoded `transitions` `(batch, steps)` (-1 after each
        sentence's) with their `step_log_probs` and `kind_log_probs`, and `kbest` for the
        sentences that ask for it. Updates UAS/LAS when the gold heads are given (`word_mask`
        `(batch, words)`, without the root).
        """
        best = hypotheses.best()
        output: Dict[str, Any] = {"metadata": metadata}
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
                output["heads"], output["head_tags"], head_indices, head_tags, word_mask, pos_tags
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
