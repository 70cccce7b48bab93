import numpy as np
import pytest
import torch
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

from lal_allennlp.data.trees import tree_to_spans
from lal_allennlp.decoding import cky_decode
from tests.conftest import FIXTURES_ROOT

CONFIG = FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"


class TestSpanConstituencyParser(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, FIXTURES_ROOT / "ptb" / "train")

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(CONFIG)

    def test_output_trees_cover_the_words_and_use_vocabulary_labels(self):
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances[:6])
        labels = set(self.vocab.get_token_to_index_vocabulary("span_labels"))
        for instance, output in zip(self.instances, outputs):
            words = instance["metadata"]["words"]
            assert output["words"] == words
            assert output["trees"].startswith("(TOP ")
            assert len(output["pos_tags"]) == len(words)
            for start, end, label in output["labelled_spans"]:
                assert 0 <= start < end <= len(words)
                assert label in labels

    def test_hinge_loss_is_zero_when_gold_wins_by_the_margin_and_positive_otherwise(self):
        batch = Batch(self.instances[:4])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        max_length = tensors["tokens"]["tokens"]["tokens"].size(1)
        gold = self.model._gold_chart(
            tensors["gold_spans"], tensors["gold_span_labels"], max_length
        )
        lengths = np.array([len(i["metadata"]["words"]) for i in self.instances[:4]])
        # Gold (span, label) pairs score +10, every other non-empty label -2 (the empty label
        # is fixed at 0): with a Hamming cost of 1, no tree beats the gold one, so the loss is 0.
        chart = np.full(gold.shape + (self.model.num_span_labels + 1,), -2.0, dtype=np.float32)
        chart[..., 0] = 0.0
        b, i, j = np.nonzero(gold)
        chart[b, i, j, gold[b, i, j]] = 10.0
        loss = self.model._hinge_loss(torch.tensor(chart), chart, lengths, gold)
        assert loss.item() == pytest.approx(0.0)
        # An all-zero chart: the loss is the largest Hamming cost of a tree.
        zero = np.zeros_like(chart)
        loss = self.model._hinge_loss(torch.tensor(zero), zero, lengths, gold)
        _, augmented = cky_decode(zero, lengths, gold)
        assert loss.item() == pytest.approx(augmented.mean())
        assert loss.item() > 0

    def test_gold_chart_matches_tree_spans(self):
        batch = Batch(self.instances[:3])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        max_length = tensors["tokens"]["tokens"]["tokens"].size(1)
        gold = self.model._gold_chart(
            tensors["gold_spans"], tensors["gold_span_labels"], max_length
        )
        for b, instance in enumerate(self.instances[:3]):
            _, _, spans = tree_to_spans(instance["metadata"]["gold_tree"])
            expected = {
                (i, j): self.vocab.get_token_index(label, "span_labels") + 1
                for i, j, label in spans
            }
            found = {(int(i), int(j)): int(gold[b, i, j]) for i, j in zip(*np.nonzero(gold[b]))}
            assert found == expected
