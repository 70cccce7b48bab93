import numpy as np
import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from nltk import Tree

from lal_allennlp.metrics import EvalbMetric
from lal_allennlp.predictors import ParserPredictor
from lal_allennlp.syntax.trees import spans_to_tree, tree_to_spans, tree_to_string
from lal_allennlp.decoding import cky_decode
from lal_allennlp.structs import SpanChart, tree_log_partition
from tests.conftest import FIXTURES_ROOT, model_from_config

CONFIG = FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"


class TestSpanConstituencyParser(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, FIXTURES_ROOT / "ptb" / "train")

    def _gold_chart_of_first(self, count: int) -> np.ndarray:
        batch = Batch(self.instances[:count])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        max_length = tensors["tokens"]["tokens"]["tokens"].size(1)
        return SpanChart.gold(tensors["gold_spans"], tensors["gold_span_labels"], max_length)

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(CONFIG)

    def test_crf_loss_trains_saves_and_loads(self):
        self.ensure_model_can_train_save_and_load(CONFIG, overrides='{"model.span_loss": "crf"}')

    def test_crf_loss_is_log_partition_minus_gold_tree_score(self):
        gold_tensor = self._gold_chart_of_first(4)
        gold = gold_tensor.numpy()
        lengths = torch.tensor([len(i["metadata"]["words"]) for i in self.instances[:4]])
        torch.manual_seed(0)
        chart = torch.randn(gold.shape + (self.model.num_span_labels + 1,))
        chart[..., 0] = 0.0
        gold_scores = []
        for b, instance in enumerate(self.instances[:4]):
            _, _, spans = tree_to_spans(instance["metadata"]["gold_tree"])
            gold_scores.append(
                sum(
                    chart[b, i, j, self.vocab.get_token_index(label, "span_labels") + 1].item()
                    for i, j, label in spans
                )
            )
        expected = (tree_log_partition(chart, lengths) - torch.tensor(gold_scores)).mean()
        loss = SpanChart(chart, lengths).crf_loss(gold_tensor)
        assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
        assert loss.item() > 0
        # Gold labels at +40, every other non-empty label at -40: the gold tree takes all the
        # mass (counted once, whatever its number of binarisations), so the loss is ~0; with
        # an extra constituent at +40 instead (inside a node of 3+ children), it is ~40.
        chart[..., 1:] = -40.0
        b, i, j = np.nonzero(gold)
        chart[b, i, j, gold[b, i, j]] = 40.0
        assert SpanChart(chart, lengths).crf_loss(gold_tensor).item() == pytest.approx(0.0, abs=1e-6)
        n = len(self.instances[0]["metadata"]["words"])
        _, _, spans = tree_to_spans(self.instances[0]["metadata"]["gold_tree"])
        nodes = {(i, j) for i, j, _ in spans} | {(i, i + 1) for i in range(n)}
        children = {}
        for a, c in nodes:
            above = [(x, y) for x, y in nodes | {(0, n)} if x <= a < c <= y and (x, y) != (a, c)]
            parent = min(above, key=lambda span: span[1] - span[0], default=None)
            children.setdefault(parent, []).append((a, c))
        parent, kids = next((p, sorted(k)) for p, k in children.items() if p and len(k) >= 3)
        chart[0, kids[0][0], kids[1][1], 1] = 40.0  # the first two children of that node
        loss = SpanChart(chart, lengths).crf_loss(gold_tensor).item()
        assert loss * len(lengths) == pytest.approx(40.0, abs=1e-4)

    def test_unknown_span_loss_is_refused(self):
        with pytest.raises(ConfigurationError, match='span_loss must be "hinge" or "crf"'):
            type(self.model)(
                self.vocab, self.model.text_field_embedder, self.model.encoder, span_loss="mse"
            )

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
        gold_tensor = self._gold_chart_of_first(4)
        gold = gold_tensor.numpy()
        lengths = np.array([len(i["metadata"]["words"]) for i in self.instances[:4]])
        # Gold (span, label) pairs score +10, every other non-empty label -2 (the empty label
        # is fixed at 0): with a Hamming cost of 1, no tree beats the gold one, so the loss is 0.
        chart = np.full(gold.shape + (self.model.num_span_labels + 1,), -2.0, dtype=np.float32)
        chart[..., 0] = 0.0
        b, i, j = np.nonzero(gold)
        chart[b, i, j, gold[b, i, j]] = 10.0
        loss = SpanChart(torch.tensor(chart), torch.tensor(lengths)).hinge_loss(gold_tensor)
        assert loss.item() == pytest.approx(0.0)
        # An all-zero chart: the loss is the largest Hamming cost of a tree.
        zero = np.zeros_like(chart)
        loss = SpanChart(torch.tensor(zero), torch.tensor(lengths)).hinge_loss(gold_tensor)
        _, augmented = cky_decode(zero, lengths, gold)
        assert loss.item() == pytest.approx(augmented.mean())
        assert loss.item() > 0

    def test_gold_chart_matches_tree_spans(self):
        batch = Batch(self.instances[:3])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        max_length = tensors["tokens"]["tokens"]["tokens"].size(1)
        gold = SpanChart.gold(tensors["gold_spans"], tensors["gold_span_labels"], max_length)
        gold = gold.numpy()
        for b, instance in enumerate(self.instances[:3]):
            _, _, spans = tree_to_spans(instance["metadata"]["gold_tree"])
            expected = {
                (i, j): self.vocab.get_token_index(label, "span_labels") + 1
                for i, j, label in spans
            }
            found = {(int(i), int(j)): int(gold[b, i, j]) for i, j in zip(*np.nonzero(gold[b]))}
            assert found == expected

    def test_output_carries_no_tensors_the_caller_does_not_need(self):
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances[:3])
        for output in outputs:
            assert set(output) == {"words", "trees", "pos_tags", "labelled_spans"}

    def test_trees_are_built_once_per_sentence_and_scored_by_evalb(self, monkeypatch):
        from lal_allennlp.models import span_parser_base

        built = []

        def counting_spans_to_tree(*args, **kwargs):
            tree = spans_to_tree(*args, **kwargs)
            built.append(tree)
            return tree

        monkeypatch.setattr(span_parser_base, "spans_to_tree", counting_spans_to_tree)
        self.model.eval()
        self.model.get_metrics(reset=True)
        outputs = self.model.forward_on_instances(self.instances[:5])
        assert len(built) == 5
        # The metric saw the same trees as the output.
        assert [tree_to_string(tree) for tree in built] == [o["trees"] for o in outputs]
        gold = [i["metadata"]["gold_tree"] for i in self.instances[:5]]
        expected = EvalbMetric(gold_tags=False)
        expected(built, gold)
        assert self.model.get_metrics(reset=True)["evalb_f1"] == expected.get_metric()["evalb_f1"]


def test_given_tags_reach_the_output_of_a_model_that_does_not_predict_tags(tmp_path):
    params = Params.from_file(str(CONFIG))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    vocab = Vocabulary.from_instances(instances)
    model_params = params.pop("model")
    model_params["predict_pos_tags"] = False
    model = Model.from_params(vocab=vocab, params=model_params).eval()
    predictor = ParserPredictor(model, reader)
    tags = ["DT", "NN", "VBD", "."]
    result = predictor.predict_json({"tokens": ["The", "cat", "sat", "."], "tags": tags})
    assert result["pos_tags"] == tags
    assert [tag for _, tag in Tree.fromstring(result["tree"]).pos()] == tags
    untagged = predictor.predict_json({"tokens": ["The", "cat", "sat", "."]})
    assert untagged["pos_tags"] == ["UNK"] * 4


class TestTaggerInputs(ModelTestCase):
    """`pos_tag_input` and `pos_tag_hidden_dim`: the tagger reads what it is told to, and every
    variant trains, saves and loads."""

    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, FIXTURES_ROOT / "ptb" / "train")

    @pytest.mark.parametrize(
        "overrides",
        [
            '{"model.pos_tag_input": "embedder", "model.pos_tag_hidden_dim": 12}',
            '{"model.pos_tag_input": "both"}',
        ],
    )
    def test_variants_train_save_and_load(self, overrides):
        self.ensure_model_can_train_save_and_load(CONFIG, overrides=overrides)

    def _model(self, **options) -> Model:
        return model_from_config(CONFIG, self.vocab, **options)

    def _tag_logits(self, model: Model) -> torch.Tensor:
        batch = Batch(self.instances[:3])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        _, encoded, embedded = model._encode(tensors["tokens"])
        return model._tag_logits(encoded, embedded)

    @pytest.mark.parametrize("tag_input, follows_encoder", [("embedder", False), ("both", True)])
    def test_the_tagger_reads_what_it_is_told(self, tag_input, follows_encoder):
        model = self._model(pos_tag_input=tag_input, pos_tag_hidden_dim=10)
        before = self._tag_logits(model)
        with torch.no_grad():
            for parameter in model.encoder.parameters():
                parameter.add_(1.0)
        after = self._tag_logits(model)
        assert before.shape[-1] == self.vocab.get_vocab_size("pos_tags")
        assert torch.equal(before, after) is not follows_encoder

    def test_an_unknown_tagger_input_is_refused(self):
        with pytest.raises(ConfigurationError, match='pos_tag_input must be "encoder"'):
            self._model(pos_tag_input="words")
