"""
The request handling every predictor of the package shares: requests are checked one by one
(`inputs.py`), and a batch is parsed together unless one of its sentences fails, when each of
them is parsed once more on its own so that only the failing one is lost
(`CheckedPredictor._parse_isolating`). That is the only place of the package that retries:
`allennlp predict`, `lal_allennlp.api.Parser` and what is built on it (`lal-parse`,
`lal-serve`, the spaCy component) all parse through it.

What a failure becomes depends on where the request came from:

* A request from a JSON line of `allennlp predict` (read by `load_line`): AllenNLP's `predict`
  stops the whole run at the first exception, losing every output after it. Such a request
  instead gets the output `{"error": "JSON line K: what was wrong and what to do"}` (CoNLL-U
  predictors write a comment-only sentence, `# error = ...`), and a warning is logged, so the
  output keeps one line (or sentence) per input line and every other line is parsed. `K`
  counts the non-blank lines, as `allennlp predict` skips blank ones without an output.
  `allennlp predict` still exits with 0; look for `"error"` in the output or warnings in the
  log. A line that is not valid UTF-8 gets an error output too: for these predictors
  `allennlp predict` reads its input with `errors="surrogateescape"` (`patches/predict_input`),
  and the checks report the undecodable bytes as lone surrogates.
* A request given in Python (`predict_json`, `predict_batch_json`): the error is raised, an
  `InputError` for a bad request, as AllenNLP's predictors do. `predict_batch_outcomes` gives
  it back in the request's place instead, for callers that report it and go on
  (`Parser.parse_many`).
"""
import json
import logging
from typing import Any, Dict, List, Optional, Sequence, Union

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from lal_allennlp.predictors.inputs import DEFAULT_MAX_WORDS, InputError, check_length, shorten

logger = logging.getLogger(__name__)

Outcome = Union[JsonDict, Exception]
"""What `CheckedPredictor.predict_batch_outcomes` gives per request: its JSON output, or the
exception that kept it from one."""

# How the limit on sentence length is raised with `allennlp predict`.
_RAISE_LIMIT = "raise the limit with --predictor-args '{\"max_words\": N}' (null: no limit)"


class InputLine(dict):
    """
    A request read by `CheckedPredictor.load_line` from a JSON line: the decoded object (or
    an empty one), the line's number among the non-blank lines and the problem of a line that
    is not a JSON object. Its failures become error outputs instead of exceptions.
    """

    def __init__(self, request: Dict[str, Any], number: int, problem: Optional[str] = None):
        super().__init__(request)
        self.number = number
        self.problem = problem


class CheckedPredictor(Predictor):
    """
    A `Predictor` that checks each request on its own and keeps the failure of one request
    from stopping the others (see the module docstring). Subclasses implement
    `_json_to_instance` (raising `InputError` for a bad request) and `_output`.

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    max_words : `Optional[int]`, optional (default = `DEFAULT_MAX_WORDS`)
        Longer sentences are refused with an `InputError` (an error output for JSON lines)
        before they reach the model; `None` parses any length. With `allennlp predict`:
        `--predictor-args '{"max_words": 2000}'`.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        max_words: Optional[int] = DEFAULT_MAX_WORDS,
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self.max_words = max_words
        # How a user of this predictor raises `max_words`, for the message of a long sentence;
        # `Parser.load` and `lal-serve` say it their own way.
        self.raise_limit = _RAISE_LIMIT
        # Non-blank JSON lines read so far by `load_line`.
        self._lines_read = 0

    def load_line(self, line: str) -> JsonDict:
        """The request of one JSON line as an `InputLine`; never raises, so that a bad line
        becomes one error output (`allennlp predict` stops at any exception)."""
        self._lines_read += 1
        number = self._lines_read
        try:
            request = json.loads(line)
        except json.JSONDecodeError as error:
            problem = (
                f"not valid JSON ({error.msg} at character {error.pos + 1}); each line must "
                'be one JSON object such as {"sentence": "..."}'
            )
            return InputLine({}, number, problem)
        if not isinstance(request, dict):
            problem = (
                f'a JSON {type(request).__name__} where an object such as {{"sentence": "..."}} '
                f"was expected: {shorten(request)}"
            )
            return InputLine({}, number, problem)
        return InputLine(request, number)

    def dump_line(self, outputs: JsonDict) -> str:
        return json.dumps(outputs) + "\n"

    def _check_length(self, words: Sequence[str]) -> None:
        """Raises an `InputError` for a sentence longer than `max_words`."""
        check_length(len(words), self.max_words, self.raise_limit)

    def _output(self, output: JsonDict, instance: Instance) -> JsonDict:
        """The JSON output of one sentence from the model's human-readable output."""
        raise NotImplementedError

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._model.forward_on_instances(instances)
        return [self._output(output, instance) for output, instance in zip(outputs, instances)]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        """One output per request, in order; see the module docstring for failures. A request
        given in Python that fails raises: a bad one before anything is parsed, one the model
        fails on once the batch has been parsed (`predict_batch_outcomes`)."""
        instances = [self._instance_or_error(request) for request in inputs]
        for request, instance in zip(inputs, instances):
            if isinstance(instance, Exception) and not isinstance(request, InputLine):
                raise instance
        outcomes = self._parse_isolating(instances)
        return [
            self._failure(request, outcome) if isinstance(outcome, Exception) else outcome
            for request, outcome in zip(inputs, outcomes)
        ]

    def predict_batch_outcomes(self, inputs: List[JsonDict]) -> List[Outcome]:
        """
        Per request, in order, its JSON output or the exception that kept it from one (an
        `InputError` for a bad request, whatever the model raised for one it failed on): the
        requests are checked one by one and the good ones parsed together, a failing one
        isolated as `_parse_isolating` says. Nothing is raised for a failing request, so that
        callers (`lal_allennlp.api.Parser.parse_many`) report it and keep the others.
        """
        return self._parse_isolating([self._instance_or_error(request) for request in inputs])

    def _instance_or_error(self, request: JsonDict) -> Union[Instance, Exception]:
        """The instance of a request, or the exception saying why it has none."""
        try:
            if isinstance(request, InputLine) and request.problem is not None:
                raise InputError(request.problem)
            return self._json_to_instance(request)
        except Exception as error:
            return error

    def _parse_isolating(self, instances: Sequence[Union[Instance, Exception]]) -> List[Outcome]:
        """
        The outputs of `instances`, the exceptions (requests that have no instance) kept in
        their place. This is the one place of the package that isolates a sentence the model
        fails on: the instances are parsed in one batch; if that fails, each of them is parsed
        once more on its own, so a failing sentence gets its own exception and the others their
        outputs. A batch of one is not parsed again: its failure is that sentence's.
        """
        outcomes: List[Optional[Outcome]] = [
            item if isinstance(item, Exception) else None for item in instances
        ]
        pending = [(k, item) for k, item in enumerate(instances) if isinstance(item, Instance)]
        if pending:
            outputs: List[Outcome]
            try:
                outputs = self.predict_batch_instance([instance for _, instance in pending])
            except Exception as error:
                if len(pending) == 1:
                    outputs = [error]
                else:
                    outputs = [self._parse_alone(instance) for _, instance in pending]
            for (position, _), output in zip(pending, outputs):
                outcomes[position] = output
        return outcomes  # type: ignore[return-value]  (every None was replaced)

    def _parse_alone(self, instance: Instance) -> Outcome:
        """The output of one instance parsed on its own, or the exception it failed with."""
        try:
            return self.predict_batch_instance([instance])[0]
        except Exception as error:
            return error

    def _failure(self, request: JsonDict, error: Exception) -> JsonDict:
        """The error output of a JSON line that failed (and a logged warning); for any other
        request, `error` raised again."""
        if not isinstance(request, InputLine):
            raise error
        message = f"JSON line {request.number}: {error}"
        logger.warning("Not parsed: %s", message)
        return {"error": message}


def error_comment(outputs: JsonDict) -> str:
    """The comment-only CoNLL-U sentence that stands for an error output: `# error = ...`."""
    message = " ".join(str(outputs["error"]).split())
    return f"# error = {message}\n\n"
