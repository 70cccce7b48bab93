import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Vocabulary
from allennlp.data.fields import MetadataField

from lal_allennlp.syntax.joint_spans import SUB_HEAD_LABEL, tree_and_heads_to_joint_spans
from lal_allennlp.structs import ChartLabels, JointSpanChart, SpanChart, decoder_columns
from lal_allennlp.structs.joint_span_chart import decoder_label_names
from lal_allennlp.syntax.trees import tree_to_spans, tree_to_string
from lal_allennlp.models.joint_parser import JointSpanParser, _PairLabelScorer
from lal_allennlp.modules import fencepost_features
from tests.conftest import FIXTURES_ROOT, assert_plain_json, model_from_config

CONFIG = FIXTURES_ROOT / "joint_parser" / "experiment.jsonnet"


class TestJointSpanParser(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, FIXTURES_ROOT / "ptb" / "train")

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(CONFIG)

    def _tensors(self, instances):
        batch = Batch(instances)
        batch.index_instances(self.vocab)
        return batch.as_tensor_dict()

    def test_decoder_gets_gold_tree_and_heads_from_scores_that_favour_them(self):
        # Gold joint spans +10, other labels -2, gold arcs log-prob 0, others -10: the decoder
        # must give back exactly the gold tree and heads, through the label reordering
        # (<H> is decoder label 1 whatever its vocabulary id).
        model = self.model.eval()
        instances = self.instances[:5]
        tensors = self._tensors(instances)
        max_length = tensors["tokens"]["tokens"]["tokens"].size(1)
        gold = SpanChart.gold(tensors["gold_spans"], tensors["gold_span_labels"], max_length)
        chart = torch.full(gold.shape + (model.num_span_labels + 1,), -2.0)
        chart[..., 0] = 0.0
        b, i, j = gold.nonzero(as_tuple=True)
        chart[b, i, j, gold[b, i, j]] = 10.0
        heads = tensors["gold_heads"]
        log_probs = torch.full((len(instances), max_length, max_length + 1), -10.0)
        log_probs.scatter_(2, heads.unsqueeze(2), 0.0)
        metadata = [x["metadata"].metadata for x in instances]
        lengths = torch.tensor([len(meta["words"]) for meta in metadata])
        encoded = torch.randn(len(instances), max_length + 2, model.encoder.get_output_dim())
        joint = JointSpanChart(
            SpanChart(chart, lengths), log_probs, model._decoder_columns, model.span_weight, encoded
        )
        mask = tensors["tokens"]["tokens"]["tokens"] > 0
        words = [meta["words"] for meta in metadata]
        tags = [meta["pos_tags"] for meta in metadata]
        output = model._decode(joint, encoded, mask, words, tags)
        for k, meta in enumerate(metadata):
            n = len(meta["words"])
            assert output["heads"][k, :n].tolist() == meta["gold_heads"]
            assert tree_to_string(output["trees"][k]) == tree_to_string(meta["gold_tree"])
            assert output["labelled_spans"][k] == tree_to_spans(meta["gold_tree"])[2]

    def test_label_order_puts_sub_head_second_and_handles_its_absence(self):
        # The fixture's heads come from head rules, which never need <H>: decoder label 1 then
        # has no chart column (-1, score -inf) and the others keep vocabulary order.
        assert SUB_HEAD_LABEL not in self.vocab.get_token_to_index_vocabulary("span_labels")
        order = self.model._decoder_columns
        assert order == [0, -1] + list(range(1, self.model.num_span_labels + 1))
        vocab = Vocabulary()
        vocab.add_tokens_to_namespace(["NP", SUB_HEAD_LABEL, "S"], "span_labels")
        labels = ChartLabels(vocab)
        assert decoder_columns(labels) == [0, 2, 1, 3]
        assert decoder_label_names(labels, [0, 2, 1, 3]) == ["", SUB_HEAD_LABEL, "NP", "S"]
        vocab = Vocabulary()
        vocab.add_tokens_to_namespace(["NP"], "span_labels")
        assert decoder_columns(ChartLabels(vocab)) == [0, -1, 1]

    def test_punctuation_is_left_out_of_attachment_scores(self):
        model = self.model.eval()
        model.attachment_scores.reset()
        instance = self.instances[0]
        tensors = self._tensors([instance])
        tags = instance["pos_tags"].labels
        gold_heads = tensors["gold_heads"]
        predicted = gold_heads.clone()
        punctuation = [k for k, tag in enumerate(tags) if tag in (",", ".")]
        assert punctuation
        for k in punctuation:  # wrong heads on punctuation only
            predicted[0, k] = (gold_heads[0, k] + 1) % (len(tags) + 1)
        labels = tensors["gold_dependency_labels"]
        mask = torch.ones_like(gold_heads, dtype=torch.bool)
        output = {"heads": predicted, "dependency_label_ids": labels, "trees": []}
        gold = {
            "pos_tags": tensors["pos_tags"],
            "gold_heads": gold_heads,
            "gold_dependency_labels": labels,
        }
        metadata = [{"words": instance["metadata"]["words"]}]
        model._update_metrics(output, metadata, mask, gold)
        scores = model.attachment_scores.get_metric(reset=True)
        assert scores["UAS"] == 1.0 and scores["LAS"] == 1.0
        gold["pos_tags"] = None  # no tags: all words count
        model._update_metrics(output, metadata, mask, gold)
        scores = model.attachment_scores.get_metric(reset=True)
        n = len(tags)
        assert scores["UAS"] == pytest.approx((n - len(punctuation)) / n)

    def test_output_has_heads_labels_and_conllu(self):
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances[:4])
        for instance, output in zip(self.instances, outputs):
            words = instance["metadata"]["words"]
            n = len(words)
            heads = output["heads"]
            assert len(heads) == n and sum(h == 0 for h in heads) == 1
            assert all(0 <= h <= n for h in heads)
            assert len(output["dependency_labels"]) == n
            rows = [line.split("\t") for line in output["conllu"].strip().split("\n")]
            assert [row[1] for row in rows] == words
            assert [int(row[6]) for row in rows] == heads
            assert [row[7] for row in rows] == output["dependency_labels"]
            assert output["trees"].startswith("(TOP ")
            # The predicted tree and heads form a joint span tree (they agree).
            from nltk import Tree

            tree = Tree.fromstring(output["trees"])
            tree_and_heads_to_joint_spans(tree, heads)
            # The labelled spans and tags, taken from the decoder's rows and the tagger, are
            # those of the tree.
            _, tags, spans = tree_to_spans(tree)
            assert [tuple(span) for span in output["labelled_spans"]] == spans
            assert output["pos_tags"] == tags

    @pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
    def test_losses_under_an_autocast_of_the_whole_model(self, dtype):
        """Mixed-precision training wraps the whole model in an autocast (allennlp's `use_amp`
        for float16; bfloat16 on GPUs and CPUs that have it): the arc, dependency label and
        POS losses are computed in float32 (allennlp's losses refuse bfloat16) and come out
        finite, with gradients."""
        model = self.model.train()
        tensors = self._tensors(self.instances[:3])
        with torch.autocast("cpu", dtype=dtype):
            loss = model(**tensors)["loss"]
        assert loss.dtype == torch.float32 and torch.isfinite(loss)
        loss.backward()
        assert torch.isfinite(model.arc_head[0].weight.grad).all()

    def test_explain_is_refused_clearly(self):
        self.model.eval()
        instance = self.instances[0]
        instance.add_field("explain", MetadataField(True))
        try:
            with pytest.raises(ConfigurationError, match="lal_span_parser"):
                self.model.forward_on_instances([instance])
        finally:
            del instance.fields["explain"]

    def test_output_carries_no_tensors_the_caller_does_not_need(self):
        self.model.eval()
        for output in self.model.forward_on_instances(self.instances[:2]):
            assert set(output) == {
                "words", "trees", "pos_tags", "labelled_spans", "heads", "dependency_labels",
                "conllu",
            }


def test_pair_label_scorer_is_the_biaffine_formula():
    torch.manual_seed(0)
    scorer = _PairLabelScorer(5, 3)
    dependents, heads = torch.randn(2, 4, 5), torch.randn(2, 4, 5)
    scores = scorer(dependents, heads)
    assert scores.shape == (2, 4, 3)
    weight = scorer.weight.detach()
    for b in range(2):
        for k in range(4):
            d = torch.cat([dependents[b, k], torch.ones(1)])
            h = torch.cat([heads[b, k], torch.ones(1)])
            for label in range(3):
                expected = d @ weight[label] @ h
                assert scores[b, k, label].item() == pytest.approx(expected.item(), abs=1e-5)


def test_pair_label_scorer_gradients_equal_torch_bilinear():
    # The scorer's single matrix product of outer products against torch's bilinear kernel on the
    # same inputs (with the appended ones): same scores and same gradients for both inputs and W.
    torch.manual_seed(1)
    scorer = _PairLabelScorer(6, 4)
    dependents = torch.randn(3, 5, 6, requires_grad=True)
    heads = torch.randn(3, 5, 6, requires_grad=True)
    upstream = torch.randn(3, 5, 4)
    (scorer(dependents, heads) * upstream).sum().backward()
    ours = [dependents.grad.clone(), heads.grad.clone(), scorer.weight.grad.clone()]
    dependents.grad, heads.grad, scorer.weight.grad = None, None, None
    ones = torch.ones(3, 5, 1)
    reference = torch.nn.functional.bilinear(
        torch.cat([dependents, ones], -1), torch.cat([heads, ones], -1), scorer.weight
    )
    (reference * upstream).sum().backward()
    theirs = [dependents.grad, heads.grad, scorer.weight.grad]
    for mine, expected in zip(ours, theirs):
        assert torch.allclose(mine, expected, atol=1e-5, rtol=1e-5)


def test_conllu_predictor_and_lal_parse_format(tmp_path):
    import io

    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from allennlp.models import Model

    from lal_allennlp.commands.parse import parse_lines
    from lal_allennlp.predictors.parser_predictor import ConlluPredictor

    params = Params.from_file(str(CONFIG))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model")).eval()
    predictor = ConlluPredictor(model, reader)
    result = predictor.predict_json({"sentence": "The cat sat on the mat."})
    assert_plain_json(result)
    assert result["words"] == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert len(result["heads"]) == 7 and len(result["dependency_labels"]) == 7
    text = predictor.dump_line(result)
    rows = [line.split("\t") for line in text.strip().split("\n")]
    assert [row[0] for row in rows] == [str(k) for k in range(1, 8)]
    assert [int(row[6]) for row in rows] == result["heads"]
    assert text.endswith("\n\n")
    errors = io.StringIO()
    outputs = list(
        parse_lines(predictor, ["Dogs bark .", "", "Cats sleep ."], 8, errors, False, "conllu")
    )
    assert outputs[1] == "" and "line 2" in errors.getvalue()
    assert outputs[0].split("\n")[0].split("\t")[1] == "Dogs"


class TestDependencyInputs(ModelTestCase):
    """`dependency_input`: the arc and label MLPs read what they are told to, and every variant
    trains, saves and loads."""

    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, FIXTURES_ROOT / "ptb" / "train")

    @pytest.mark.parametrize("dependency_input", ["embedder", "both"])
    def test_variants_train_save_and_load(self, dependency_input):
        self.ensure_model_can_train_save_and_load(
            CONFIG, overrides=f'{{"model.dependency_input": "{dependency_input}"}}'
        )

    def _model(self, **options) -> JointSpanParser:
        return model_from_config(CONFIG, self.vocab, **options)

    def _arc_and_label_scores(self, model: JointSpanParser):
        batch = Batch(self.instances[:3])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        mask, encoded, embedded = model._encode(tensors["tokens"])
        fenceposts = fencepost_features(encoded, model.span_partitions)
        chart = model._chart(encoded, fenceposts, mask, embedded)
        heads = torch.zeros_like(mask, dtype=torch.long)
        labels = model._label_logits(chart.word_features, heads)
        return chart.word_features, chart.arc_log_probs, labels

    @pytest.mark.parametrize(
        "dependency_input, follows_encoder",
        [("encoder", True), ("embedder", False), ("both", True)],
    )
    def test_the_dependency_scorers_read_what_they_are_told(
        self, dependency_input, follows_encoder
    ):
        model = self._model(dependency_input=dependency_input)
        before = self._arc_and_label_scores(model)
        with torch.no_grad():
            for parameter in model.encoder.parameters():
                parameter.add_(1.0)
        after = self._arc_and_label_scores(model)
        for first, second in zip(before, after):  # features, arc scores, label scores
            assert torch.equal(first, second) is not follows_encoder
        before_features = before[0]
        embedder_dim = model.text_field_embedder.get_output_dim()
        encoder_dim = model.encoder.get_output_dim()
        expected = {"encoder": encoder_dim, "embedder": embedder_dim,
                    "both": encoder_dim + embedder_dim}[dependency_input]
        assert before_features.size(-1) == expected

    def test_an_unknown_input_is_refused(self):
        with pytest.raises(ConfigurationError, match='dependency_input must be .*"words"'):
            self._model(dependency_input="words")
