"""The `lal-serve` application through FastAPI's test client, on tiny archives: `POST /parse`
gives what `Parser` gives for each sentence (explanations, confidences and pictures on
request), concurrent requests each get their own parses, and bad requests get 4xx JSON errors
that name the problem, after which the server still parses."""
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict

import numpy
import pytest
from fastapi.testclient import TestClient
from nltk import Tree

from lal_allennlp.api import Parser
from lal_allennlp.serving import create_app

SENTENCES = [
    "The cat sat on the mat .",
    ["Dogs", "bark", "."],
    {"tokens": ["The", "old", "man", "saw", "a", "dog", "."]},
    "She gave him the book that he wanted .",
]
MAX_WORDS = 20


def _parser(archive: str) -> Parser:
    return Parser.load(archive, max_words=MAX_WORDS)


@pytest.fixture(scope="module")
def lal(fixture_archive) -> Parser:
    """A label attention parser trained with the tree CRF."""
    return _parser(fixture_archive("lal_parser"))


@pytest.fixture(scope="module")
def joint(fixture_archive) -> Parser:
    return _parser(fixture_archive("joint_parser"))


@pytest.fixture(scope="module")
def client(lal):
    with TestClient(create_app(lal, model_name="lal", max_sentences=8, max_body_bytes=4096)) as c:
        yield c


def _expected(parser: Parser, sentence: Any, **options) -> Dict[str, Any]:
    if isinstance(sentence, dict):
        return parser.parse(sentence["tokens"], tags=sentence.get("tags"), **options).to_json()
    return parser.parse(sentence, **options).to_json()


def test_parses_equal_those_of_the_parser(client, lal):
    answer = client.post("/parse", json={"sentences": SENTENCES})
    assert answer.status_code == 200
    parses = answer.json()["parses"]
    assert parses == [_expected(lal, sentence) for sentence in SENTENCES]
    assert parses[1]["words"] == ["Dogs", "bark", "."]
    assert "label_attention" not in parses[0] and "pictures" not in parses[0]


def test_explanations_and_confidences_on_request(client, lal):
    body = {"sentences": SENTENCES[:2], "explain": True, "confidence": True}
    parses = client.post("/parse", json=body).json()["parses"]
    for sentence, parse in zip(SENTENCES, parses):
        expected = _expected(lal, sentence, explain=True, confidence=True)
        assert parse.keys() == expected.keys()
        assert parse["span_confidences"] == pytest.approx(expected["span_confidences"], abs=1e-6)
        numpy.testing.assert_allclose(parse["label_attention"], expected["label_attention"],
                                      atol=1e-6)
        assert len(parse["span_confidences"]) == len(parse["spans"])
        assert all(0.0 <= p <= 1.0 + 1e-6 for p in parse["span_confidences"])


def test_pictures_draw_the_parse(client, lal):
    body = {"sentences": [SENTENCES[0]], "explain": True, "confidence": True, "draw": True}
    (parse,) = client.post("/parse", json=body).json()["parses"]
    pictures = parse["pictures"]
    assert set(pictures) == {"tree", "attention", "contributions"}
    tree = Tree.fromstring(parse["tree"])
    labels = [node.label() for node in tree.subtrees() if node.height() > 2]
    drawn = pictures["tree"]
    assert drawn.startswith("<svg") and drawn.count('class="label"') == len(labels)
    for label in labels:
        assert f">{label}</text>" in drawn
    # Confidence shading: every constituent but the root has its probability in a tooltip.
    assert drawn.count("p = ") == len(labels) - 1
    num_heads = len(parse["label_attention"])
    assert pictures["attention"].count("<rect") == num_heads * (len(parse["words"]) + 2)
    # Words down, heads across: the first row's first cell is [START] in head 1.
    assert "<title>[START], 1: " in pictures["attention"]
    assert pictures["contributions"].count("<rect") == len(parse["spans"]) * num_heads


def test_a_joint_model_gives_heads_conllu_and_arcs(joint):
    with TestClient(create_app(joint)) as client:
        health = client.get("/health").json()
        assert (health["explain"], health["confidence"], health["tree"]) == (False, True, True)
        assert health["kbest"] is False
        (parse,) = client.post("/parse", json={"sentences": ["Dogs bark ."], "draw": True}).json()[
            "parses"
        ]
        assert parse == {**_expected(joint, "Dogs bark ."), "pictures": parse["pictures"]}
        assert len(parse["heads"]) == 3 and parse["conllu"].count("\n") == 4
        assert parse["pictures"]["tree"].count('class="arrowhead"') == 3
        body = {"sentences": ["Dogs bark ."], "confidence": True}
        (parse,) = client.post("/parse", json=body).json()["parses"]
        expected = _expected(joint, "Dogs bark .", confidence=True)
        assert parse.keys() == expected.keys() and len(parse["head_confidences"]) == 3
        for key in ("head_confidences", "dependency_label_confidences", "sentence_confidence"):
            assert parse[key] == pytest.approx(expected[key], abs=1e-6)
        for option, value in (("explain", True), ("kbest", 2)):
            answer = client.post("/parse", json={"sentences": ["Dogs bark ."], option: value})
            assert answer.status_code == 422 and "leave it out" in answer.json()["error"]
            assert "JointSpanParser" in answer.json()["error"]


def test_kbest_trees_through_the_server(client, lal):
    body = {"sentences": SENTENCES[:2], "kbest": 3, "confidence": True}
    parses = client.post("/parse", json=body).json()["parses"]
    for sentence, parse in zip(SENTENCES, parses):
        expected = _expected(lal, sentence, kbest=3, confidence=True)
        assert [tree["tree"] for tree in parse["kbest"]] == [t["tree"] for t in expected["kbest"]]
        assert len(parse["kbest"]) == 3 and parse["kbest"][0]["tree"] == parse["tree"]
        scores = [tree["score"] for tree in parse["kbest"]]
        assert scores == sorted(scores, reverse=True)
        assert [t["probability"] for t in parse["kbest"]] == pytest.approx(
            [t["probability"] for t in expected["kbest"]], abs=1e-6
        )


def test_bodies_the_json_parser_cannot_read_are_named(lal):
    # Deep nesting needs a body over the usual test client's 4096-byte limit.
    with TestClient(create_app(lal, max_body_bytes=1_000_000)) as client:
        for body, message in [
            (b"[" * 100_000, "nested too deeply"),
            (b'{"sentences": [' * 50_000, "nested too deeply"),
            (b'{"sentences": ["caf\xe9"]}', "not valid UTF-8 (byte 0xe9 at offset 19)"),
            (b"\xff{}", "not valid UTF-8 (byte 0xff at offset 0)"),
        ]:
            answer = client.post(
                "/parse", content=body, headers={"content-type": "application/json"}
            )
            assert answer.status_code == 400, answer.text
            assert message in answer.json()["error"]
            assert "send" in answer.json()["error"]
        assert client.post("/parse", json={"sentences": ["Dogs bark ."]}).status_code == 200


def test_concurrent_requests_each_get_their_own_parses(client, lal):
    sentences = [" ".join(["the", "dog"] * k + ["."]) for k in range(1, 9)]
    expected = {sentence: _expected(lal, sentence) for sentence in sentences}

    def ask(sentence: str):
        return sentence, client.post("/parse", json={"sentences": [sentence]}).json()["parses"]

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, sentences * 3))
    for sentence, parses in answers:
        assert parses == [expected[sentence]]


@pytest.mark.parametrize(
    "body, status, message",
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[]", 422, "valid dictionary"),
        (b"{}", 422, "sentences: Field required"),
        (b'{"sentences": []}', 422, "at least 1 item"),
        (b'{"sentences": "The cat sat."}', 422, "sentences: Input should be a valid list"),
        (b'{"sentences": [1]}', 422, "sentences[0]: must be a string, a list of strings"),
        (b'{"sentences": ["ok", ["a", 2]]}', 422, "sentences[1]: must be a string"),
        (b'{"sentences": ["ok"], "explain": "yes"}', 422, "explain: Input should be a valid"),
        (b'{"sentences": ["ok"], "colour": 1}', 422, "colour: Extra inputs are not permitted"),
        (b'{"sentences": ["ok", ""]}', 422, "sentences[1]: Cannot parse an empty sentence"),
        (b'{"sentences": ["a\\u001b[31mb"]}', 422, "sentences[0]: \"sentence\" holds the control"),
        (b'{"sentences": [{"tokens": ["a", "b"], "tags": ["NN"]}]}', 422, "sentences[0]: Got 1 tags"),
        (json.dumps({"sentences": ["w " * (MAX_WORDS + 1)]}).encode(), 422,
         f"sentences[0]: the sentence has {MAX_WORDS + 1} words, more than the limit of "
         f"{MAX_WORDS}"),
        (json.dumps({"sentences": ["a"] * 9}).encode(), 422, "9 sentences, more than the limit"),
        (b'{"sentences": ["ok"], "kbest": 0}', 422, "kbest: Input should be greater than or"),
        (b'{"sentences": ["ok"], "kbest": 101}', 422, "kbest: Input should be less than or"),
        (b'{"sentences": ["ok"], "kbest": 2.5}', 422, "kbest: Input should be a valid integer"),
    ],
)
def test_bad_requests_get_4xx_errors_and_the_server_goes_on(client, lal, body, status, message):
    answer = client.post("/parse", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    assert message in answer.json()["error"]
    again = client.post("/parse", json={"sentences": ["Dogs bark ."]})
    assert again.json()["parses"] == [_expected(lal, "Dogs bark .")]


def test_huge_and_mislabelled_bodies_are_refused(client):
    big = json.dumps({"sentences": ["word " * 1000]}).encode()
    answer = client.post("/parse", content=big, headers={"content-type": "application/json"})
    assert answer.status_code == 413 and "over the limit of 4096 bytes" in answer.json()["error"]

    def chunks():  # no Content-Length: the limit holds while the body is read
        for _ in range(100):
            yield b" " * 100

    answer = client.post("/parse", content=chunks(), headers={"content-type": "application/json"})
    assert answer.status_code == 413
    answer = client.post("/parse", content=b"The cat sat.", headers={"content-type": "text/plain"})
    assert answer.status_code == 415 and "Content-Type: application/json" in answer.json()["error"]
    assert client.get("/health").json()["status"] == "ok"


def test_a_sentence_the_model_fails_on_is_an_error_in_its_place(client, lal, monkeypatch):
    predict = lal.predictor.predict_batch_instance

    def failing(instances):
        if any(token.text == "boom" for i in instances for token in i["tokens"].tokens):
            raise RuntimeError("the model failed")
        return predict(instances)

    monkeypatch.setattr(lal.predictor, "predict_batch_instance", failing)
    body = {"sentences": ["Dogs bark .", "a boom .", "The cat sat ."]}
    parses = client.post("/parse", json=body).json()["parses"]
    assert parses[1] == {"error": "sentences[1]: the model failed"}
    assert parses[0] == _expected(lal, "Dogs bark .")
    assert parses[2] == _expected(lal, "The cat sat .")


def test_a_failing_batch_is_a_500_and_the_server_goes_on(client, lal, monkeypatch):
    batcher = client.app.state.batcher
    monkeypatch.setattr(batcher, "parse", lambda items: 1 / 0)
    answer = client.post("/parse", json={"sentences": ["Dogs bark ."]})
    assert answer.status_code == 500 and "ZeroDivisionError" in answer.json()["error"]
    monkeypatch.undo()
    assert client.post("/parse", json={"sentences": ["Dogs bark ."]}).status_code == 200


def test_health_page_and_openapi(client):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["model"] == "lal"
    assert (health["explain"], health["confidence"], health["tree"]) == (True, True, True)
    assert health["max_words"] == MAX_WORDS and health["max_sentences"] == 8
    assert health["batching"]["enabled"] is True and health["sentences_parsed"] > 0
    page = client.get("/")
    assert page.status_code == 200 and 'fetch("/parse"' in page.text
    schema = client.get("/openapi.json").json()
    assert {"/parse", "/health"} <= set(schema["paths"])
    assert "ParseRequest" in schema["components"]["schemas"]
