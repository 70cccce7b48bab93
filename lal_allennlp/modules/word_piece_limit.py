"""
How many word pieces a pretrained transformer reads at once, and a clear error when encoding
an over-long sentence fails all the same.

A transformer with learned positions (BERT, MiniLM: 512) cannot read more word pieces than it
has positions. `transformer_position_limit` gives that number; the transformer embedder
(`lal_allennlp.modules.transformer_embedder`) encodes longer sentences in overlapping windows of
that many word pieces, so they no longer fail for their length. Windows make the work and memory of
the transformer grow with the length, so a very long sentence can still fail (e.g. out of
memory); `explain_too_long` then names the over-long sentences of the batch and their number of
word pieces. Inputs within the limit re-raise the original error unchanged. It costs nothing
on the normal path (it runs only after a failure).
"""
from typing import List, Optional

from allennlp.data import TextFieldTensors
from allennlp.modules import TextFieldEmbedder


def transformer_position_limit(matched_embedder: object) -> Optional[int]:
    """
    The number of word pieces (special tokens included) that the transformer of a
    `PretrainedTransformerEmbedder` reads at once, or `None` when its configuration sets no
    learned position limit (`max_position_embeddings`; XLNet has none). RoBERTa-style position
    embeddings start after their padding index (`padding_idx + 1`), which leaves fewer
    positions than the table has rows.
    """
    config = getattr(matched_embedder, "config", None)
    limit = getattr(config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit <= 0:
        return None
    transformer = getattr(matched_embedder, "transformer_model", None)
    positions = getattr(getattr(transformer, "embeddings", None), "position_embeddings", None)
    padding_index = getattr(positions, "padding_idx", None)
    if padding_index is not None:
        limit -= padding_index + 1
    return limit


def _position_limit(text_field_embedder: TextFieldEmbedder) -> Optional[int]:
    for token_embedder in getattr(text_field_embedder, "_token_embedders", {}).values():
        matched = getattr(token_embedder, "_matched_embedder", token_embedder)
        limit = transformer_position_limit(matched)
        if limit is not None:
            return limit
    return None


def explain_too_long(
    error: Exception,
    text_field_embedder: TextFieldEmbedder,
    tokens: TextFieldTensors,
    words: Optional[List[List[str]]] = None,
) -> None:
    """Raises a `ValueError` naming the over-long sentences of the batch, or returns (the
    caller then re-raises `error`) when no sentence is longer than the transformer's positions
    (the failure is not about length)."""
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
            described.append(f"{sentence} has {n:,} word pieces")
        raise ValueError(
            "Encoding failed on a batch with over-long sentences: "
            + "; ".join(described)
            + f", more than the transformer's {limit} positions, so it was encoded in "
            f"overlapping windows of {limit} word pieces ({error}). Split the sentence, or "
            "parse it alone."
        ) from error
