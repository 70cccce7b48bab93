import pytest
import torch
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from lal_allennlp.models.stack_attention_parser import StackAttentionParser
from lal_allennlp.syntax.arc_standard import follow, is_projective, parse_transition_name
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
            state, scores, _ = self.model.decode(memory, mask, lengths, beam_size)
        trees = [state.tree(row) for row in range(len(instances))]
        return trees, scores

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
            state, beam_one_scores, _ = self.model.decode_beam(memory, mask, lengths, 1)
        assert [state.tree(row) for row in range(len(self.instances))] == greedy_trees
        assert torch.allclose(beam_one_scores, greedy_scores)
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
                state, scores, history = self.model.decode(memory, mask, lengths, beam_size)
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
                heads, labels = state.tree(k)
                assert configuration.heads[1:] == heads
                assert configuration.labels[1:] == [
                    self.vocab.get_token_from_index(label, "head_tags") for label in labels
                ]

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
    with pytest.raises(Exception, match="reads POS tags"):
        predictor.predict_json({"tokens": ["The", "company", "said", "."]})
