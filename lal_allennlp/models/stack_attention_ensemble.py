"""
An ensemble of stack attention dependency parsers (Zhang et al. 2017, "Stack-based Multi-layer
Attention for Transition-based Dependency Parsing", whose ensemble of four parsers adds 0.45
UAS on the PTB): trained `stack_attention_parser`s that decode one transition sequence
together.

At every decoding step each member advances its own decoder on the same transition history
(its own encoder, attention and GRU state) and gives its distribution over the next
transition; the ensemble's distribution is their mean,

    p(y_i | y_<i, x) = 1/M * sum_m p_m(y_i | y_<i, x)

computed in log space (`logsumexp_m log p_m - log M`, exact and free of underflow). Greedy
decoding and beam search are the single model's loops (`transition_parser_base`) over this
distribution, so a beam ranks hypotheses by their summed log averaged probabilities and the
confidences are the averaged step probabilities.

Probabilities rather than log-probabilities: the mean of the members' probabilities (a mixture)
is itself a distribution over the legal transitions, so its step probabilities are confidences
on the single model's scale and a beam's scores are the log-probabilities of one sequence
model; and it is at least `1/M` of any member's probability, so a member that is confidently
wrong (a near-zero probability) cannot veto a transition the others agree on. The alternative,
the mean of the log-probabilities (a renormalised geometric mean, a product of experts),
rewards agreement more sharply but lets that one member decide, and needs renormalising over
the legal transitions at every step.

`build_ensemble_archive` (and `lal-analyze ensemble`) writes one model archive holding the
ensemble, built from the members' archives; it loads, evaluates and predicts like a single
model. The ensemble is not trained: training refuses.
"""
import json
import math
import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.meta import META_NAME, Meta
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model

from lal_allennlp.models.stack_attention_parser import StackAttentionParser, StackAttentionScorer
from lal_allennlp.models.transition_parser_base import (
    Hypotheses,
    TransitionParserBase,
    TransitionScorer,
)
from lal_allennlp.structs.arc_standard import ArcStandardBatch

TRAINING_REFUSED = (
    "a stack_attention_ensemble cannot be trained: it is built from trained "
    "stack_attention_parser members. Train each member with `allennlp train` (different seeds "
    "on the same training data), then build the ensemble from their archives with "
    "`lal-analyze ensemble A.tar.gz B.tar.gz ... -o ENSEMBLE.tar.gz`"
)
"""What training an ensemble (`allennlp train` on its config, `model.train()`) raises."""


@Model.register("stack_attention_ensemble")
class StackAttentionEnsemble(TransitionParserBase):
    """
    Registered as a `Model` with name "stack_attention_ensemble". Reads what its members read
    (the `lal_dependencies` reader's instances) and gives what a single `stack_attention_parser`
    gives (`TransitionParserBase._outputs`, `make_output_human_readable`), decoding with the
    members' averaged transition probabilities (see the module docstring). UAS/LAS leave out
    the first member's `punctuation_tags`. No loss: the ensemble is always in evaluation mode,
    and `train()` raises (`TRAINING_REFUSED`).

    # Parameters

    vocab : `Vocabulary`
        The members' vocabulary: every member must have this one (same namespaces, same
        entries), as members trained on the same data with the same config have.
    members : `List[Model]`
        The `stack_attention_parser`s, each built from its own model config (what
        `build_ensemble_archive` writes, with all members' weights in one weights file).
    beam_size : `int`, optional (default = `None`)
        Beam of the ensemble's decoder, 1 for greedy decoding; the first member's if `None`.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        members: List[Model],
        beam_size: Optional[int] = None,
    ) -> None:
        # No `**kwargs` for `Model` (regularizer, ...): they are for training. With them,
        # `from_params` would also ask the config for `TransitionParserBase`'s arguments.
        if not members:
            raise ConfigurationError("a stack_attention_ensemble needs at least one member")
        for k, member in enumerate(members):
            if not isinstance(member, StackAttentionParser):
                raise ConfigurationError(
                    f"member {k} of the ensemble is a {type(member).__name__}: only "
                    "stack_attention_parser models can be ensembled"
                )
            mismatch = vocabulary_mismatch(vocab, member.vocab, "the ensemble's", "the member's")
            if mismatch is not None:
                raise ConfigurationError(
                    f"member {k} of the ensemble has another vocabulary than the ensemble's: "
                    f"{mismatch}"
                )
        first = members[0]
        beam_size = first.beam_size if beam_size is None else beam_size
        super().__init__(vocab, beam_size, first.punctuation_tags)
        self.members = torch.nn.ModuleList(members)
        self.eval()

    def train(self, mode: bool = True) -> "StackAttentionEnsemble":
        """`eval()` as for any module; training mode raises a `ConfigurationError`
        (`TRAINING_REFUSED`): the ensemble is built from trained members."""
        if mode:
            raise ConfigurationError(TRAINING_REFUSED)
        return super().train(False)

    def scorer(
        self, encoded: List[Tuple[torch.Tensor, torch.Tensor]], rows_per_sentence: int
    ) -> "EnsembleScorer":
        """The members' decoders over the batch, each on its own encoding (`encoded[m]`: the
        memory `(batch, 1 + words, dim_m)` and mask of `StackAttentionParser._encode`), with
        `rows_per_sentence` rows (hypotheses) per sentence."""
        return EnsembleScorer(
            [
                member.scorer(memory, mask, rows_per_sentence)
                for member, (memory, mask) in zip(self.members, encoded)
            ]
        )

    def decode(
        self,
        encoded: List[Tuple[torch.Tensor, torch.Tensor]],
        lengths: torch.Tensor,
        beam_size: int,
    ) -> Hypotheses:
        """Greedy decoding (`beam_size` 1) or beam search over the averaged distribution, by
        the single model's loops; `lengths` `(batch,)` the sentences' numbers of words."""
        max_length = encoded[0][0].size(1) - 1
        if beam_size == 1:
            return self.greedy_search(self.scorer(encoded, 1), lengths, max_length)
        return self.beam_search(self.scorer(encoded, beam_size), lengths, max_length, beam_size)

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
        The decoded trees (`TransitionParserBase._outputs`), and UAS/LAS when the gold heads
        are given. `transitions` (the oracle's, which the training reader gives) are not read:
        the ensemble has no loss.
        """
        # One encoding per member, `(batch, 1 + words, dim_m)`; the masks are the same.
        encoded = [member._encode(words, pos_tags) for member in self.members]
        mask = encoded[0][1]
        lengths = mask.sum(dim=1) - 1
        hypotheses = self.decode(encoded, lengths, self.beam_size)
        return self._outputs(hypotheses, metadata, mask[:, 1:], pos_tags, head_indices, head_tags)


class EnsembleScorer(TransitionScorer):
    """
    The averaged transition distribution of several members' decoders, for the decoding loops:
    every member steps on the same configurations and previous transitions, and the step gives
    `log(1/M * sum_m p_m)`.

    # Parameters

    scorers : `List[StackAttentionScorer]`
        One per member, over the same batch with the same rows.
    """

    def __init__(self, scorers: List[StackAttentionScorer]) -> None:
        super().__init__(scorers[0].dtype)
        self.scorers = scorers
        self._log_members = math.log(len(scorers))

    def step(self, state: ArcStandardBatch, previous: torch.Tensor) -> torch.Tensor:
        # shape (members, rows, num_transitions); -inf where illegal, for every member alike.
        log_probs = torch.stack([scorer.step(state, previous) for scorer in self.scorers])
        return log_probs.logsumexp(dim=0) - self._log_members

    def select(self, rows: torch.Tensor) -> None:
        for scorer in self.scorers:
            scorer.select(rows)


def vocabulary_mismatch(
    first: Vocabulary,
    other: Vocabulary,
    first_name: str = "the first vocabulary",
    other_name: str = "the second",
) -> Optional[str]:
    """`None` if the two vocabularies have the same namespaces with the same entries at the same
    indices; else what differs, for a message: the first such namespace (in sorted order) and
    how, naming the vocabularies `first_name` and `other_name`."""
    if first is other:
        return None
    names, other_names = first.get_namespaces(), other.get_namespaces()
    for namespace in sorted(names | other_names):
        if namespace not in other_names or namespace not in names:
            where = first_name if namespace in names else other_name
            return f"the namespace '{namespace}' is in {where} only"
        tokens = first.get_index_to_token_vocabulary(namespace)
        other_tokens = other.get_index_to_token_vocabulary(namespace)
        if tokens == other_tokens:
            continue
        detail = f"{len(tokens)} entries in {first_name}, {len(other_tokens)} in {other_name}"
        only = sorted(set(tokens.values()) ^ set(other_tokens.values()))
        if only:
            where = first_name if only[0] in tokens.values() else other_name
            detail += f"; '{only[0]}' is in {where} only"
        else:
            detail += "; the same entries at other indices"
        return f"the namespace '{namespace}' differs ({detail})"
    return None


def build_ensemble_archive(
    member_archives: List[str], output_path: str, beam_size: Optional[int] = None
) -> None:
    """
    Writes one model archive at `output_path` (`output_path/model.tar.gz` if it is a
    directory) holding the ensemble of the `stack_attention_parser` archives
    `member_archives`: `config.json` (the first member's config, whose `model` becomes
    `{type: 'stack_attention_ensemble', members: [each member's model config], beam_size}`:
    the first member's dataset readers and data loaders), the first member's vocabulary, and
    one weights file with every member's weights (`members.<k>.*`). `load_archive`,
    `allennlp predict` / `evaluate`, `Parser.load` and the predictors load it as any model.

    # Parameters

    member_archives : `List[str]`
        `model.tar.gz` files of `stack_attention_parser`s with one vocabulary (the same
        training data and config, different seeds).
    output_path : `str`
        The archive to write (its folder is made if missing).
    beam_size : `int`, optional (default = `None`)
        The ensemble's beam; the first member's if `None`.

    A missing archive raises `FileNotFoundError`; an archive of another model, or whose
    vocabulary or dataset reader differs from the first member's (the message names both
    archives and what differs), `ValueError`.
    """
    from allennlp.models.archival import archive_model, load_archive

    if not member_archives:
        raise ValueError("an ensemble needs at least one member archive")
    if beam_size is not None and beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    archives = []
    for path in member_archives:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no model archive at {path}")
        archive = load_archive(path)
        if not isinstance(archive.model, StackAttentionParser):
            raise ValueError(
                f"{path} holds a {type(archive.model).__name__}, not a stack_attention_parser: "
                "only stack attention parsers can be ensembled"
            )
        archives.append(archive)
    first_path, first = member_archives[0], archives[0]
    for path, archive in zip(member_archives[1:], archives[1:]):
        mismatch = vocabulary_mismatch(first.model.vocab, archive.model.vocab, first_path, path)
        if mismatch is not None:
            raise ValueError(
                f"{path} cannot join an ensemble with {first_path}: their vocabularies differ: "
                f"{mismatch}. The members of an ensemble share one vocabulary: train them on "
                "the same training data with the same config (different seeds give the same "
                "vocabulary)"
            )
        for key in ("dataset_reader", "validation_dataset_reader"):
            ours, theirs = first.config.get(key, None), archive.config.get(key, None)
            ours = ours.as_dict(quiet=True) if ours is not None else None
            theirs = theirs.as_dict(quiet=True) if theirs is not None else None
            if ours != theirs:
                raise ValueError(
                    f"{path} cannot join an ensemble with {first_path}: their `{key}` configs "
                    f"differ ({json.dumps(theirs)} against {json.dumps(ours)}); the ensemble "
                    "reads every sentence once, with the first member's reader"
                )
    ensemble = StackAttentionEnsemble(
        first.model.vocab, [archive.model for archive in archives], beam_size
    )
    config = first.config.as_dict(quiet=True)
    config["model"] = {
        "type": "stack_attention_ensemble",
        "members": [archive.config.as_dict(quiet=True)["model"] for archive in archives],
    }
    if beam_size is not None:
        config["model"]["beam_size"] = beam_size
    if os.path.isdir(output_path):
        output_path = os.path.join(output_path, "model.tar.gz")
    os.makedirs(os.path.dirname(os.path.abspath(output_path)), exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        first.model.vocab.save_to_files(os.path.join(directory, "vocabulary"))
        torch.save(ensemble.state_dict(), os.path.join(directory, "weights.th"))
        Meta.new().to_file(os.path.join(directory, META_NAME))
        # Written beside the target, then moved: no half-written archive under its name.
        partial = output_path + ".partial"
        archive_model(directory, weights="weights.th", archive_path=partial)
        shutil.move(partial, output_path)
