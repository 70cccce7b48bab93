"""
A trained parser's predictions on a treebank, sentence by sentence, next to the gold trees and
dependencies: what the grid runner's significance tests and `lal-analyze errors` read.

`predict_treebank` runs the archive's model on the instances of its own validation dataset
reader (the gold words and POS tags as input, exactly as `allennlp evaluate` does), so the
model's metrics over the file come out with the predictions and equal `allennlp evaluate`'s.
The predicted trees carry the gold POS tags when the model's EVALB scores with gold tags
(`evalb_gold_tags`), so that EVALB on the pairs gives the model's own F1.

The predictions file (`write_predictions`, `read_predictions`) is JSON lines, one object per
sentence of the treebank in its order, with the fields of `SentencePrediction` (trees as
one-line bracketed strings).
"""

import dataclasses
from dataclasses import dataclass
import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from nltk import Tree

from lal_allennlp.metrics.evalb_metric import with_gold_tags
from lal_allennlp.syntax.trees import tree_to_string


@dataclass
class SentencePrediction:
    """
    One sentence: gold and predicted. Dependency fields are `None` for a model or a treebank
    without dependencies; `scored` marks the words that UAS/LAS count (not punctuation).
    """

    words: List[str]
    gold_tags: List[str]
    gold_tree: Optional[Tree]  # None for a sentence of a dependency treebank
    predicted_tree: Optional[Tree]
    predicted_tags: Optional[List[str]] = None
    gold_heads: Optional[List[int]] = None
    predicted_heads: Optional[List[int]] = None
    gold_dependency_labels: Optional[List[str]] = None
    predicted_dependency_labels: Optional[List[str]] = None
    scored: Optional[List[bool]] = None
    error: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        # Not dataclasses.asdict: it would copy the trees (lists) as plain lists.
        record = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        record["gold_tree"] = None if self.gold_tree is None else tree_to_string(self.gold_tree)
        record["predicted_tree"] = (
            None if self.predicted_tree is None else tree_to_string(self.predicted_tree)
        )
        return record

    @classmethod
    def from_json(cls, record: Dict[str, Any]) -> "SentencePrediction":
        record = dict(record)
        if record.get("gold_tree") is not None:
            record["gold_tree"] = Tree.fromstring(record["gold_tree"])
        if record.get("predicted_tree") is not None:
            record["predicted_tree"] = Tree.fromstring(record["predicted_tree"])
        return cls(**record)


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def predict_treebank(
    archive_path: str,
    treebank_path: str,
    batch_size: int = 32,
    cuda_device: int = -1,
    overrides: Optional[Dict[str, Any]] = None,
) -> Tuple[List[SentencePrediction], Dict[str, float]]:
    """
    The model of `archive_path` (a `model.tar.gz` or a serialization directory) on every tree
    of `treebank_path` (any path its validation reader reads, dependencies included where the
    reader has them; a dependency treebank for a dependency parser). Returns the predictions in
    the file's order and the model's metrics over the file (EVALB F1, POS accuracy, UAS/LAS,
    an unsupervised parser's bracket scores and perplexity), as `allennlp evaluate` reports
    them. `overrides` are merged into the archive's config before the model is built, as
    `allennlp evaluate --overrides` does (test-time switches of a trained model).
    """
    import torch
    from allennlp.data import Batch
    from allennlp.models.archival import load_archive
    from allennlp.nn.util import move_to_device

    archive = load_archive(
        archive_path, cuda_device=cuda_device, overrides=json.dumps(overrides) if overrides else ""
    )
    model = archive.model
    model.eval()
    reader = archive.validation_dataset_reader
    instances = list(reader.read(treebank_path))
    if not instances:
        raise ValueError(f"{treebank_path}: the reader of {archive_path} read no sentence")
    evalb = getattr(model, "evalb", None)
    gold_tags_for_evalb = bool(getattr(evalb, "gold_tags", False))
    punctuation = set(getattr(model, "punctuation_tags", ()) or ())
    model.get_metrics(reset=True)
    capabilities = getattr(model, "capabilities", None)
    # A model that parses nothing (a masked language model without trees) has metrics only.
    parses = capabilities is None or capabilities.trees or capabilities.heads
    predictions: List[SentencePrediction] = []
    with torch.no_grad():
        for batch in _batches(instances, batch_size):
            if parses:
                outputs = model.forward_on_instances(list(batch))
            else:
                tensors = Batch(list(batch))
                tensors.index_instances(model.vocab)
                model(**move_to_device(tensors.as_tensor_dict(), cuda_device))
                outputs = [{} for _ in batch]
            for instance, output in zip(batch, outputs):
                predictions.append(
                    _prediction(instance["metadata"].metadata, output, gold_tags_for_evalb)
                )
    for prediction in predictions:
        if prediction.gold_heads is not None:
            prediction.scored = [tag not in punctuation for tag in prediction.gold_tags]
    return predictions, model.get_metrics(reset=True)


def _prediction(
    metadata: Dict[str, Any], output: Dict[str, Any], gold_tags_for_evalb: bool
) -> SentencePrediction:
    gold_tree = metadata.get("gold_tree")
    # A dependency treebank's sentence (the `lal_dependencies` reader): its gold heads, labels
    # and tags are the metadata's `heads`, `labels` and `pos`.
    dependency_only = gold_tree is None and metadata.get("heads") is not None
    if gold_tree is None and not dependency_only:
        raise ValueError(f"sentence {' '.join(metadata['words'])!r} has no gold tree")
    predicted = output.get("trees")
    predicted_tree = Tree.fromstring(predicted) if isinstance(predicted, str) else predicted
    if predicted_tree is not None and gold_tags_for_evalb:
        predicted_tree = with_gold_tags(predicted_tree, gold_tree)
    heads = output.get("heads")
    labels = output.get("dependency_labels")
    if dependency_only:
        return SentencePrediction(
            words=list(metadata["words"]),
            gold_tags=list(metadata.get("pos") or []),
            gold_tree=None,
            predicted_tree=None,
            gold_heads=list(metadata["heads"]),
            predicted_heads=[int(h) for h in heads] if heads is not None else None,
            gold_dependency_labels=(
                list(metadata["labels"]) if metadata.get("labels") is not None else None
            ),
            predicted_dependency_labels=list(labels) if labels is not None else None,
        )
    return SentencePrediction(
        words=list(metadata["words"]),
        gold_tags=[tag for _, tag in gold_tree.pos()],
        gold_tree=gold_tree,
        predicted_tree=predicted_tree,
        predicted_tags=list(output["pos_tags"]) if output.get("pos_tags") is not None else None,
        gold_heads=list(metadata["gold_heads"]) if "gold_heads" in metadata else None,
        predicted_heads=[int(h) for h in heads] if heads is not None else None,
        gold_dependency_labels=(
            list(metadata["gold_dependency_labels"])
            if "gold_dependency_labels" in metadata
            else None
        ),
        predicted_dependency_labels=list(labels) if labels is not None else None,
    )


def write_predictions(path: str, predictions: Sequence[SentencePrediction]) -> None:
    """Writes `predictions` as JSON lines (atomically: a killed writer leaves no half file)."""
    partial = f"{path}.partial"
    with open(partial, "w", encoding="utf-8") as out:
        for prediction in predictions:
            out.write(json.dumps(prediction.to_json(), ensure_ascii=False) + "\n")
    os.replace(partial, path)


def read_predictions(path: str) -> List[SentencePrediction]:
    """The predictions of a file written by `write_predictions`; a bad line is an error that
    names the file and the line."""
    predictions = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                predictions.append(SentencePrediction.from_json(json.loads(line)))
            except (ValueError, TypeError, KeyError) as error:
                raise ValueError(
                    f"{path}, line {number}: not a prediction record ({error}); expected a "
                    "line written by lal_allennlp.analysis.predictions.write_predictions"
                ) from error
    return predictions
