"""The head x label matrix: correct constituents with unary chains split, exact means of
hand-made contributions, both contribution measures against values computed by hand, and
`lal-analyze heads` on tiny fixture models (files, rows summing to 1, the PFL warning, the
span vectors equal to those the model explains with)."""
import math

import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.analysis.head_label import (
    HeadLabelAccumulator,
    correct_constituent_slices,
    correct_constituents,
    explainable_layer,
    head_label_analysis,
    read_head_label_csv,
    summary_markdown,
)
from lal_allennlp.api import Parser
from lal_allennlp.commands.analyze import main
from lal_allennlp.models.explanations import (
    averaged_contributions,
    contribution_measure,
    head_contributions,
    head_slices,
    softmax_contributions,
)
from tests.conftest import FIXTURES_ROOT

DEV = str(FIXTURES_ROOT / "ptb" / "dev")

# One span, three heads, d = 4 per head: [forward half ; backward half] in this package's layout
# [f_j - f_i ; b_i - b_j]. In the authors' layout the backward halves are negated:
# head 1 [1, 3, -2, 0], head 2 [-1, 1, 2, -4], head 3 [0, 0, 0, 0].
SLICES = torch.tensor(
    [[[1.0, 3.0, 2.0, 0.0], [-1.0, 1.0, -2.0, 4.0], [0.0, 0.0, 0.0, 0.0]]], dtype=torch.float64
)


def test_average_measure_by_hand():
    # min -4, max 3: z = (v + 4) / 7; head means 18/28, 14/28, 16/28, divided by their sum 48/28.
    expected = torch.tensor([[18 / 48, 14 / 48, 16 / 48]], dtype=torch.float64)
    torch.testing.assert_close(averaged_contributions(SLICES), expected, rtol=0, atol=1e-15)
    torch.testing.assert_close(
        contribution_measure(SLICES, "average"), expected, rtol=0, atol=1e-15
    )


def test_softmax_measure_by_hand():
    # Slice sums 2, -2, 0 -> min-max normalised 1, 0, 0.5 -> softmax.
    e, root = math.e, math.exp(0.5)
    expected = torch.tensor([[e, 1.0, root]], dtype=torch.float64) / (e + 1.0 + root)
    torch.testing.assert_close(softmax_contributions(SLICES), expected, rtol=0, atol=1e-15)
    torch.testing.assert_close(
        contribution_measure(SLICES, "softmax"), expected, rtol=0, atol=1e-15
    )


def test_constant_span_vectors_get_uniform_contributions():
    constant = torch.full((2, 4, 6), 0.5)
    for measure in ("average", "softmax"):
        torch.testing.assert_close(
            contribution_measure(constant, measure), torch.full((2, 4), 0.25)
        )
    with pytest.raises(ValueError, match="unknown contribution measure 'norm'"):
        contribution_measure(constant, "norm")


def test_slices_are_the_span_vector_per_head():
    torch.manual_seed(0)
    fenceposts = torch.randn(2, 5, 3 * 4)
    batch, starts, ends = torch.tensor([0, 1]), torch.tensor([0, 2]), torch.tensor([4, 3])
    slices = head_slices(fenceposts, batch, starts, ends, 3)
    assert slices.shape == (2, 3, 4)
    torch.testing.assert_close(slices[1, 2], fenceposts[1, 3, 8:12] - fenceposts[1, 2, 8:12])
    norms = slices.norm(dim=-1)
    torch.testing.assert_close(
        head_contributions(fenceposts, batch, starts, ends, 3), norms / norms.sum(-1, keepdim=True)
    )


def test_correct_constituents_split_unary_chains():
    predicted = [(0, 3, "S+VP"), (0, 1, "NP"), (1, 3, "VP"), (1, 2, "NP+NP")]
    gold = [(0, 3, "S"), (0, 1, "NP"), (1, 3, "NP"), (1, 2, "NP")]
    # S of S+VP is right, its VP is not; one of the two NPs of NP+NP is right.
    assert correct_constituents(predicted, gold) == [(0, 3, "S"), (0, 1, "NP"), (1, 2, "NP")]


def test_accumulated_means_are_exact(tmp_path):
    accumulator = HeadLabelAccumulator(num_heads=4)
    accumulator.add(
        torch.tensor([[0.5, 0.25, 0.25, 0.0], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]]),
        ["VP", "NP", "NP"],
    )
    accumulator.add(torch.tensor([[0.0, 0.5, 0.5, 0.0], [0.5, 0.5, 0.0, 0.0]]), ["NP", "PP"])
    matrix = accumulator.result("average")
    assert matrix.labels == ["NP", "PP", "VP"]  # by count, then by name
    assert matrix.counts.tolist() == [3, 1, 1]
    assert matrix.means.tolist() == [
        [1.25 / 3, 0.75 / 3, 0.75 / 3, 0.25 / 3],
        [0.5, 0.5, 0.0, 0.0],
        [0.5, 0.25, 0.25, 0.0],
    ]
    assert matrix.head_means.tolist() == [2.25 / 5, 1.5 / 5, 1.0 / 5, 0.25 / 5]
    assert matrix.top_heads("NP", 2) == [(0, 1.25 / 3), (1, 0.75 / 3)]
    # Head 4's best label relative to its mean 0.05 is NP (1/12); head 1's is PP (0.5 / 0.45).
    special = {h: (label, ratio) for h, label, _, ratio in matrix.specialisation()}
    assert special[3] == ("NP", (0.25 / 3) / 0.05)
    assert special[0] == ("PP", 0.5 / 0.45)
    path = tmp_path / "m.csv"
    matrix.write_csv(str(path))
    labels, counts, means = read_head_label_csv(str(path))
    assert (labels, counts) == (["NP", "PP", "VP"], [3, 1, 1])
    assert means.tolist() == matrix.means.tolist()
    assert path.read_text().splitlines()[0] == "label,count,head_1,head_2,head_3,head_4"


def _model(use_feed_forward: bool, encoder: str = "lal_stack"):
    """An untrained label attention parser (or a BiLSTM one) on the fixture treebank."""
    torch.manual_seed(1)
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    instances = list(reader.read(DEV))
    vocab = Vocabulary.from_instances(instances)
    if encoder == "lal_stack":
        encoder_params = {
            "type": "lal_stack",
            "input_dim": 16,
            "self_attention": {
                "d_model": 32,
                "num_layers": 1,
                "num_heads": 2,
                "d_kv": 8,
                "d_ff": 32,
            },
            "label_attention": {
                "num_heads": 4,
                "d_kv": 8,
                "d_proj": 8,
                "use_feed_forward": use_feed_forward,
                "d_ff": 32,
            },
        }
    else:
        encoder_params = {"type": "lstm", "input_size": 16, "hidden_size": 8, "bidirectional": True}
    params = Params(
        {
            "type": "lal_span_parser",
            "text_field_embedder": {
                "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 16}}
            },
            "encoder": encoder_params,
            "span_hidden_dim": 16,
        }
    )
    model = Model.from_params(vocab=vocab, params=params)
    model.eval()
    return model, instances


def test_exact_model_and_batching():
    model, instances = _model(use_feed_forward=False)
    one = head_label_analysis(model, instances, batch_size=1)
    batched = head_label_analysis(model, instances, batch_size=6)
    assert one.exact and not one.failures and one.sentences == len(instances) == 15
    assert one.correct == int(one.matrices["average"].counts.sum()) > 0
    for measure in ("average", "softmax"):
        a, b = one.matrices[measure], batched.matrices[measure]
        assert a.labels == b.labels and a.counts.tolist() == b.counts.tolist()
        np.testing.assert_allclose(a.means, b.means, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(a.means.sum(axis=1), 1.0, atol=1e-12)
    assert "Contributions are **exact**" in summary_markdown(one, min_count=1)


def test_models_without_head_slices_are_refused():
    model, _ = _model(use_feed_forward=False, encoder="lstm")
    with pytest.raises(ValueError, match="has no label attention layer"):
        explainable_layer(model)


@pytest.fixture(scope="module")
def archive(fixture_archive) -> str:
    """The `lal_parser` fixture: a label attention layer of 4 heads, with the PFL."""
    return fixture_archive("lal_parser")


def test_slices_are_those_the_model_explains_with(archive):
    # The norm shares of the slices taken through the hook equal the predictor's own
    # span_contributions for the same spans (the lal-explain path).
    parser = Parser.load(archive)
    instances = list(parser.predictor._dataset_reader.read(DEV))
    compared = 0
    for constituents, slices in correct_constituent_slices(parser.model, instances, batch_size=4):
        norms = slices.norm(dim=-1)
        shares = norms / norms.sum(dim=-1, keepdim=True)
        for (k, start, end, _), row in zip(constituents, shares):
            metadata = instances[k]["metadata"].metadata
            result = parser.parse(metadata["words"], tags=metadata["pos_tags"], explain=True)
            span = [(s, e) for s, e, _ in result.spans].index((start, end))
            explained = torch.tensor(result.explanation["span_contributions"][span])
            torch.testing.assert_close(row.float(), explained, rtol=1e-4, atol=1e-5)
            compared += 1
            if compared == 6:
                return
    assert compared > 0


def test_command_writes_the_matrix(archive, tmp_path, capsys):
    out = tmp_path / "heads"
    code = main(
        [
            "heads",
            archive,
            DEV,
            "-o",
            str(out),
            "--measure",
            "both",
            "--min-count",
            "1",
            "--batch-size",
            "4",
            "--no-progress",
        ]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "warning: the label attention layer" in err and "(PFL)" in err
    assert sorted(p.name for p in out.iterdir()) == [
        "head_label.md",
        "head_label_average.csv",
        "head_label_average.png",
        "head_label_softmax.csv",
        "head_label_softmax.png",
    ]
    for measure in ("average", "softmax"):
        labels, counts, means = read_head_label_csv(str(out / f"head_label_{measure}.csv"))
        assert means.shape == (len(labels), 4) and counts == sorted(counts, reverse=True)
        np.testing.assert_allclose(means.sum(axis=1), 1.0, atol=1e-9)
        assert (out / f"head_label_{measure}.png").read_bytes()[:4] == b"\x89PNG"
    summary = (out / "head_label.md").read_text(encoding="utf-8")
    assert "**Warning**" in summary and "## Measure: softmax" in summary
    assert f"| {labels[0]} | {counts[0]} | head " in summary


def test_command_refuses_and_names_missing_inputs(archive, fixture_archive, tmp_path, capsys):
    assert main(["heads", archive, str(tmp_path / "no-trees"), "-o", str(tmp_path / "o")]) == 2
    assert f"cannot read the treebank {tmp_path / 'no-trees'}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["heads", str(tmp_path / "none.tar.gz"), DEV, "-o", str(tmp_path / "o")])
    assert exit_.value.code == 2
    assert f"No model archive at {tmp_path / 'none.tar.gz'}" in capsys.readouterr().err
    bilstm = fixture_archive("span_parser")
    assert main(["heads", bilstm, DEV, "-o", str(tmp_path / "o")]) == 1
    assert "has no label attention layer" in capsys.readouterr().err
