"""
Fuzzing of the treebank readers (`lal_ptb`, `lal_ctb`, `lal_dependencies`) on slices of the
real treebanks: each case mutates a slice (`reader_mutations`), reads it with
`on_error="raise"` and `"skip"`, and checks the properties of `reader_properties`: the right
sentences or the project's own error naming the file and line, never a foreign exception or a
silently wrong, merged or dropped sentence, and in skip mode every untouched sentence with
the skips counted.

The hypothesis profile `reader-fuzz-ci` (the default, derandomized: CI runs the same cases
every time) runs about 500 cases in all, in about 10 s; `LAL_READER_FUZZ=long` runs ten times
as many random mutations, with fresh randomness. `benchmarks/fuzz_readers.py` runs the same cases by the hundred
thousand.
"""

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import reader_mutations, reader_properties
from tests.fuzz.reader_properties import SHARED_DATA, Corpus, check_case, load_corpora

pytestmark = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason=f"the shared treebanks are not at {SHARED_DATA}"
)

settings.register_profile(
    "reader-fuzz-ci",
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "reader-fuzz-long",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = settings.get_profile(
    "reader-fuzz-long" if os.environ.get("LAL_READER_FUZZ") == "long" else "reader-fuzz-ci"
)
# The mutations that keep a file's content (the same sentences must come back, none skipped).
CONTENT_KEEPING = ["duplicate_blank_line", "tabs_to_spaces", "crlf", "add_bom"]
CORPUS_NAMES = ["wsj", "sinica", "ctb-markup", "ewt", "gsd", "malt-tab", "conllx"]


@pytest.fixture(scope="module")
def corpora():  # type: ignore[no-untyped-def]
    return load_corpora()


def _fail_if_broken(corpus: Corpus, mutated: reader_mutations.Mutated) -> None:
    result = check_case(corpus, mutated)
    assert result.failure is None, (
        f"{corpus.name}, {mutated.name} ({mutated.description}): {result.failure}"
    )


@pytest.mark.parametrize("name", CORPUS_NAMES)
@PROFILE
@given(rng=st.randoms(use_true_random=False))
def test_mutated_treebank_reads_right_or_fails_cleanly(corpora, name, rng):
    corpus = corpora[name]
    mutated = reader_mutations.mutate(corpus.text, corpus.family, rng, corpus.codecs)
    _fail_if_broken(corpus, mutated)


@pytest.mark.parametrize("name", CORPUS_NAMES)
@settings(PROFILE, max_examples=max(PROFILE.max_examples // 5, 5))
@given(rng=st.randoms(use_true_random=False), keeping=st.sampled_from(CONTENT_KEEPING))
def test_content_keeping_mutations_read_the_same(corpora, name, rng, keeping):
    corpus = corpora[name]
    mutated = reader_mutations.mutations_for(corpus.family)[keeping](
        corpus.text, corpus.family, rng
    )
    assert mutated.same
    _fail_if_broken(corpus, mutated)


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_encoding_read_with_its_option_gives_the_originals(corpora, name):
    corpus = corpora[name]
    for codec in corpus.codecs:
        try:
            data = corpus.text.encode(codec)
        except UnicodeEncodeError:
            continue
        mutated = reader_mutations.Mutated("reencode", codec, data, encoding=codec, same=True)
        _fail_if_broken(corpus, mutated)


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_cut_points_of_the_first_sentences(corpora, name):
    """
    Truncation (the most common damage) at 20 points spread over the first two sentences and
    at each character around their ends.
    """
    corpus = corpora[name]
    end = corpus.regions[1][3]
    cuts = set(range(0, end + 1, max(1, end // 20)))
    for _, _, content_end, _ in corpus.regions[:2]:
        cuts.update(range(max(content_end - 2, 0), content_end + 3))
    for cut in sorted(cuts):
        data = corpus.text[:cut].encode("utf-8")
        _fail_if_broken(corpus, reader_mutations.Mutated("truncate", f"cut {cut}", data, cut=cut))


def test_the_oracle_catches_wrong_merged_and_dropped_sentences(corpora):
    """The properties can fail: wrong, extra and missing sentences are each caught."""
    corpus = corpora["malt-tab"]
    mutated = reader_mutations.crlf(corpus.text, corpus.family, random.Random(0))
    expectation = reader_properties.expect(corpus, mutated)
    values = list(corpus.values)
    assert reader_properties._match(values, expectation, whole=True) == 0
    with pytest.raises(reader_properties.PropertyFailure, match="none of the originals"):
        reader_properties._match(values + [values[0]], expectation, whole=True)
    with pytest.raises(reader_properties.PropertyFailure, match="sentence 2 .kept. is missing"):
        reader_properties._match(values[:1] + values[2:], expectation, whole=False)
    merged = (values[0][0] + values[1][0],) + values[0][1:]
    with pytest.raises(reader_properties.PropertyFailure, match="sentence 1 .kept. is missing"):
        reader_properties._match([merged] + values[2:], expectation, whole=False)
