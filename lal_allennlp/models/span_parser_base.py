"""
What the span parsers share (Stern, Andreas & Klein 2017; Kitaev & Klein 2018, sec. 2): the
encoder over `[START] words [STOP]`, fencepost span features, a chart of span label scores,
an optional POS-tagging head, and one `forward` that reads

    encode -> chart -> loss -> decode -> metrics

Subclasses override the steps that differ (the joint span parser adds arc scores to the
chart, the dependency losses to the loss, heads to the decode). The chart is a structure of
`lal_allennlp.structs`, which owns the losses and the decoder. Trees are built once per
sentence, in `forward` when not training, and reused by the metrics and by
`make_output_human_readable`, which only turns them into strings and lists.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import util
from allennlp.training.metrics import CategoricalAccuracy

from lal_allennlp.dataset_readers.fields import UNSEEN_LABEL
from lal_allennlp.metrics import EvalbMetric
from lal_allennlp.modules import (
    SentenceBoundaries,
    SpanLabelScorer,
    fencepost_features,
    sentence_spans,
)
from lal_allennlp.modules.fast_dropout import FastDropout
# EMBEDDER_PRECISIONS and native_autocast_dtype are imported from here by the commands and the
# benchmarks.
from lal_allennlp.modules.transformer_embedder import (  # noqa: F401
    PRECISIONS as EMBEDDER_PRECISIONS,
    TransformerWordEmbedder,
    check_precision,
    native_autocast_dtype,
)
from lal_allennlp.modules.word_piece_limit import explain_too_long
from lal_allennlp.structs import ChartLabels, SpanChart
from lal_allennlp.structs.confidence import (
    marginals_and_log_partition,
    scaled,
    sentence_confidence,
    tree_scores,
)
from lal_allennlp.structs.span_chart import EMPTY
from lal_allennlp.syntax.trees import spans_to_tree, tree_to_string

Gold = Dict[str, Optional[torch.Tensor]]
"""The gold tensors of a batch by field name (`pos_tags`, `gold_spans`, ...), None if absent."""


class SpanParserBase(Model):
    """
    The shared part of `lal_span_parser` and `lal_joint_parser` (not registered itself).

    # Parameters

    vocab : `Vocabulary`
        Needs the namespaces `span_labels` (collapsed unary chains such as `S+VP`) and, when
        tags are predicted, `pos_tags`.
    text_field_embedder : `TextFieldEmbedder`
        Embeds the `tokens` field.
    encoder : `Seq2SeqEncoder`
        Any contextual encoder; its input dimension must equal the embedder's output
        dimension and its output dimension must be even (forward/backward halves).
    span_hidden_dim : `int`, optional (default = `250`)
        Hidden size of the span label classifier (Kitaev & Klein use 250).
    span_partitions : `Optional[int]`, optional (default = `None`)
        Number of slices of the encoder output that are each split into forward/backward
        halves for the span features. By default the encoder's `output_partitions` (one per
        label attention head for the label attention layer, Mrini et al. 2020 sec. 3), or 1
        for encoders that have none.
    dropout : `float`, optional (default = `0.2`)
        Dropout on the embeddings, the encoder output and in the label classifier.
    predict_pos_tags : `bool`, optional (default = `True`)
        Train a POS tagger on the encoder output (loss weighted by `pos_tag_loss_weight`) and
        use its tags in the output trees. If `False`, output trees use the tags given with
        the input, or `UNK` when there are none.
    pos_tag_loss_weight : `float`, optional (default = `1.0`)
    pos_tag_input : `str`, optional (default = `"encoder"`)
        What the tagger reads per word: `"encoder"` (the parser's encoder output),
        `"embedder"` (the text field embedder's output, e.g. the transformer's word vectors,
        before the encoder), or `"both"` (the two concatenated). A label attention encoder's
        output is made for spans (per-head slices of a few dimensions); the transformer's
        word vectors carry the word's category more directly.
    pos_tag_hidden_dim : `Optional[int]`, optional (default = `None`)
        `None`: a linear tagger. A number: an MLP tagger with one hidden layer of that size
        (linear, layer norm, ReLU, dropout, linear), as in Kitaev et al. (2019).
    span_loss : `str`, optional (default = `"hinge"`)
        `"hinge"`: the structured margin loss of Stern et al. (2017) and Kitaev & Klein (2018),
        as in the papers. `"crf"`: the tree CRF's negative log-likelihood (dense gradients on
        every span and label).
    evalb_preset : `str`, optional (default = `"collins"`)
        EVALB parameters of the validation metric (`lal_evalb`'s presets: `"collins"`, `"nk"`,
        `"ctb_punctuation"`).
    evalb_parameter_file : `Optional[str]`, optional (default = `None`)
        An EVALB `.prm` file instead of the preset (another language's punctuation).
    evalb_gold_tags : `bool`, optional (default = `False`)
        Score the predicted trees' brackets with the gold POS tags (`lal_evalb`'s
        `gold_tags`): every sentence counts whatever the predicted tags.
    embedder_precision : `Optional[str]`, optional (default = `None`)
        The `precision` of the pretrained transformer embedders (`lal_transformer`, which own
        it) in `text_field_embedder`, set over theirs: `"float32"`, `"bfloat16"`, `"float16"`
        or `"auto"`. `None` leaves theirs. Configs set the embedder's `precision`; this is the
        model-level form that archives trained before the embedder had it carry, and a setting
        for an existing archive (`-o '{"model.embedder_precision": "auto"}'`; `lal-parse
        --precision` and `Parser.load(..., precision=...)` do the same).
    confidence_temperatures : `Optional[Dict[str, float]]`, optional (default = `None`)
        The temperatures that divide the scores behind the confidences (`_confidences`):
        `"spans"` (the span chart, before the tree CRF's marginals), and for the joint parser
        also `"heads"` and `"dependency_labels"` (their logits, before the softmax). Each
        missing one is 1 (the model's own distribution). `lal-analyze calibrate` fits them on
        held-out trees and writes them into the archive's config; they change the numbers a
        parse reports, never the parse.
    """

    temperature_names: Tuple[str, ...] = ("spans",)
    """The scores `confidence_temperatures` may rescale."""

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        span_hidden_dim: int = 250,
        span_partitions: Optional[int] = None,
        dropout: float = 0.2,
        predict_pos_tags: bool = True,
        pos_tag_loss_weight: float = 1.0,
        pos_tag_input: str = "encoder",
        pos_tag_hidden_dim: Optional[int] = None,
        span_loss: str = "hinge",
        evalb_preset: str = "collins",
        evalb_parameter_file: Optional[str] = None,
        evalb_gold_tags: bool = False,
        embedder_precision: Optional[str] = None,
        confidence_temperatures: Optional[Dict[str, float]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self.confidence_temperatures = self._checked_temperatures(confidence_temperatures)
        self.text_field_embedder = text_field_embedder
        # Without a transformer embedder, the setting is only kept (it changes nothing).
        self._embedder_precision = "float32"
        if embedder_precision is not None:
            self.embedder_precision = embedder_precision
        self.encoder = encoder
        if text_field_embedder.get_output_dim() != encoder.get_input_dim():
            raise ConfigurationError(
                "The text field embedder's output dimension "
                f"({text_field_embedder.get_output_dim()}) must equal the encoder's input "
                f"dimension ({encoder.get_input_dim()})."
            )
        encoder_dim = encoder.get_output_dim()
        if span_partitions is None:
            span_partitions = getattr(encoder, "output_partitions", 1)
        if encoder_dim % (2 * span_partitions) != 0:
            raise ConfigurationError(
                f"The encoder output dimension ({encoder_dim}) must be divisible by "
                f"2 * span_partitions = {2 * span_partitions}."
            )
        self.span_partitions = span_partitions
        if span_loss not in ("hinge", "crf"):
            raise ConfigurationError(f'span_loss must be "hinge" or "crf", got "{span_loss}".')
        self.span_loss = span_loss
        self.boundaries = SentenceBoundaries(text_field_embedder.get_output_dim())
        self.dropout = FastDropout(dropout)
        self.span_labels = ChartLabels(vocab, "span_labels")
        self.num_span_labels = vocab.get_vocab_size("span_labels")
        self.span_label_scorer = SpanLabelScorer(
            encoder_dim, span_hidden_dim, self.num_span_labels, dropout
        )
        self.predict_pos_tags = predict_pos_tags
        self.pos_tag_loss_weight = pos_tag_loss_weight
        if pos_tag_input not in ("encoder", "embedder", "both"):
            raise ConfigurationError(
                f'pos_tag_input must be "encoder", "embedder" or "both", got "{pos_tag_input}".'
            )
        self.pos_tag_input = pos_tag_input
        if predict_pos_tags:
            tag_input_dim = {
                "encoder": encoder_dim,
                "embedder": text_field_embedder.get_output_dim(),
                "both": encoder_dim + text_field_embedder.get_output_dim(),
            }[pos_tag_input]
            num_tags = vocab.get_vocab_size("pos_tags")
            if pos_tag_hidden_dim is None:
                self.tag_projection = torch.nn.Linear(tag_input_dim, num_tags)
            else:
                self.tag_projection = torch.nn.Sequential(
                    # No bias: the layer norm right after it would cancel it.
                    torch.nn.Linear(tag_input_dim, pos_tag_hidden_dim, bias=False),
                    torch.nn.LayerNorm(pos_tag_hidden_dim),
                    torch.nn.ReLU(),
                    FastDropout(dropout),
                    torch.nn.Linear(pos_tag_hidden_dim, num_tags),
                )
            self.tag_accuracy = CategoricalAccuracy()
        self.evalb = EvalbMetric(evalb_preset, evalb_parameter_file, gold_tags=evalb_gold_tags)

    def _parse(
        self,
        tokens: TextFieldTensors,
        metadata: List[Dict[str, Any]],
        gold: Gold,
        explain: Optional[List[bool]] = None,
    ) -> Dict[str, Any]:
        """
        The `forward` of every span parser: encode -> chart -> loss (the structure's, then the
        tagging head's) -> decode -> metrics.

        # Returns

        A dict with `words`, `loss` when there is gold data, and when not training `trees`
        (per sentence an nltk `Tree` rooted in `TOP`) and `labelled_spans` (per sentence its
        constituents `(start, end_exclusive, label)`), plus what subclasses add; when a
        sentence's metadata has `confidence` true, `span_confidences` (`_span_confidences`).
        """
        words = [m["words"] for m in metadata]
        mask, encoded, embedded = self._encode(tokens, words)
        # shape (batch_size, max_length + 1, encoder_dim)
        fenceposts = fencepost_features(encoded, self.span_partitions)
        chart = self._chart(encoded, fenceposts, mask, embedded)
        loss = self._loss(chart, encoded, mask, gold)
        # shape (batch_size, max_length, num_pos_tags), or None
        tag_logits = self._tag_logits(encoded, embedded) if self.predict_pos_tags else None
        if tag_logits is not None and gold.get("pos_tags") is not None:
            gold_tags = gold["pos_tags"]
            # A gold tag the vocabulary lacks (UNSEEN_LABEL) has no term in the loss; the
            # accuracy counts it, and as wrong (no prediction equals -1).
            known = mask & (gold_tags != UNSEEN_LABEL)
            # float32 logits under any autocast (allennlp's loss has no bfloat16)
            tag_loss = util.sequence_cross_entropy_with_logits(
                tag_logits.float(), gold_tags.clamp(min=0), known
            )
            weighted = self.pos_tag_loss_weight * tag_loss
            loss = weighted if loss is None else loss + weighted
            self.tag_accuracy(tag_logits, gold_tags, mask)

        output: Dict[str, Any] = {"words": words}
        if loss is not None:
            output["loss"] = loss
        if not self.training:
            tags = self._tags(tag_logits, metadata)
            # the tags of the trees' preterminals (the trees are built from them)
            output["pos_tags"] = tags
            output.update(self._decode(chart, encoded, mask, words, tags))
            self._update_metrics(output, metadata, mask, gold)
            if explain is not None and any(explain):
                output.update(self._explain(output, fenceposts))
            # The request's own switch (the predictor's `"confidence"`), in each metadata dict.
            confidence = [bool(m.get("confidence", False)) for m in metadata]
            if any(confidence):
                output.update(self._confidences(chart, output, confidence))
            # The request's `"kbest"` (the predictors check it): how many trees each wants.
            wanted = [int(m.get("kbest", 1)) for m in metadata]
            if max(wanted) > 1:
                output["kbest"] = self._kbest(chart, output, words, wanted)
        return output

    def _checked_temperatures(self, given: Optional[Dict[str, float]]) -> Dict[str, float]:
        """`confidence_temperatures` with every name of `temperature_names` (1 when missing);
        a `ConfigurationError` for an unknown name or a temperature that is not positive."""
        temperatures = {name: 1.0 for name in self.temperature_names}
        for name, value in (given or {}).items():
            if name not in temperatures:
                raise ConfigurationError(
                    f"confidence_temperatures has no {name!r} for {type(self).__name__}: "
                    f"its temperatures are {list(self.temperature_names)}"
                )
            if not isinstance(value, (int, float)) or not value > 0:
                raise ConfigurationError(
                    f"confidence_temperatures[{name!r}] must be a positive number, got {value!r}"
                )
            temperatures[name] = float(value)
        return temperatures

    def _tag_logits(self, encoded: torch.Tensor, embedded: torch.Tensor) -> torch.Tensor:
        """POS tag scores `(batch_size, max_length, num_pos_tags)` from what `pos_tag_input`
        names: the encoder output at the words (without `[START]`/`[STOP]`), the embedder's,
        or both."""
        if self.pos_tag_input == "encoder":
            features = encoded[:, 1:-1]
        elif self.pos_tag_input == "embedder":
            features = embedded
        else:
            features = torch.cat([encoded[:, 1:-1], embedded], dim=-1)
        return self.tag_projection(features)

    def _encode(
        self, tokens: TextFieldTensors, words: Optional[List[List[str]]] = None
    ) -> Tuple[torch.BoolTensor, torch.Tensor, torch.Tensor]:
        """
        The word mask `(batch_size, max_length)`, the encoder output over `[START] words
        [STOP]`, `(batch_size, max_length + 2, encoder_dim)`, and the embedder output over the
        words, `(batch_size, max_length, embedding_dim)`, dropout applied to both. `words`
        name the sentences in the error for one longer than the transformer can read.
        """
        mask = util.get_text_field_mask(tokens)
        try:
            # shape (batch_size, max_length, embedding_dim), in float32 also under an autocast
            # around the whole model (allennlp's use_amp)
            embedded = self.dropout(self.text_field_embedder(tokens).float())
        except (RuntimeError, IndexError) as error:
            explain_too_long(error, self.text_field_embedder, tokens, words)
            raise
        # shape (batch_size, max_length + 2, embedding_dim)
        bounded, bounded_mask = self.boundaries(embedded, mask)
        # shape (batch_size, max_length + 2, encoder_dim)
        encoded = self.dropout(self.encoder(bounded, bounded_mask))
        return mask, encoded, embedded

    @property
    def embedder_precision(self) -> str:
        """The precision of the model's transformer embedders (`TransformerWordEmbedder`), or
        the one set on a model that has none (default `"float32"`)."""
        embedders = transformer_embedders(self)
        return embedders[0].precision if embedders else self._embedder_precision

    @embedder_precision.setter
    def embedder_precision(self, precision: str) -> None:
        self._embedder_precision = check_precision(precision, "embedder_precision")
        for embedder in transformer_embedders(self):
            embedder.precision = precision

    def _span_chart(self, fenceposts: torch.Tensor, mask: torch.BoolTensor) -> SpanChart:
        """The chart of span label scores (the empty label's column fixed at 0)."""
        max_length, lengths = mask.size(1), mask.sum(dim=1)
        # Each sentence's own spans: none over the batch's padding, which no decoder or loss
        # reads (their cells stay 0).
        batch, starts, ends = sentence_spans(lengths, max_length)
        # shape (num_spans, num_span_labels)
        label_scores = self.span_label_scorer(fenceposts, batch, starts, ends)
        return SpanChart.from_sentence_spans(
            label_scores, batch, starts, ends, lengths, max_length
        )

    def _chart(
        self,
        encoded: torch.Tensor,
        fenceposts: torch.Tensor,
        mask: torch.BoolTensor,
        embedded: torch.Tensor,
    ):
        """The structure this parser scores and decodes (a `SpanChart` here, from the
        fenceposts only; `encoded` and `embedded` are `_encode`'s, for subclasses)."""
        return self._span_chart(fenceposts, mask)

    def _loss(
        self,
        chart: SpanChart,
        encoded: torch.Tensor,
        mask: torch.BoolTensor,
        gold: Gold,
    ) -> Optional[torch.Tensor]:
        """The structure's loss: the span loss (`span_loss`), with gold spans; else `None`."""
        loss: Optional[torch.Tensor] = None
        gold_spans, gold_labels = gold.get("gold_spans"), gold.get("gold_span_labels")
        if gold_spans is not None and gold_labels is not None:
            # A gold span whose label the vocabulary lacks (UNSEEN_LABEL) is left out of the
            # gold chart, like padding: the loss is that of the gold tree without it (EVALB,
            # which reads the gold trees, still counts it as a missed bracket).
            unseen = (gold_labels == UNSEEN_LABEL).unsqueeze(-1)
            gold_spans = gold_spans.masked_fill(unseen, -1)
            gold_chart = SpanChart.gold(gold_spans, gold_labels.clamp(min=0), mask.size(1))
            if self.span_loss == "crf":
                loss = chart.crf_loss(gold_chart)
            else:
                loss = chart.hinge_loss(gold_chart)
        return loss

    def _decode(
        self,
        chart: Any,
        encoded: torch.Tensor,
        mask: torch.BoolTensor,
        words: List[List[str]],
        tags: List[List[str]],
    ) -> Dict[str, Any]:
        """The best trees: `trees`, `labelled_spans` and the decoder's `spans` (columns)."""
        return self._trees(words, tags, chart.argmax())

    def _trees(
        self,
        words: List[List[str]],
        tags: List[List[str]],
        spans: List[List[Tuple[int, int, int]]],
    ) -> Dict[str, Any]:
        """`trees`, `labelled_spans` and `spans` of the decoded labelled chart rows `spans`
        (per sentence `(i, j, column)`, no `EMPTY` row)."""
        labelled = [[(i, j, self.span_labels.name(c)) for i, j, c in s] for s in spans]
        trees = [spans_to_tree(w, t, s) for w, t, s in zip(words, tags, labelled)]
        return {"trees": trees, "labelled_spans": labelled, "spans": spans}

    def _tags(
        self, tag_logits: Optional[torch.Tensor], metadata: List[Dict[str, Any]]
    ) -> List[List[str]]:
        """Per sentence, the predicted tags, else the given ones, else `UNK` per word."""
        if tag_logits is not None:
            ids = tag_logits.argmax(-1).tolist()
            return [
                [self.vocab.get_token_from_index(i, "pos_tags") for i in ids[b][: len(m["words"])]]
                for b, m in enumerate(metadata)
            ]
        return [list(m.get("pos_tags") or ["UNK"] * len(m["words"])) for m in metadata]

    def _update_metrics(
        self,
        output: Dict[str, Any],
        metadata: List[Dict[str, Any]],
        mask: torch.BoolTensor,
        gold: Gold,
    ) -> None:
        """EVALB of the predicted trees against the gold trees, when there are any."""
        gold_trees = [m.get("gold_tree") for m in metadata]
        if any(tree is not None for tree in gold_trees):
            self.evalb(output["trees"], gold_trees)

    def _explain(self, output: Dict[str, Any], fenceposts: torch.Tensor) -> Dict[str, Any]:
        """Explanations of the predictions (the parsers with a label attention layer)."""
        raise ConfigurationError(
            f"Explanations (label attention, head contributions) are given by lal_span_parser "
            f"models; {type(self).__name__} does not compute them."
        )

    def _confidences(
        self, chart: Any, output: Dict[str, Any], asked: List[bool]
    ) -> Dict[str, List[Any]]:
        """
        What `confidence` adds, per sentence (`None` for the sentences that did not ask):

        - `span_confidences`: per constituent of `labelled_spans`, in its order, the
          probability under the tree CRF (the chart divided by the `"spans"` temperature) that
          the tree holds span `(i, j)` with exactly that label (its labelled marginal; a unary
          chain such as `S+VP` is one label);
        - `tree_probability`: the CRF's probability of the whole output tree;
        - `sentence_confidence`: the mean of the span confidences, i.e. the expected fraction
          of the output's constituents that are right (its expected labelled precision), a
          number that does not shrink with the sentence's length as the tree's probability
          does (the tree's probability when the tree has no constituent).

        Only a model trained as a CRF (`span_loss: "crf"`) defines these probabilities: for
        the hinge loss the chart scores are margins, not log-potentials, and the request is
        refused.
        """
        if self.span_loss != "crf":
            raise ConfigurationError(
                "Span confidences are marginal probabilities of the tree CRF: they need a model "
                f'trained with span_loss: "crf", and this one was trained with span_loss: '
                f'"{self.span_loss}". Leave out "confidence", or retrain with span_loss: "crf".'
            )
        spans, log_probs = self._span_confidences(chart, output, asked)
        return {
            "span_confidences": spans,
            "tree_probability": [None if p is None else float(np.exp(p)) for p in log_probs],
            "sentence_confidence": [
                sentence_confidence(c, p) for c, p in zip(spans, log_probs)
            ],
        }

    def _span_confidences(
        self, chart: SpanChart, output: Dict[str, Any], asked: List[bool]
    ) -> Tuple[List[Optional[List[float]]], List[Optional[float]]]:
        """Per sentence that asked, the labelled marginal of each constituent of
        `labelled_spans` and the log-probability of the tree whose labelled chart rows are
        `output["spans"]` (`None` for the others), under the chart divided by the `"spans"`
        temperature. One inside and one outside pass for the whole batch."""
        crf = scaled(chart, self.confidence_temperatures["spans"])
        marginals, log_z = marginals_and_log_partition(crf)
        scores = tree_scores(crf, [s if a else [] for s, a in zip(output["spans"], asked)])
        confidences: List[Optional[List[float]]] = []
        log_probs: List[Optional[float]] = []
        for b, (wanted, labelled) in enumerate(zip(asked, output["labelled_spans"])):
            if not wanted:
                confidences.append(None)
                log_probs.append(None)
                continue
            # shape (num_constituents, 3): start, end, column
            rows = torch.as_tensor(
                [(i, j, self.span_labels.column(label)) for i, j, label in labelled],
                dtype=torch.long,
                device=marginals.device,
            ).view(-1, 3)
            confidences.append(marginals[b, rows[:, 0], rows[:, 1], rows[:, 2]].tolist())
            log_probs.append(min(scores[b] - float(log_z[b]), 0.0))
        return confidences, log_probs

    def _kbest(
        self, chart: Any, output: Dict[str, Any], words: List[List[str]], wanted: List[int]
    ) -> List[Optional[List[Dict[str, Any]]]]:
        """
        Per sentence that asked for `kbest` (metadata `kbest` >= 2), its `kbest` best trees,
        best first (`structs.SpanChart.kbest`, exact lazy k-best of Huang & Chiang 2005 over
        the n-ary trees the CKY decodes): each `{"tree", "spans", "score"}` and, for a model
        trained as a tree CRF, `"probability"` (the tree's probability under the CRF, the
        `"spans"` temperature applied). `None` for the others.
        """
        if not isinstance(chart, SpanChart):
            raise ConfigurationError(
                f"k-best trees are given by lal_span_parser models; {type(self).__name__} "
                "decodes spans and dependencies together and has no exact k-best decoder. "
                'Leave out "kbest".'
            )
        temperature = self.confidence_temperatures["spans"]
        log_z: Optional[torch.Tensor] = None
        if self.span_loss == "crf":
            log_z = scaled(chart, temperature).log_partition.detach()
        tags = output["pos_tags"]
        result: List[Optional[List[Dict[str, Any]]]] = []
        for b, (k, trees) in enumerate(zip(wanted, chart.kbest(max(wanted)))):
            if k < 2:
                result.append(None)
                continue
            entries = []
            for score, rows in trees[:k]:
                labelled = [(i, j, self.span_labels.name(c)) for i, j, c in rows if c != EMPTY]
                entry: Dict[str, Any] = {
                    "tree": tree_to_string(spans_to_tree(words[b], tags[b], labelled)),
                    "spans": [list(span) for span in labelled],
                    "score": float(score),
                }
                if log_z is not None:
                    log_p = float(score) / temperature - float(log_z[b])
                    entry["probability"] = float(np.exp(min(log_p, 0.0)))
                entries.append(entry)
            result.append(entries)
        return result

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """
        Turns the trees of `forward` into one-line bracketed strings (`trees`; `forward` gives
        their tags as `pos_tags`), `labelled_spans` into lists. Drops what callers do not need
        (the decoder's `spans`).
        """
        trees = output_dict.pop("trees")
        output_dict["trees"] = [tree_to_string(tree) for tree in trees]
        output_dict["labelled_spans"] = [
            [list(span) for span in spans] for spans in output_dict["labelled_spans"]
        ]
        output_dict.pop("spans", None)
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {}
        if self.predict_pos_tags:
            metrics["pos_accuracy"] = self.tag_accuracy.get_metric(reset)
        if not self.training:
            metrics.update(self.evalb.get_metric(reset))
        return metrics

    default_predictor = "lal_parser"


def transformer_embedders(model: torch.nn.Module) -> List[TransformerWordEmbedder]:
    """The pretrained transformer embedders inside `model`, which own the precision setting."""
    return [module for module in model.modules() if isinstance(module, TransformerWordEmbedder)]


def set_embedder_precision(model: Model, precision: str, source: str) -> None:
    """Sets the precision of a loaded model's transformer embedders (`source` names the model
    in the error): a `ValueError` for an unknown value, and for a model with no such setting
    (neither a span parser, whose `embedder_precision` it sets, nor a model with a
    `lal_transformer` embedder)."""
    embedders = transformer_embedders(model)
    if not isinstance(model, SpanParserBase) and not embedders:
        raise ValueError(
            f"{source} holds a {type(model).__name__}, which has no embedder precision "
            "setting: only the span parsers (lal_span_parser, lal_joint_parser) and models "
            "with a pretrained transformer embedder (lal_transformer) have one"
        )
    try:
        check_precision(precision)
    except ConfigurationError as error:
        raise ValueError(str(error)) from error
    if isinstance(model, SpanParserBase):
        model.embedder_precision = precision
    for embedder in embedders:
        embedder.precision = precision
