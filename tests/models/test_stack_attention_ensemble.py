"""
The ensemble of stack attention parsers (`stack_attention_ensemble`): it decodes by the single
model's loops over the members' averaged transition probabilities, and its one archive loads,
predicts and evaluates like a single model's.

The members are the tiny fixture model with weights drawn wide (seeded), untrained: an
untrained model's near-uniform steps would make every average look like its members.
"""
import copy
import json
import math
import os
from types import SimpleNamespace

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.models.archival import archive_model, load_archive
from allennlp.predictors import Predictor

from lal_allennlp.api import Parser
from lal_allennlp.commands import analyze
from lal_allennlp.models.stack_attention_ensemble import (
    TRAINING_REFUSED,
    StackAttentionEnsemble,
    build_ensemble_archive,
)
from lal_allennlp.models.stack_attention_parser import StackAttentionParser
from lal_allennlp.structs.arc_standard import ArcStandardBatch
from tests.conftest import FIXTURES_ROOT

CONFIG = FIXTURES_ROOT / "stack_attention" / "experiment.jsonnet"
TRAIN = FIXTURES_ROOT / "ptb" / "deps" / "wsj_9001-9002"
DEV = FIXTURES_ROOT / "ptb" / "deps" / "wsj_9002.conll"
WORDS = ["The", "company", "said", "sales", "rose", "."]
TAGS = ["DT", "NN", "VBD", "NNS", "VBD", "."]


@pytest.fixture(scope="module")
def setup():
    config = Params.from_file(str(CONFIG)).as_dict(quiet=True)
    reader = DatasetReader.from_params(Params(copy.deepcopy(config["dataset_reader"])))
    vocab = Vocabulary.from_instances(reader.read(str(TRAIN)))
    dev_reader = DatasetReader.from_params(
        Params(copy.deepcopy(config["validation_dataset_reader"]))
    )
    dev = list(dev_reader.read(str(DEV)))[:6]

    def member(seed, vocabulary=vocab):
        torch.manual_seed(seed)
        model = Model.from_params(vocab=vocabulary, params=Params(copy.deepcopy(config["model"])))
        for parameter in model.parameters():
            torch.nn.init.normal_(parameter, std=0.5)
        return model.eval()

    return SimpleNamespace(
        config=config, reader=reader, vocab=vocab, dev=dev, dev_reader=dev_reader, member=member
    )


def _asking(instances, kbest=3):
    """The instances with `confidence` and `kbest` asked for, as the predictor sets them."""
    for instance in instances:
        instance["metadata"].metadata.update(confidence=True, kbest=kbest)
    return instances


def _encoded(models, instances, vocab):
    """Each model's encoding of the batch, and the sentences' lengths."""
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    encoded = [model._encode(tensors["words"], tensors["pos_tags"]) for model in models]
    return encoded, encoded[0][1].sum(dim=1) - 1


def _teacher_forced(model, memory, mask, k, transitions):
    """`(steps, num_transitions)`: the model's distribution at each of `transitions` (sentence
    `k` of the batch), given the transitions before: the single model's decoder, by hand."""
    memory, mask = memory[k : k + 1], mask[k : k + 1]
    scorer = model.scorer(memory, mask, 1)
    state = ArcStandardBatch(mask.sum(dim=1) - 1, memory.size(1) - 1)
    previous = torch.tensor([model.num_transitions])
    distributions = []
    for t in transitions.tolist():
        distributions.append(scorer.step(state, previous)[0].exp())
        previous = torch.tensor([t])
        model._apply_transitions(state, previous, torch.tensor([False]))
    return torch.stack(distributions)


def test_an_ensemble_of_one_or_of_two_copies_is_the_single_model(setup):
    model = setup.member(0).double()
    for beam_size in (1, 3):
        model.beam_size = beam_size
        model.get_metrics(reset=True)
        single = model.forward_on_instances(_asking(setup.dev))
        metrics = model.get_metrics(reset=True)
        assert {"UAS", "LAS"} <= set(metrics)
        alone = StackAttentionEnsemble(setup.vocab, [model], beam_size=beam_size)
        twice = StackAttentionEnsemble(setup.vocab, [model, copy.deepcopy(model)], beam_size)
        # One member: log(mean(exp(log p))) is log p to the last bit.
        assert alone.forward_on_instances(setup.dev) == single
        assert alone.get_metrics(reset=True) == metrics
        for got, want in zip(twice.forward_on_instances(setup.dev), single):
            for key in ("heads", "dependency_labels", "transitions"):
                assert got[key] == want[key]
            for key in ("score", "tree_probability", "sentence_confidence"):
                assert got[key] == pytest.approx(want[key], rel=1e-9)
            for key in ("head_confidences", "dependency_label_confidences"):
                assert got[key] == pytest.approx(want[key], abs=1e-9)
            assert [tree["heads"] for tree in got["kbest"]] == [
                tree["heads"] for tree in want["kbest"]
            ]
    # The ensemble's beam defaults to its first member's.
    model.beam_size = 3
    assert StackAttentionEnsemble(setup.vocab, [model]).beam_size == 3
    assert alone.capabilities == StackAttentionParser.capabilities
    assert alone.punctuation_tags == model.punctuation_tags


def test_two_models_decode_with_the_mean_of_their_step_probabilities(setup):
    first, second = setup.member(0).double(), setup.member(1).double()
    ensemble = StackAttentionEnsemble(setup.vocab, [first, second], beam_size=1)
    kinds = ensemble._transition_kinds
    encoded, lengths = _encoded([first, second], setup.dev[:4], setup.vocab)
    apart = 0.0
    with torch.no_grad():
        greedy = ensemble.decode(encoded, lengths, 1)
        beam = ensemble.decode(encoded, lengths, 4)
        for k in range(4):
            steps = 2 * int(lengths[k])
            transitions = greedy.transitions[k, :steps]
            # By hand: each member's softmax at every step, averaged.
            p_first, p_second = (
                _teacher_forced(model, memory, mask, k, transitions)
                for model, (memory, mask) in zip((first, second), encoded)
            )
            average = (p_first + p_second) / 2
            assert average.sum(dim=-1) == pytest.approx(torch.ones(steps), abs=1e-12)
            # Greedy takes the best transition of the average (illegal ones have 0).
            assert transitions.tolist() == average.argmax(dim=-1).tolist()
            chosen = average[torch.arange(steps), transitions]
            assert greedy.log_probs[k, :steps] == pytest.approx(chosen.log(), abs=1e-9)
            same_kind = kinds.unsqueeze(0) == kinds[transitions].unsqueeze(1)
            kind = (average * same_kind).sum(dim=-1)
            assert greedy.kind_log_probs[k, :steps] == pytest.approx(kind.log(), abs=1e-9)
            apart = max(apart, float((p_first - p_second).abs().max()))
            # Beam search ranks by the summed log averaged probabilities, and keeps greedy's.
            row = int(beam.best()[k])
            best = beam.transitions[row, :steps]
            by_hand = sum(
                math.log((float(p[t]) + float(q[t])) / 2)
                for p, q, t in zip(
                    *(
                        _teacher_forced(model, memory, mask, k, best)
                        for model, (memory, mask) in zip((first, second), encoded)
                    ),
                    best.tolist(),
                )
            )
            assert float(beam.scores.view(-1)[row]) == pytest.approx(by_hand, rel=1e-9)
            assert float(beam.scores.view(-1)[row]) >= float(greedy.scores[k]) - 1e-9
    # The members disagree: the average is neither of them.
    assert apart > 0.2


def _member_archive(setup, model, directory):
    """`model` written as `allennlp train` writes its archive."""
    os.makedirs(directory)
    with open(os.path.join(directory, "config.json"), "w") as handle:
        json.dump(setup.config, handle)
    model.vocab.save_to_files(os.path.join(directory, "vocabulary"))
    torch.save(model.state_dict(), os.path.join(directory, "best.th"))
    return archive_model(directory)


def test_one_archive_loads_and_predicts_as_the_ensemble_of_its_members(setup, tmp_path, capsys):
    members = [
        _member_archive(setup, setup.member(seed), str(tmp_path / f"m{seed}")) for seed in (0, 1)
    ]
    target = str(tmp_path / "out" / "ensemble.tar.gz")
    assert analyze.main(["ensemble", *members, "-o", target, "--beam-size", "2"]) == 0
    assert "wrote" in capsys.readouterr().err
    archive = load_archive(target)
    loaded = archive.model
    assert isinstance(loaded, StackAttentionEnsemble) and not loaded.training
    assert len(loaded.members) == 2 and loaded.beam_size == 2
    assert archive.config["model"]["members"][0]["type"] == "stack_attention_parser"
    assert archive.config["dataset_reader"].as_dict() == setup.config["dataset_reader"]
    in_memory = StackAttentionEnsemble(
        setup.vocab, [load_archive(path).model for path in members], beam_size=2
    )
    for (name, weight), (_, expected) in zip(
        loaded.state_dict().items(), in_memory.state_dict().items()
    ):
        assert torch.equal(weight, expected), name
    request = {"tokens": WORDS, "tags": TAGS, "confidence": True, "kbest": 2}
    predicted = Predictor.from_archive(archive).predict_json(request)
    expected = Predictor.by_name("lal_dependency_parser")(
        in_memory, archive.validation_dataset_reader
    ).predict_json(request)
    assert predicted == expected
    assert len(predicted["heads"]) == 6 and 1 <= len(predicted["kbest"]) <= 2
    assert predicted["tree_probability"] == pytest.approx(math.exp(predicted["score"]))
    # The package's Parser, as for a single model.
    parser = Parser.load(target)
    assert parser.capabilities == StackAttentionParser.capabilities
    result = parser.parse(WORDS, TAGS, confidence=True)
    assert result.heads == predicted["heads"]
    assert result.to_conllu() == predicted["conllu"]
    # `allennlp evaluate`: the single model's UAS/LAS, of the averaged decoder.
    from allennlp.commands.evaluate import evaluate_from_archive

    metrics = evaluate_from_archive(target, str(DEV))
    in_memory.get_metrics(reset=True)
    instances = list(setup.dev_reader.read(str(DEV)))
    for start in range(0, len(instances), 8):  # the config's batches
        in_memory.forward_on_instances(instances[start : start + 8])
    assert metrics["UAS"] == pytest.approx(in_memory.get_metrics()["UAS"])
    assert metrics["LAS"] == pytest.approx(in_memory.get_metrics()["LAS"])


def test_members_with_another_vocabulary_are_refused(setup, tmp_path):
    first = _member_archive(setup, setup.member(0), str(tmp_path / "first"))
    # Trained on a part of the data: fewer words, labels and transitions.
    other_vocab = Vocabulary.from_instances(list(setup.reader.read(str(TRAIN)))[:5])
    other_model = setup.member(1, other_vocab)
    other = _member_archive(setup, other_model, str(tmp_path / "other"))
    with pytest.raises(ValueError) as refused:
        build_ensemble_archive([first, other], str(tmp_path / "ensemble.tar.gz"))
    message = str(refused.value)
    assert first in message and other in message
    assert "namespace 'head_tags'" in message  # the first namespace that differs, sorted
    assert not os.path.exists(tmp_path / "ensemble.tar.gz")
    assert analyze.main(["ensemble", first, other, "-o", str(tmp_path / "e.tar.gz")]) == 1
    with pytest.raises(ConfigurationError, match="namespace 'head_tags'"):
        StackAttentionEnsemble(setup.vocab, [setup.member(0), other_model])


def test_training_is_refused(setup, tmp_path):
    ensemble = StackAttentionEnsemble(setup.vocab, [setup.member(0), setup.member(1)])
    assert not ensemble.training
    with pytest.raises(ConfigurationError) as refused:
        ensemble.train()
    assert str(refused.value) == TRAINING_REFUSED and "cannot be trained" in TRAINING_REFUSED
    assert not ensemble.training
    # `allennlp train` on an ensemble's config stops at the trainer's first `model.train()`.
    from allennlp.commands.train import train_model

    config = copy.deepcopy(setup.config)
    members = [copy.deepcopy(config["model"]) for _ in range(2)]
    config["model"] = {"type": "stack_attention_ensemble", "members": members}
    with pytest.raises(ConfigurationError, match="cannot be trained"):
        train_model(Params(config), str(tmp_path / "run"))
