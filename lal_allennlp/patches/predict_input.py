"""
A fix of an AllenNLP 2.10.1 bug: `allennlp predict` reads its JSON lines as strict UTF-8, so
one line that is not valid UTF-8 stops the whole run with a `UnicodeDecodeError` before the
predictor sees it, and no output is written for the lines before it either. For the
predictors of this package (which check each request and turn a bad one into an error output,
`predictors/checked.py`), the lines are read with `errors="surrogateescape"` instead: the
undecodable bytes become lone surrogates, which the request checks report for that one line,
and every other line is parsed. Other predictors keep AllenNLP's reading.
"""
import sys
from typing import Iterator

from allennlp.commands.predict import _PredictManager
from allennlp.common.file_utils import cached_path, open_compressed
from allennlp.common.util import JsonDict

original_get_json_data = _PredictManager._get_json_data


def _get_json_data(self: _PredictManager) -> Iterator[JsonDict]:
    from lal_allennlp.predictors.checked import CheckedPredictor

    if not isinstance(self._predictor, CheckedPredictor):
        yield from original_get_json_data(self)
        return
    if self._input_file == "-":
        lines = (
            line.decode("utf-8", errors="surrogateescape") for line in sys.stdin.buffer
        )
        for line in lines:
            if not line.isspace():
                yield self._predictor.load_line(line)
        return
    with open_compressed(cached_path(self._input_file), errors="surrogateescape") as source:
        for line in source:
            if not line.isspace():
                yield self._predictor.load_line(line)


def read_predict_input_per_line() -> None:
    """Patch `_PredictManager._get_json_data` once."""
    _PredictManager._get_json_data = _get_json_data
