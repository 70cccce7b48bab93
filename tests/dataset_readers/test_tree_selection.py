"""Tree selections at the end of a treebank path (`FILE[:8000]`), for `lal_ptb` and `lal_ctb`."""
import pytest

from lal_allennlp.dataset_readers import PennTreebankReader, TreebankPathError
from lal_allennlp.syntax.paths import split_tree_selection
from tests.conftest import FIXTURES_ROOT, SHARED_DATA

SINICA_SAMPLE = FIXTURES_ROOT / "sinica" / "sample.trees"  # 8 hand-written Sinica-style trees
SINICA = SHARED_DATA / "sinica" / "sinica-train-dev.trees"


def _first_words(path):
    return [instance["metadata"]["words"][0] for instance in PennTreebankReader().read(path)]


def test_split_tree_selection():
    assert split_tree_selection("a/b.trees[:8000]") == ("a/b.trees", (0, 8000))
    assert split_tree_selection("a/b.trees[8000:]") == ("a/b.trees", (8000, None))
    assert split_tree_selection("DIR[3:5]") == ("DIR", (3, 5))
    assert split_tree_selection("a/b.trees") == ("a/b.trees", None)
    assert split_tree_selection("wsj/wsj_01[0-4]*.mrg") == ("wsj/wsj_01[0-4]*.mrg", None)
    with pytest.raises(ValueError, match="is empty"):
        split_tree_selection("a.trees[5:5]")


def test_selection_of_a_file():
    every = _first_words(str(SINICA_SAMPLE))
    assert every == ["我們", "小華", "也", "他", "美麗", "天氣", "下雨", "你"]
    assert _first_words(f"{SINICA_SAMPLE}[:3]") == every[:3]
    assert _first_words(f"{SINICA_SAMPLE}[3:]") == every[3:]
    assert _first_words(f"{SINICA_SAMPLE}[2:4]") == every[2:4]
    assert _first_words(f"{SINICA_SAMPLE}[6:100]") == every[6:]


def test_selection_counts_across_files_and_stops_reading():
    reader = PennTreebankReader()
    every = [i["metadata"]["words"] for i in reader.read(str(FIXTURES_ROOT / "ptb" / "train"))]
    assert len(every) > 4
    chosen = [
        i["metadata"]["words"] for i in reader.read(f"{FIXTURES_ROOT / 'ptb' / 'train'}[1:4]")
    ]
    assert chosen == every[1:4]
    assert reader.stats["trees"] == 3


def test_bad_selection_is_a_path_error():
    with pytest.raises(TreebankPathError, match="is empty: 2 is not above 4"):
        list(PennTreebankReader().read(f"{SINICA_SAMPLE}[4:2]"))


@pytest.mark.skipif(not SINICA.exists(), reason="../shared/data/sinica is not here")
def test_sinica_train_dev_split():
    reader = PennTreebankReader()
    train = list(reader.read(f"{SINICA}[:8000]"))
    assert len(train) == 8000 and reader.stats["skipped_errors"] == 0
    dev = list(reader.read(f"{SINICA}[8000:]"))
    assert len(dev) == 1000
    assert train[-1]["metadata"]["words"][:3] == ["他", "彷彿", "是"]
    assert dev[0]["metadata"]["words"][:4] == ["我", "要", "找", "多"]
    # Sinica labels with features (`NP[+theme]`) are not cut at their `+` (function tags or
    # unary chains).
    labels = {label for instance in train for label in instance["gold_span_labels"].labels}
    assert "NP[+theme]" in labels
