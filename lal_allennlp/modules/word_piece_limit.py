"""
A clear error for sentences longer than the pretrained transformer can read.

Without `max_length` folding, a transformer with learned positions (BERT, MiniLM: 512) fails
deep inside its embeddings on a longer input ("The expanded size of the tensor (609) must match
the existing size (512)"). `explain_too_long` turns such a failure into an error that names
the sentence and its number of word pieces; inputs within the limit re-raise the original
error unchanged. It costs nothing on the normal path (it runs only after a failure).
"""
from typing import List, Optional

from allennlp.data import TextFieldTensors
from allennlp.modules import TextFieldEmbedder


def _position_limit(text_field_embedder: TextFieldEmbedder) -> Optional[int]:
    for token_embedder in getattr(text_field_embedder, "_token_embedders", {}).values():
        transformer = getattr(getattr(token_embedder, "_matched_embedder", token_embedder),
                              "transformer_model", None)
        limit = getattr(getattr(transformer, "config", None), "max_position_embeddings", None)
        if limit:
            return int(limit)
    return None


def explain_too_long(
    error: Exception,
    text_field_embedder: TextFieldEmbedder,
    tokens: TextFieldTensors,
    words: Optional[List[List[str]]] = None,
) -> None:
    """Raises a `ValueError` naming the over-long sentences of the batch, or returns (the
    caller then re-raises `error`) when the failure is not about length."""
    limit = _position_limit(text_field_embedder)
    if limit is None:
        return
    for indexed in tokens.values():
        if "wordpiece_mask" not in indexed:
            continue
        pieces = indexed["wordpiece_mask"].sum(dim=1).tolist()
        too_long = [(i, n) for i, n in enumerate(pieces) if n > limit]
        if not too_long:
            return
        described = []
        for i, n in too_long:
            sentence = f"sentence {i + 1} of the batch"
            if words is not None:
                start = " ".join(words[i][:6])
                sentence += f" ({len(words[i])} words, starting {start!r})"
            described.append(f"{sentence} has {n} word pieces")
        raise ValueError(
            "; ".join(described) + f", more than the transformer's {limit} positions. Split "
            "the sentence, or train with `max_length` on the transformer indexer and embedder "
            "(AllenNLP then encodes long inputs in segments)."
        ) from error
