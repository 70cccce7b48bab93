"""The filter that drops transformers' "weights not used" warning only for weights of layers
left out on purpose."""
import logging

from lal_allennlp.patches.transformer_cache import _DroppedLayersFilter


def _record(names) -> logging.LogRecord:
    message = (
        "Some weights of the model checkpoint at /models/minilm were not used when "
        f"initializing BertModel: {names!r}\n- This IS expected if ..."
    )
    return logging.LogRecord("transformers.modeling_utils", logging.WARNING, "", 0, message,
                             None, None)


def test_weights_of_dropped_layers_are_not_reported():
    names = ["encoder.layer.4.attention.self.query.weight", "encoder.layer.5.output.dense.bias"]
    assert not _DroppedLayersFilter(4).filter(_record(names))


def test_other_unused_weights_are_still_reported():
    kept_layer = ["encoder.layer.3.attention.self.query.weight"]
    not_a_layer = ["encoder.layer.4.output.dense.bias", "cls.predictions.bias"]
    assert _DroppedLayersFilter(4).filter(_record(kept_layer))
    assert _DroppedLayersFilter(4).filter(_record(not_a_layer))


def test_other_messages_pass():
    record = logging.LogRecord("transformers.modeling_utils", logging.WARNING, "", 0,
                               "Some other warning", None, None)
    assert _DroppedLayersFilter(1).filter(record)
