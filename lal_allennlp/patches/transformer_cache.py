"""
A fix of an AllenNLP 2.10.1 bug. AllenNLP caches pretrained transformers
(`allennlp.common.cached_transformers.get`) under a key of the model name and weight overrides
only; the keyword arguments that change the model's configuration (`transformer_kwargs` of the
pretrained-transformer embedders, e.g. `{"num_hidden_layers": 4}` to keep the first four
layers) are not part of the key. A second embedder of the same model with other arguments in
the same process then silently gets the first one's model (and the other way round). This
keeps one cache per set of arguments.

Loading a model with fewer layers on purpose (`num_hidden_layers`) makes transformers log a
30-line "Some weights of the model checkpoint ... were not used" warning for the weights of
the dropped layers, on every training, evaluation and model load. That warning is dropped
when every unused weight belongs to a layer at or above `num_hidden_layers`; any other unused
weight still gets the warning.
"""
import logging
import re
from typing import Any, Dict, Optional

from allennlp.common import cached_transformers

_LAYER_INDEX = re.compile(r"(?:^|\.)layers?\.(\d+)\.")


class _DroppedLayersFilter(logging.Filter):
    """Drops transformers' "weights ... were not used" record when all the unused weights are
    those of layers the configuration left out on purpose."""

    def __init__(self, num_hidden_layers: int) -> None:
        super().__init__()
        self.num_hidden_layers = num_hidden_layers

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith("Some weights of the model checkpoint"):
            return True
        listed = re.search(r"\[([^\]]*)\]", message)
        names = re.findall(r"'([^']+)'", listed.group(1)) if listed else []
        for name in names:
            layer = _LAYER_INDEX.search(name)
            if layer is None or int(layer.group(1)) < self.num_hidden_layers:
                return True
        return not names

_caches_by_arguments: Dict[str, dict] = {}


def key_transformer_cache_by_arguments() -> None:
    """Patch `cached_transformers.get` once; calls without extra arguments are unchanged."""
    original = cached_transformers.get
    if getattr(original, "_lal_allennlp_patched", False):
        return

    def get(
        model_name: str,
        make_copy: bool,
        override_weights_file: Optional[str] = None,
        override_weights_strip_prefix: Optional[str] = None,
        reinit_modules: Any = None,
        load_weights: bool = True,
        **kwargs: Any,
    ) -> Any:
        arguments = dict(
            override_weights_file=override_weights_file,
            override_weights_strip_prefix=override_weights_strip_prefix,
            reinit_modules=reinit_modules,
            load_weights=load_weights,
        )
        if not kwargs:
            return original(model_name, make_copy, **arguments)
        shared_cache = cached_transformers._model_cache
        key = repr(sorted(kwargs.items()))
        cached_transformers._model_cache = _caches_by_arguments.setdefault(key, {})
        quiet = None
        if isinstance(kwargs.get("num_hidden_layers"), int):
            quiet = _DroppedLayersFilter(kwargs["num_hidden_layers"])
            logging.getLogger("transformers.modeling_utils").addFilter(quiet)
        try:
            return original(model_name, make_copy, **arguments, **kwargs)
        finally:
            cached_transformers._model_cache = shared_cache
            if quiet is not None:
                logging.getLogger("transformers.modeling_utils").removeFilter(quiet)

    get._lal_allennlp_patched = True  # type: ignore[attr-defined]
    get.__doc__ = original.__doc__
    cached_transformers.get = get
