import math

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from lal_allennlp.models.stack_attention_parser import StackAttentionParser
from lal_allennlp.structs.arc_standard import ArcStandardBatch
from lal_allennlp.syntax.arc_standard import (
    SHIFT,
    Configuration,
    follow,
    is_projective,
    parse_transition_name,
)
from tests.conftest import FIXTURES_ROOT

CONFIG = FIXTURES_ROOT / "stack_attention" / "experiment.jsonnet"
TRAIN = FIXTURES_ROOT / "ptb" / "deps" / "wsj_9001-9002"


class TestStackAttentionParser(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        # Seeded before the model's weights are drawn: the tests decode with them.
        torch.manual_seed(0)
        self.set_up_model(CONFIG, TRAIN)
        # Double precision: decodings compared across batch shapes must not flip on a
        # rounding difference between near-equal scores.
        self.model = self.model.double().eval()

    def _encoded(self, instances):
        batch = Batch(instances)
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        words = {"tokens": {"tokens": tensors["words"]["tokens"]["tokens"]}}
        memory, mask = self.model._encode(words, tensors["pos_tags"])
        return memory, mask, mask.sum(dim=1) - 1

    def _decode(self, instances, beam_size):
        memory, mask, lengths = self._encoded(instances)
        with torch.no_grad():
            hypotheses = self.model.decode(memory, mask, lengths, beam_size)
        best = hypotheses.best()
        trees = [hypotheses.state.tree(int(row)) for row in best]
        return trees, hypotheses.scores.view(-1)[best]

    def test_train_save_load_and_batch_consistency(self):
        # Beam search (beam 3 in the fixture) is what the loaded model decodes with.
        self.ensure_model_can_train_save_and_load(CONFIG)

    def test_decoding_random_scores_always_gives_a_projective_tree_with_one_root(self):
        for seed in range(3):
            torch.manual_seed(seed)
            for parameter in self.model.parameters():
                torch.nn.init.normal_(parameter, std=1.0)
            for beam_size in (1, 4):
                trees, _ = self._decode(self.instances, beam_size)
                for instance, (heads, labels) in zip(self.instances, trees):
                    n = len(instance["words"])
                    assert len(heads) == n
                    assert all(0 <= head <= n and head != i + 1 for i, head in enumerate(heads))
                    assert heads.count(0) == 1
                    assert is_projective(heads)
                    # Every word reaches the root: no cycles.
                    for word in range(1, n + 1):
                        seen = set()
                        while word != 0:
                            assert word not in seen
                            seen.add(word)
                            word = heads[word - 1]
                    assert all(label >= 0 for label in labels)

    def test_beam_one_is_greedy_and_wider_beams_never_score_lower(self):
        # Weights drawn wide (seeded): the untrained model's near-uniform transitions would give
        # beam search nothing to find beyond greedy.
        torch.manual_seed(0)
        for parameter in self.model.parameters():
            torch.nn.init.normal_(parameter, std=1.0)
        greedy_trees, greedy_scores = self._decode(self.instances, 1)
        memory, mask, lengths = self._encoded(self.instances)
        with torch.no_grad():
            beam_one = self.model.decode_beam(memory, mask, lengths, 1)
        assert [beam_one.state.tree(row) for row in range(len(self.instances))] == greedy_trees
        assert torch.allclose(beam_one.scores.view(-1), greedy_scores)
        for beam_size in (2, 4, 8):
            _, beam_scores = self._decode(self.instances, beam_size)
            assert (beam_scores >= greedy_scores - 1e-9).all()
        # Beam search finds better-scoring trees than greedy somewhere (it is not a no-op).
        _, beam_scores = self._decode(self.instances, 8)
        assert (beam_scores > greedy_scores + 1e-6).any()

    def test_batched_decoding_equals_one_sentence_at_a_time(self):
        instances = self.instances[:12]
        for beam_size in (1, 4):
            batched, batched_scores = self._decode(instances, beam_size)
            for k, instance in enumerate(instances):
                alone, alone_score = self._decode([instance], beam_size)
                assert alone[0] == batched[k]
                assert torch.allclose(alone_score, batched_scores[k : k + 1])

    def test_score_is_the_log_probability_of_the_decoded_transitions(self):
        # Teacher forcing on the decoded transitions gives back the decoder's score (the loss
        # is the mean negative log-probability per transition): decoding and training compute
        # the same distribution, and the transitions build the decoded tree.
        instances = self.instances[:6]
        memory, mask, lengths = self._encoded(instances)
        for beam_size in (1, 4):
            with torch.no_grad():
                hypotheses = self.model.decode(memory, mask, lengths, beam_size)
            best = hypotheses.best()
            history, state = hypotheses.transitions[best], hypotheses.state
            scores = hypotheses.scores.view(-1)[best]
            # The recorded step log-probabilities add up to the score.
            assert torch.allclose(hypotheses.log_probs[best].sum(dim=1), scores)
            for k in range(len(instances)):
                steps = 2 * int(lengths[k])
                assert (history[k, :steps] >= 0).all() and (history[k, steps:] == -1).all()
                with torch.no_grad():
                    loss = self.model._loss(
                        memory[k : k + 1], mask[k : k + 1], lengths[k : k + 1], history[k : k + 1]
                    )
                assert torch.allclose(-loss * steps, scores[k])
                names = [self.vocab.get_token_from_index(int(t), "transitions")
                         for t in history[k, :steps]]
                configuration = follow(int(lengths[k]), [parse_transition_name(n) for n in names])
                heads, labels = state.tree(int(best[k]))
                assert configuration.heads[1:] == heads
                assert configuration.labels[1:] == [
                    self.vocab.get_token_from_index(label, "head_tags") for label in labels
                ]

    def _widen_weights(self, seed):
        # Weights drawn wide (seeded): an untrained model's near-uniform steps make every
        # probability alike, which would let a wrong reading of them pass.
        torch.manual_seed(seed)
        for parameter in self.model.parameters():
            torch.nn.init.normal_(parameter, std=0.5)

    def _teacher_forced(self, memory, mask, lengths, k, transitions):
        """A reference, one step at a time: each decoded step's full distribution, given the
        steps before; per word, the probability of the arc kind that attached it and of its
        label given that kind; and the sequence's log-probability."""
        model = self.model
        n = int(lengths[k])
        memory, mask = memory[k : k + 1], mask[k : k + 1]
        keys = model.attention.project_keys(memory)
        state = ArcStandardBatch(lengths[k : k + 1], memory.size(1) - 1)
        hidden = model._initial_hidden(memory, mask)
        previous = torch.tensor([model.num_transitions])
        configuration = Configuration(n)
        heads, labels, total = [None] * n, [None] * n, 0.0
        for t in transitions:
            log_probs, hidden = model._step(memory, keys, mask, state, hidden, previous)
            probs = log_probs[0].exp()
            action, label = parse_transition_name(
                self.vocab.get_token_from_index(int(t), "transitions")
            )
            if action != SHIFT:
                top, below = configuration.stack[-1], configuration.stack[-2]
                dependent = below if action == "LEFT-ARC" else top
                kind = float(probs[model._transition_kinds == model._transition_kinds[t]].sum())
                heads[dependent - 1] = kind
                labels[dependent - 1] = float(probs[t]) / kind
            total += float(log_probs[0, t])
            chosen = torch.tensor([int(t)])
            model._apply_transitions(state, chosen, torch.tensor([False]))
            previous = chosen
            configuration.apply(action, label)
        return heads, labels, total

    def test_confidences_are_the_decoders_step_probabilities(self):
        self._widen_weights(1)
        instances = self.instances[:5]
        memory, mask, lengths = self._encoded(instances)
        for beam_size in (1, 4):
            with torch.no_grad():
                hypotheses = self.model.decode(memory, mask, lengths, beam_size)
                best = hypotheses.best()
                for k in range(len(instances)):
                    row, steps = int(best[k]), 2 * int(lengths[k])
                    transitions = hypotheses.transitions[row, :steps]
                    heads, labels, log_p = self._teacher_forced(memory, mask, lengths, k, transitions)
                    got = StackAttentionParser._confidences(
                        [self.vocab.get_token_from_index(int(t), "transitions") for t in transitions],
                        hypotheses.log_probs[row, :steps].tolist(),
                        hypotheses.kind_log_probs[row, :steps].tolist(),
                    )
                    assert got["head_confidences"] == pytest.approx(heads, abs=1e-9)
                    assert got["dependency_label_confidences"] == pytest.approx(labels, abs=1e-9)
                    assert got["tree_probability"] == pytest.approx(math.exp(log_p), rel=1e-9)
                    assert got["sentence_confidence"] == pytest.approx(
                        (sum(heads) + sum(labels)) / (2 * len(heads))
                    )
                    # The words' head probabilities are far from alike (wide weights).
                    assert max(heads) - min(heads) > 0.05

    def test_kbest_is_the_best_distinct_trees_of_all_derivations(self):
        # A three-word sentence: every derivation, enumerated with the pure transition system
        # and scored by teacher forcing, grouped by the tree it builds (arc-standard builds
        # some trees in several ways). A beam as wide as the number of derivations prunes
        # none, so its k best trees must be the k best of the enumeration, in order, each
        # scored by its best derivation. Two labels only, to keep the enumeration small: the
        # other labelled transitions get a score far below (a bias of -1e6).
        self._widen_weights(2)
        names = self.vocab.get_token_to_index_vocabulary("transitions")
        labels = sorted({n.partition(":")[2] for n in names if n.startswith("LEFT-ARC:")})
        labels = [label for label in labels if f"RIGHT-ARC:{label}" in names][:2]
        kept = ["SHIFT"] + [f"{arc}:{label}" for arc in ("LEFT-ARC", "RIGHT-ARC") for label in labels]
        with torch.no_grad():
            bias = self.model.output_layer.bias
            dropped = torch.ones_like(bias, dtype=torch.bool)
            dropped[[names[name] for name in kept]] = False
            bias[dropped] = -1e6
        words, tags = ["Dogs", "bark", "loudly"], ["NNS", "VBP", "RB"]
        reader = DatasetReader.from_params(Params.from_file(str(CONFIG))["dataset_reader"])
        memory, mask, lengths = self._encoded([reader.text_to_instance(words, tags)])
        derivations = []

        def extend(prefix):
            configuration = follow(3, [parse_transition_name(name) for name in prefix])
            if configuration.is_terminal:
                derivations.append(prefix)
                return
            for name in kept:
                if configuration.is_legal(parse_transition_name(name)[0]):
                    extend(prefix + [name])

        extend([])
        best_of_tree = {}
        with torch.no_grad():
            for derivation in derivations:
                ids = torch.tensor([[names[name] for name in derivation]])
                score = float(-self.model._loss(memory, mask, lengths, ids) * len(derivation))
                tree = follow(3, [parse_transition_name(name) for name in derivation])
                key = (tuple(tree.heads[1:]), tuple(tree.labels[1:]))
                best_of_tree[key] = max(score, best_of_tree.get(key, float("-inf")))
        ranking = sorted(best_of_tree.items(), key=lambda item: -item[1])
        assert len(derivations) > len(ranking) > 10  # some trees have several derivations
        self.model.beam_size = len(derivations)
        predictor = Predictor.by_name("lal_dependency_parser")(self.model, reader)
        output = predictor.predict_json({"tokens": words, "tags": tags, "kbest": 12})
        got = [((tuple(t["heads"]), tuple(t["dependency_labels"])), t["score"])
               for t in output["kbest"]]
        assert [tree for tree, _ in got] == [tree for tree, _ in ranking[:12]]
        assert [score for _, score in got] == pytest.approx([score for _, score in ranking[:12]])
        assert (tuple(output["heads"]), tuple(output["dependency_labels"])) == got[0][0]
        assert output["kbest"][0]["probability"] == pytest.approx(math.exp(got[0][1]))

    def test_unknown_transition_cannot_be_predicted_and_pos_is_required(self):
        kinds = self.model._transition_kinds
        assert (kinds[:2] == -1).all()  # @@PADDING@@, @@UNKNOWN@@
        batch = Batch(self.instances[:2])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        with pytest.raises(ValueError, match="reads POS tags"):
            self.model._encode(tensors["words"], None)


def test_predictor_parses_tokens_with_tags_into_conllu(tmp_path):
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "allennlp", "train", str(CONFIG), "-s", str(tmp_path / "run")],
        check=True,
        capture_output=True,
    )
    archive = load_archive(str(tmp_path / "run" / "model.tar.gz"))
    assert isinstance(archive.model, StackAttentionParser)
    predictor = Predictor.from_archive(archive)
    output = predictor.predict_json(
        {"tokens": ["The", "company", "said", "sales", "rose", "."],
         "tags": ["DT", "NN", "VBD", "NNS", "VBD", "."]}
    )
    assert output["words"] == ["The", "company", "said", "sales", "rose", "."]
    assert len(output["heads"]) == 6 and output["heads"].count(0) == 1
    assert is_projective(output["heads"])
    lines = output["conllu"].strip().split("\n")
    assert [line.split("\t")[6] for line in lines if not line.startswith("#")] == [
        str(head) for head in output["heads"]
    ]
    assert isinstance(output["score"], float)
    # Confidences and the beam's k best through the loaded archive's predictor (beam 3).
    asked = predictor.predict_json(
        {"tokens": ["The", "company", "said", "sales", "rose", "."],
         "tags": ["DT", "NN", "VBD", "NNS", "VBD", "."], "confidence": True, "kbest": 5}
    )
    assert asked["heads"] == output["heads"]
    assert len(asked["head_confidences"]) == len(asked["dependency_label_confidences"]) == 6
    assert all(0.0 < p <= 1.0 for p in asked["head_confidences"])
    assert asked["tree_probability"] == pytest.approx(math.exp(asked["score"]))
    assert 1 <= len(asked["kbest"]) <= 3 and asked["kbest"][0]["heads"] == output["heads"]
    assert "head_confidences" not in output and "kbest" not in output
    with pytest.raises(Exception, match="reads POS tags"):
        predictor.predict_json({"tokens": ["The", "company", "said", "."]})
