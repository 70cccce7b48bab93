"""`lal_allennlp.api.Parser` on tiny archives of three model families: a result equals the
predictor's JSON output, `parse_many` keeps the input's order and survives bad sentences, and
loading names what is wrong with a path."""
import tarfile
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
from allennlp.common.checks import ConfigurationError

from lal_allennlp.api import Parser
from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.predictors.inputs import InputError

# Sentences of the fixture vocabulary's kind, their lengths out of order.
SENTENCES = [
    "The cat sat on the mat .",
    "Dogs bark .",
    "The old man saw a big dog in the park yesterday .",
    "It rained .",
    "She gave him the book that he wanted .",
]
TAGS = {
    "Dogs bark .": ["NNS", "VBP", "."],
    "It rained .": ["PRP", "VBD", "."],
}


@pytest.fixture(scope="module")
def archives(fixture_archive) -> Dict[str, str]:
    """One-epoch archives of the joint, dependency and unsupervised fixture configs."""
    return {
        family: fixture_archive(family)
        for family in ("joint_parser", "stack_attention", "tree_transformer")
    }


@pytest.fixture(scope="module")
def parsers(archives) -> Dict[str, Parser]:
    return {family: Parser.load(path) for family, path in archives.items()}


def _tags(sentence: str) -> List[str]:
    """Tags for the dependency parser, which reads them: the known ones or NN per word."""
    return TAGS.get(sentence, ["NN"] * len(sentence.split()))


def test_parse_equals_the_predictor_output(parsers):
    for sentence in SENTENCES:
        for family, parser in parsers.items():
            tags = _tags(sentence) if family == "stack_attention" else None
            request = {"sentence": sentence, **({"tags": tags} if tags else {})}
            expected = parser.predictor.predict_json(request)
            result = parser.parse(sentence, tags=tags)
            assert result.words == expected["words"]
            assert result.heads == expected.get("heads")
            assert result.dependency_labels == expected.get("dependency_labels")
            assert result.tree_string == expected.get("tree")
            if family == "stack_attention":
                assert result.tree is None and result.spans is None
                assert result.pos_tags == tags == expected["pos"]
                assert result.to_conllu() == expected["conllu"]
                continue
            assert " ".join(str(result.tree).split()) == expected["tree"]
            assert result.tree.leaves() == expected["words"]
            if family == "joint_parser":
                assert result.pos_tags == expected["pos_tags"]
                assert result.spans == [tuple(span) for span in expected["spans"]]
            else:  # unlabelled
                assert result.pos_tags is None and result.heads is None
                assert result.spans == [(start, end, "X") for start, end in expected["spans"]]


def test_words_and_text_give_the_same_parse(parsers):
    parser = parsers["joint_parser"]
    assert parser.parse("The cat sat .") == parser.parse(["The", "cat", "sat", "."])


def test_the_dependency_parser_without_tags_says_it_needs_them(parsers):
    with pytest.raises(ValueError, match="this model reads POS tags"):
        parsers["stack_attention"].parse("Dogs bark .")


@pytest.mark.parametrize("batch_size", [1, 3])
def test_parse_many_keeps_the_input_order(parsers, batch_size):
    for family in ("joint_parser", "tree_transformer"):
        parser = parsers[family]
        one_by_one = [parser.parse(sentence) for sentence in SENTENCES]
        assert list(parser.parse_many(SENTENCES, batch_size=batch_size)) == one_by_one
    parser = parsers["stack_attention"]
    requests = [{"sentence": sentence, "tags": _tags(sentence)} for sentence in SENTENCES]
    assert list(parser.parse_many(requests, batch_size=batch_size)) == [
        parser.parse(sentence, tags=_tags(sentence)) for sentence in SENTENCES
    ]


def test_parse_many_reads_the_input_one_batch_at_a_time(parsers):
    read = []

    def sentences() -> Iterator[str]:
        for sentence in SENTENCES:
            read.append(sentence)
            yield sentence

    results = parsers["joint_parser"].parse_many(sentences(), batch_size=2)
    assert read == []
    next(results)
    assert read == SENTENCES[:2]
    next(results)
    assert read == SENTENCES[:2]
    next(results)
    assert read == SENTENCES[:4]
    assert len(list(results)) == len(SENTENCES) - 3


def test_a_bad_sentence_in_parse_many_gets_an_error_and_the_others_are_parsed(parsers):
    parser = parsers["joint_parser"]
    sentences = [SENTENCES[0], "   ", SENTENCES[1], ["two words"], 7, SENTENCES[2]]
    results = list(parser.parse_many(sentences, batch_size=3))
    assert [result.error for result in results] == [
        None,
        "sentence 1: Cannot parse an empty sentence: '   ' has no words",
        None,
        "sentence 3: word 1 of \"tokens\", 'two words', is empty or holds white space: a token "
        "is one word (split it into several tokens, or drop it)",
        "sentence 4: a sentence must be a string or a list of words, got 7",
        None,
    ]
    for position in (0, 2, 5):
        assert results[position] == parser.parse(sentences[position])
    with pytest.raises(ValueError, match="not parsed: sentence 1: Cannot parse an empty"):
        results[1].to_conllu()


def test_a_sentence_the_model_fails_on_does_not_stop_its_batch(parsers):
    # The dependency model fails in its forward pass on a sentence without tags, after the
    # requests were checked: the batch is parsed again one sentence at a time.
    parser = parsers["stack_attention"]
    with_tags = {"sentence": "Dogs bark .", "tags": _tags("Dogs bark .")}
    results = list(parser.parse_many([with_tags, "It rained .", with_tags], batch_size=3))
    assert results[1].error == (
        "sentence 1: this model reads POS tags: give `tags` with the words (or train it "
        "without pos_tag_embedding)"
    )
    expected = parser.parse("Dogs bark .", tags=_tags("Dogs bark ."))
    assert results[0] == results[2] == expected


def _count_forward_passes(parser: Parser, monkeypatch) -> List[List[List[str]]]:
    """The words of every batch that reaches the model's forward pass, recorded as they come."""
    forward = parser.model.forward_on_instances
    batches: List[List[List[str]]] = []

    def forward_on_instances(instances):
        batches.append([list(instance["metadata"].metadata["words"]) for instance in instances])
        return forward(instances)

    monkeypatch.setattr(parser.model, "forward_on_instances", forward_on_instances)
    return batches


def test_a_failing_sentence_is_retried_alone_once_and_the_others_once_more(archives,
                                                                            monkeypatch):
    # One place isolates a failing sentence (the predictor): the batch is parsed once, then
    # each of its sentences once on its own; nothing above it parses any of them again.
    parser = Parser.load(archives["stack_attention"])
    with_tags = {"sentence": "Dogs bark .", "tags": _tags("Dogs bark .")}
    sentences = [with_tags, "It rained .", with_tags, "   ", with_tags]
    expected = parser.parse("Dogs bark .", tags=_tags("Dogs bark ."))
    batches = _count_forward_passes(parser, monkeypatch)
    results = list(parser.parse_many(sentences, batch_size=5))
    dogs, rained = ["Dogs", "bark", "."], ["It", "rained", "."]
    # The blank sentence never reaches the model; the untagged one fails in it, twice at most.
    assert batches == [[dogs, rained, dogs, dogs], [dogs], [rained], [dogs], [dogs]]
    assert len(batches) <= 1 + len(batches[0])
    assert [result.error for result in results] == [
        None,
        "sentence 1: this model reads POS tags: give `tags` with the words (or train it without "
        "pos_tag_embedding)",
        None,
        "sentence 3: Cannot parse an empty sentence: '   ' has no words",
        None,
    ]
    assert results[1].reason.startswith("this model reads POS tags")
    assert results[0] == results[2] == results[4] == expected


def test_a_batch_that_parses_reaches_the_model_once(parsers, monkeypatch):
    parser = parsers["joint_parser"]
    batches = _count_forward_passes(parser, monkeypatch)
    assert all(result.error is None for result in parser.parse_many(SENTENCES, batch_size=3))
    assert [len(batch) for batch in batches] == [3, 2]


# What each fixture config's model can give: (trees, heads, predicted POS tags, explanations,
# confidences, k-best parses).
CAPABILITIES = {
    "span_parser": (True, False, True, False, False, True),  # a BiLSTM span parser, hinge loss
    "lal_parser": (True, False, True, True, True, True),  # label attention layer, tree CRF
    "joint_parser": (True, True, True, False, True, False),  # hinge loss: head confidences only
    "stack_attention": (False, True, False, False, True, True),
    "tree_transformer": (True, False, False, True, False, False),
}


@pytest.mark.parametrize("family", sorted(CAPABILITIES))
def test_capabilities_are_what_the_model_gives(fixture_archive, family):
    parser = Parser.load(fixture_archive(family))
    capabilities = parser.capabilities
    assert capabilities == ParseCapabilities(*CAPABILITIES[family])
    # And the model gives exactly that: a tree, heads, its own tags (the given ones, unknown
    # to every model, are what a model without a tagger gives back), explanations and
    # confidences on request; a model without them refuses the request or gives none (the
    # dependency parser's predictor reads neither switch).
    tags = ["ZZZ", "ZZZ", "ZZZ"]
    result = parser.parse("Dogs bark .", tags=tags)
    assert (result.tree_string is not None) == capabilities.trees
    assert (result.spans is not None) == capabilities.trees
    assert (result.heads is not None) == (result.to_json().get("conllu") is not None)
    assert (result.heads is not None) == capabilities.heads
    assert (result.pos_tags not in (None, tags)) == capabilities.pos_tags
    for option, value, key, capable in (
        ("explain", True, "explanation", capabilities.explanations),
        ("confidence", True, "sentence_confidence", capabilities.confidences),
        ("kbest", 2, "kbest", capabilities.kbest),
    ):
        try:
            asked = parser.parse("Dogs bark .", tags=tags, **{option: value})
        except ConfigurationError:
            assert not capable, f"{family} refused {option}"
            continue
        assert (getattr(asked, key) is not None) == capable, option
    if not capabilities.kbest:  # refused once, before any sentence is parsed
        with pytest.raises(InputError, match="k-best decoder"):
            list(parser.parse_many(["Dogs bark ."], kbest=2))


def test_parse_raises_input_errors(parsers):
    parser = parsers["joint_parser"]
    with pytest.raises(InputError, match="Cannot parse an empty sentence"):
        parser.parse("")
    with pytest.raises(InputError, match="control character U\\+001B at character 5"):
        parser.parse("The \x1b[1mcat")
    with pytest.raises(InputError, match="Got 1 tags for 2 tokens"):
        parser.parse(["Dogs", "bark"], tags=["NNS"])
    with pytest.raises(InputError, match="a string or a list of words, got None"):
        parser.parse(None)  # type: ignore[arg-type]


def test_max_words_is_the_limit_of_the_loaded_parser(archives):
    parser = Parser.load(archives["joint_parser"], max_words=3)
    assert parser.parse("Dogs bark .").words == ["Dogs", "bark", "."]
    with pytest.raises(InputError, match="has 4 words, more than the limit of 3"):
        parser.parse("The cat sat .")


def test_to_conllu_of_a_joint_model_has_one_row_per_word_with_the_heads(parsers):
    result = parsers["joint_parser"].parse(SENTENCES[2])
    rows = [line.split("\t") for line in result.to_conllu().splitlines() if line]
    assert result.to_conllu().endswith("\n\n")
    assert [row[0] for row in rows] == [str(n) for n in range(1, len(result.words) + 1)]
    assert [row[1] for row in rows] == result.words
    assert [int(row[6]) for row in rows] == result.heads
    assert [row[7] for row in rows] == result.dependency_labels


def test_to_conllu_of_a_constituency_only_model_says_why_not(parsers):
    with pytest.raises(ValueError, match="CoNLL-U needs heads"):
        parsers["tree_transformer"].parse(SENTENCES[0]).to_conllu()


def test_explain_gives_the_predictor_explanation(parsers):
    parser = parsers["tree_transformer"]
    expected = parser.predictor.predict_json({"sentence": SENTENCES[0], "explain": True})
    result = parser.parse(SENTENCES[0], explain=True)
    assert result.explanation == {"link_probabilities": expected["link_probabilities"]}
    assert parser.parse(SENTENCES[0]).explanation is None
    explained = list(parser.parse_many(SENTENCES[:2], explain=True))
    assert explained[0] == result


def test_progress_bar_on_request(parsers, capsys):
    list(parsers["tree_transformer"].parse_many(SENTENCES, progress=True))
    assert "5/5" in capsys.readouterr().err
    list(parsers["tree_transformer"].parse_many(SENTENCES))
    assert capsys.readouterr().err == ""


def test_parse_many_refuses_one_sentence(parsers):
    with pytest.raises(TypeError, match="for one sentence use parse"):
        list(parsers["tree_transformer"].parse_many("The cat sat ."))


def test_a_missing_path_is_named(tmp_path):
    missing = tmp_path / "model.tar.gz"
    message = f"No model archive at {missing}: expected a model.tar.gz written by `allennlp train`"
    with pytest.raises(FileNotFoundError, match=message):
        Parser.load(missing)


def test_a_file_that_is_not_an_archive_is_named(archives, tmp_path):
    text = tmp_path / "sentences.txt"
    text.write_text("The cat sat .\n")
    message = f"{text} is not a model archive \\(not a tar file, compressed or not\\): expected"
    with pytest.raises(ValueError, match=message):
        Parser.load(text)
    truncated = tmp_path / "truncated.tar.gz"
    whole = Path(archives["tree_transformer"]).read_bytes()
    truncated.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=f"{truncated} is not a readable model archive"):
        Parser.load(truncated)
    no_config = tmp_path / "other.tar.gz"
    with tarfile.open(no_config, "w:gz") as archive:
        archive.add(text, arcname="sentences.txt")
    with pytest.raises(ValueError, match=f"{no_config} is a tar archive without config.json"):
        Parser.load(no_config)
    with pytest.raises(ValueError, match=f"{tmp_path} is a directory without config.json"):
        Parser.load(tmp_path)

