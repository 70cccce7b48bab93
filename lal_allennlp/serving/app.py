"""
The web server of `lal-serve`: a FastAPI application around a `Parser`.

- `GET /`: a page where one types sentences and sees each parse drawn (tree, dependency arcs,
  confidence shading), and for label attention parsers the attention of every head over the
  words and each constituent's head contributions (`page.html`).
- `POST /parse`: `{"sentences": ["The cat sat.", ["A", "list", "of", "words"],
  {"tokens": [...], "tags": [...]}], "explain": false, "confidence": false, "kbest": 1,
  "draw": false}` ->
  `{"parses": [...]}`, one object per sentence with the fields of `ParseResult.to_json` (the
  predictor's JSON output) and, with `draw`, SVG pictures under `"pictures"`.
- `GET /health`: the model, what it can do, the server's limits and counters.
- `GET /docs`, `GET /openapi.json`: FastAPI's OpenAPI description of the above.

Concurrent requests are parsed together (`batching.RequestBatcher`). A bad request gets a 4xx
answer `{"error": "what is wrong and what to do"}` before anything is parsed: 400 for a body
that is not JSON (not UTF-8, malformed, nested too deeply for the JSON parser), 413 for a body
over `max_body_bytes`, 415 for a body not sent as JSON, 422 for wrong fields or types, too many
sentences, or a sentence the parser refuses (empty, control characters, longer than
`max_words`), naming the sentence as `sentences[K]`. Nothing a request holds stops the server.
"""
import logging
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any, Dict, List, Optional, Tuple, Union

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from lal_allennlp.api import Parser, ParseResult, as_request
from lal_allennlp.predictors.inputs import MAX_KBEST, InputError, refuse_kbest, shorten
from lal_allennlp.serving.batching import RequestBatcher

logger = logging.getLogger(__name__)

DEFAULT_MAX_WORDS = 300
"""Longest sentence the server parses by default: a batch waits for its longest sentence, so a
server answering many users keeps them short (`lal-serve --max-words`)."""
DEFAULT_MAX_SENTENCES = 64
DEFAULT_MAX_BODY_BYTES = 1 << 20


class SentenceRequest(BaseModel):
    """A sentence given as words, with optional POS tags (one per word)."""

    model_config = ConfigDict(extra="forbid")
    tokens: List[StrictStr]
    tags: Optional[List[StrictStr]] = None


class ParseRequest(BaseModel):
    """The body of `POST /parse`."""

    model_config = ConfigDict(extra="forbid")
    sentences: List[Union[StrictStr, List[StrictStr], SentenceRequest]] = Field(
        min_length=1,
        description="Raw text (split into Penn Treebank tokens), a list of words, or "
        '{"tokens": [...], "tags": [...]}',
    )
    explain: StrictBool = Field(
        False, description="Label attention and head contributions (label attention parsers), "
        "link probabilities (Tree Transformer)",
    )
    confidence: StrictBool = Field(
        False, description="The model's probabilities: of each predicted constituent (span "
        'parsers trained with span_loss "crf"), of each head and dependency label (joint and '
        "dependency parsers), of the whole parse, and the sentence's mean confidence",
    )
    kbest: StrictInt = Field(
        1, ge=1, le=MAX_KBEST, description='The k best parses, under "kbest" (span CKY parsers: '
        "exact k-best trees; the dependency parser: the distinct trees of its beam)",
    )
    draw: StrictBool = Field(False, description='SVG pictures of each parse, under "pictures"')


class SentenceParse(BaseModel):
    """One sentence's parse: what the model gives of these fields, or `error`."""

    words: Optional[List[str]] = None
    pos_tags: Optional[List[str]] = None
    tree: Optional[str] = None
    spans: Optional[List[Tuple[int, int, str]]] = None
    heads: Optional[List[int]] = None
    dependency_labels: Optional[List[str]] = None
    conllu: Optional[str] = None
    span_confidences: Optional[List[float]] = None
    head_confidences: Optional[List[float]] = None
    dependency_label_confidences: Optional[List[float]] = None
    tree_probability: Optional[float] = None
    sentence_confidence: Optional[float] = None
    kbest: Optional[List[Dict[str, Any]]] = None
    label_attention: Optional[List[List[float]]] = None
    span_contributions: Optional[List[List[float]]] = None
    explanation_note: Optional[str] = None
    link_probabilities: Optional[List[List[float]]] = None
    pictures: Optional[Dict[str, str]] = None
    error: Optional[str] = None


class ParseResponse(BaseModel):
    parses: List[SentenceParse]


class ErrorResponse(BaseModel):
    error: str


def _sentence_of(item: Union[str, List[str], SentenceRequest]) -> Any:
    """A sentence of the body as `Parser.parse_many` takes it."""
    if isinstance(item, SentenceRequest):
        return item.model_dump(exclude_none=True)
    return item


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def pictures(result: ParseResult) -> Dict[str, str]:
    """SVG pictures of a parse: `tree` (with arcs and confidence shading when the result has
    them), `attention` (heads x words), `contributions` (constituents x heads) and `links`
    (the Tree Transformer's layers x word boundaries), those the result has data for."""
    from lal_allennlp.drawing import heatmap_svg, tree_svg

    drawn: Dict[str, str] = {}
    words = result.words
    if result.tree_string is not None:
        confidences = None
        if result.span_confidences is not None and result.spans is not None:
            confidences = dict(zip(result.spans, result.span_confidences))
        drawn["tree"] = tree_svg(
            result.tree, result.heads, result.dependency_labels, confidences=confidences
        )
    explanation = result.explanation or {}
    if "label_attention" in explanation:
        attention = explanation["label_attention"]  # heads x ([START] words [STOP])
        # Drawn words down, heads across: a label attention layer has many heads (112 in the
        # paper), which read better side by side than stacked.
        drawn["attention"] = heatmap_svg(
            [list(column) for column in zip(*attention)],
            ["[START]", *words, "[STOP]"],
            [str(head + 1) for head in range(len(attention))],
            title="Label attention: the weight of each word (row) in each head (column)",
            cell=9.0,
        )
    if "span_contributions" in explanation and result.spans:
        contributions = explanation["span_contributions"]
        num_heads = len(contributions[0]) if contributions else 0
        names = []
        for start, end, label in result.spans:
            text = " ".join(words[start:end])
            names.append(f"{label} {text if len(text) <= 40 else text[:37] + '...'}")
        drawn["contributions"] = heatmap_svg(
            contributions,
            names,
            [str(head + 1) for head in range(num_heads)],
            title="Each constituent's head contributions (head number across)",
            cell=9.0,
        )
    if "link_probabilities" in explanation and len(words) > 1:
        links = explanation["link_probabilities"]
        drawn["links"] = heatmap_svg(
            links,
            [f"layer {layer}" for layer in range(len(links))],
            [f"{words[k]}|{words[k + 1]}" for k in range(len(words) - 1)],
            title="Link probabilities between neighbouring words, by layer",
        )
    return drawn


def create_app(
    parser: Parser,
    model_name: str = "model",
    max_batch: int = 32,
    forward_batch: int = 8,
    batch_window: float = 0.005,
    batching: bool = True,
    max_sentences: int = DEFAULT_MAX_SENTENCES,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> FastAPI:
    """
    The application serving `parser` (whose `predictor.max_words` limits sentence length).
    `max_batch` sentences at most per batch, `batch_window` seconds for a batch to fill (see
    `RequestBatcher`); `batching=False` parses each request on its own. A batch is sorted by
    length and goes through the model `forward_batch` sentences at a time. At most
    `max_sentences` sentences per request and `max_body_bytes` bytes per body.
    """
    # What the model gives (trees, explanations, confidences), as it declares it.
    capabilities = parser.capabilities

    def parse_batch(sentences: List[Dict[str, Any]]) -> List[ParseResult]:
        # Sorted by length and parsed `forward_batch` at a time: on a CPU, passes of a few
        # sentences of similar length are faster per sentence than one pass over all of them
        # (less padding, smaller attention matrices), see benchmarks/README.md.
        order = sorted(range(len(sentences)), key=lambda k: _rough_length(sentences[k]))
        results: List[Optional[ParseResult]] = [None] * len(sentences)
        parsed = parser.parse_many([sentences[k] for k in order], batch_size=forward_batch)
        for k, result in zip(order, parsed):
            results[k] = result
        return results  # type: ignore[return-value]

    batcher = RequestBatcher(
        parse_batch,
        max_batch=max_batch,
        window=batch_window if batching else 0.0,
        max_batch_requests=None if batching else 1,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        batcher.start()
        try:
            yield
        finally:
            await batcher.stop()

    app = FastAPI(
        title="lal-allennlp parser",
        description="Constituency and dependency parses from a trained lal-allennlp model.",
        lifespan=lifespan,
    )
    app.state.parser = parser
    app.state.batcher = batcher
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        content_type = request.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != "application/json":
            return _error(415, f"The body must be JSON, sent with Content-Type: "
                          f"application/json (got {content_type or 'none'!r})")
        problems = error.errors()
        for problem in problems:
            if problem.get("type") == "json_invalid":
                where = problem.get("ctx", {}).get("error", "")
                return _error(400, f"The body is not valid JSON ({where}): send a JSON object "
                              'such as {"sentences": ["The cat sat."]}')
        # One message per place: pydantic reports a sentence of the wrong kind once per kind
        # it could have been (string, list of words, object), the first with the sentence.
        messages: Dict[str, str] = {}
        for problem in problems:
            location = [part for part in problem.get("loc", ()) if part != "body"]
            if len(location) >= 2 and location[0] == "sentences" and isinstance(location[1], int):
                place = f"sentences[{location[1]}]"
                message = (f"must be a string, a list of strings or "
                           f'{{"tokens": [...], "tags": [...]}}, got {shorten(problem["input"])}')
            else:
                place = ".".join(map(str, location)) or "body"
                message = str(problem.get("msg"))
            messages.setdefault(place, f"{place}: {message}")
        problems = list(messages.values())
        described = problems[:10]
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        return _error(
            422,
            "; ".join(described) + more + '. Send {"sentences": [...]} with each sentence a '
            'string, a list of words or {"tokens": [...], "tags": [...]}.',
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        # FastAPI answers "There was an error parsing the body" for any failure of its JSON
        # parsing but a syntax error, keeping the cause: say what it was.
        cause = error.__cause__
        if isinstance(cause, UnicodeDecodeError):
            byte = cause.object[cause.start]
            return _error(400, f"The body is not valid UTF-8 (byte {byte:#04x} at offset "
                          f"{cause.start}): send the JSON encoded as UTF-8")
        if isinstance(cause, RecursionError):
            return _error(400, "The body's JSON is nested too deeply to parse: send an object "
                          'such as {"sentences": ["The cat sat."]}, nested a few levels at most')
        return JSONResponse(
            {"error": str(error.detail)}, status_code=error.status_code, headers=error.headers
        )

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(resources.files(__package__).joinpath("page.html").read_text("utf-8"))

    @app.get("/health")
    async def health() -> Dict[str, Any]:
        """The model served, what it can do, the limits, and how much was parsed."""
        return {
            "status": "ok",
            "model": model_name,
            "model_type": type(parser.model).__name__,
            "tree": capabilities.trees,
            "explain": capabilities.explanations,
            "confidence": capabilities.confidences,
            "kbest": capabilities.kbest,
            "batching": {
                "enabled": batching,
                "max_batch": max_batch,
                "forward_batch": forward_batch,
                "window_ms": batch_window * 1000 if batching else 0.0,
            },
            "max_words": parser.predictor.max_words,
            "max_sentences": max_sentences,
            "max_body_bytes": max_body_bytes,
            "waiting": batcher.waiting,
            "batches": batcher.batches,
            "sentences_parsed": batcher.items,
        }

    @app.post(
        "/parse",
        responses={
            200: {"model": ParseResponse},
            400: {"model": ErrorResponse},
            413: {"model": ErrorResponse},
            415: {"model": ErrorResponse},
            422: {"model": ErrorResponse},
        },
    )
    async def parse(body: ParseRequest) -> JSONResponse:
        """Parses the sentences, together with those of concurrent requests."""
        if len(body.sentences) > max_sentences:
            return _error(422, f"{len(body.sentences)} sentences, more than the limit of "
                          f"{max_sentences} per request: send them in several requests")
        if body.explain and not capabilities.explanations:
            return _error(422, f'"explain" needs a label attention parser or a Tree '
                          f"Transformer; this model is a {type(parser.model).__name__}: leave it "
                          f"out")
        if body.confidence and not capabilities.confidences:
            return _error(422, f'"confidence" needs a model that defines probabilities of its '
                          f'parses (a span parser trained with span_loss "crf", a joint or a '
                          f"dependency parser); this model is a {type(parser.model).__name__}: "
                          f"leave it out")
        try:
            refuse_kbest(body.kbest, parser.model)
        except InputError as error:
            return _error(422, str(error))
        # Each sentence a predictor request with this request's own switches, since a batch
        # holds the sentences of several requests.
        requests = []
        for index, item in enumerate(body.sentences):
            try:
                request = as_request(
                    _sentence_of(item), body.explain, body.confidence, body.kbest
                )
                parser.check(request)
            except InputError as error:
                return _error(422, f"sentences[{index}]: {error}")
            requests.append(request)
        try:
            results = await batcher.submit(requests)
        except Exception as error:  # the whole batch failed: a fault of ours, not the request's
            logger.exception("A batch failed")
            return _error(500, f"Parsing failed: {type(error).__name__}: {error}")
        parses = []
        for index, result in enumerate(results):
            if result.error is not None:
                # `parse_many` names the position in its own batch: name it in the request.
                parses.append({"error": f"sentences[{index}]: {result.reason}"})
                continue
            output = result.to_json()
            if body.draw:
                output["pictures"] = await run_in_threadpool(pictures, result)
            parses.append(output)
        return JSONResponse({"parses": parses})

    return app


def _rough_length(request: Dict[str, Any]) -> int:
    """A request's length in words, near enough to sort a batch by (text: white-space words)."""
    if "tokens" in request:
        return len(request["tokens"])
    return len(request["sentence"].split())


class BodyLimit:
    """
    ASGI middleware answering 413 to a request whose body is over `max_bytes`: at once when its
    `Content-Length` says so, else when the bytes read pass the limit (a chunked body), so a
    huge body is never read into memory whole.
    """

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _message(self) -> str:
        return (f"The request body is over the limit of {self.max_bytes} bytes: send fewer "
                f"sentences per request")

    async def __call__(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await _error(400, "Content-Length is not a number")(scope, receive, send)
                return
            if int(length) > self.max_bytes:
                await _error(413, self._message())(scope, receive, send)
                return
        received = 0

        async def limited_receive() -> Dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, self._message())
            return message

        await self.app(scope, limited_receive, send)
