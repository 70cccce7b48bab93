"""
A span-based constituency parser: Stern, Andreas & Klein (2017), "A Minimal Span-Based
Neural Constituency Parser", with the encoder, span features and label classifier of Kitaev &
Klein (2018), "Constituency Parsing with a Self-Attentive Encoder", sec. 2.

text field embedder -> [START] words [STOP] -> any `Seq2SeqEncoder` -> fencepost span
features -> span label scores (empty label fixed at 0) -> CKY. Training minimises the
structured hinge loss `max(0, max_T [s(T) + Hamming(T, T*)] - s(T*))`, the inner max found by
cost-augmented CKY (`span_loss: "hinge"`, the papers' objective), or the negative
log-likelihood of the gold tree under a CRF over labelled binary trees, `log Z - s(T*)`
(`span_loss: "crf"`, as Zhang et al. 2020; `structs/tree_crf.py`); decoding is the same CKY.
An optional POS-tagging head is trained jointly, so raw text needs no external tagger.
"""
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy

from lal_allennlp.syntax.trees import spans_to_tree, tree_to_string
from lal_allennlp.decoding import cky_decode
from lal_allennlp.metrics import EvalbMetric
from lal_allennlp.models.explanations import (
    contributions_are_exact,
    find_label_attention,
    head_contributions,
)
from lal_allennlp.modules import (
    SentenceBoundaries,
    SpanLabelScorer,
    fencepost_features,
    span_indices,
)
from lal_allennlp.structs import tree_log_partition
from lal_allennlp.modules.word_piece_limit import explain_too_long
from lal_allennlp.modules.fast_dropout import FastDropout, replace_dropout


@Model.register("lal_span_parser")
class SpanConstituencyParser(Model):
    """
    Registered as a `Model` with name "lal_span_parser".

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
    span_partitions : `int`, optional (default = `None`)
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
    span_loss : `str`, optional (default = `"hinge"`)
        `"hinge"`: the structured margin loss of Stern et al. (2017) and Kitaev & Klein (2018),
        as in the papers. `"crf"`: the tree CRF's negative log-likelihood (dense gradients on
        every span and label; it learns faster on small budgets).
    evalb_preset : `str`, optional (default = `"collins"`)
        EVALB parameters of the validation metric (`lal_evalb`'s presets: `"collins"`, `"nk"`,
        `"ctb_punctuation"`).
    evalb_parameter_file : `Optional[str]`, optional (default = `None`)
        An EVALB `.prm` file instead of the preset (another language's punctuation).
    evalb_gold_tags : `bool`, optional (default = `False`)
        Score the predicted trees' brackets with the gold POS tags (`lal_evalb`'s
        `gold_tags`): every sentence counts whatever the predicted tags.
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    """

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
        span_loss: str = "hinge",
        evalb_preset: str = "collins",
        evalb_parameter_file: Optional[str] = None,
        evalb_gold_tags: bool = False,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self.text_field_embedder = text_field_embedder
        # A pretrained transformer's dropout layers draw their masks with torch's slow CPU
        # bernoulli_; FastDropout draws the same kind of mask 3-4x faster.
        replace_dropout(text_field_embedder)
        self.encoder = encoder
        if text_field_embedder.get_output_dim() != encoder.get_input_dim():
            raise ConfigurationError(
                f"The text field embedder's output dimension ({text_field_embedder.get_output_dim()}) "
                f"must equal the encoder's input dimension ({encoder.get_input_dim()})."
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
            raise ConfigurationError(
                f'span_loss must be "hinge" or "crf", got "{span_loss}".'
            )
        self.span_loss = span_loss
        self.boundaries = SentenceBoundaries(text_field_embedder.get_output_dim())
        self.dropout = FastDropout(dropout)
        self.num_span_labels = vocab.get_vocab_size("span_labels")
        self.span_label_scorer = SpanLabelScorer(
            encoder_dim, span_hidden_dim, self.num_span_labels, dropout
        )
        self.predict_pos_tags = predict_pos_tags
        self.pos_tag_loss_weight = pos_tag_loss_weight
        if predict_pos_tags:
            self.tag_projection = torch.nn.Linear(encoder_dim, vocab.get_vocab_size("pos_tags"))
            self.tag_accuracy = CategoricalAccuracy()
        self.evalb = EvalbMetric(evalb_preset, evalb_parameter_file, gold_tags=evalb_gold_tags)
        # Set by the predictor (`"explain": true`) to return label attention explanations.
        self.explain = False
        initializer(self)

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        metadata: List[Dict[str, Any]],
        pos_tags: Optional[torch.LongTensor] = None,
        gold_spans: Optional[torch.LongTensor] = None,
        gold_span_labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        tokens : `TextFieldTensors`
        metadata : `List[Dict[str, Any]]`
            Per sentence: `words`, `pos_tags` (or None) and `gold_tree` (or None).
        pos_tags : `torch.LongTensor`, optional
            Shape `(batch_size, max_length)`, gold POS tag ids.
        gold_spans : `torch.LongTensor`, optional
            Shape `(batch_size, num_gold_spans, 2)`, inclusive word indices, -1 for padding.
        gold_span_labels : `torch.LongTensor`, optional
            Shape `(batch_size, num_gold_spans)`, ids in the `span_labels` namespace.

        # Returns

        A dict with `spans` (per sentence a list of `[start, end_exclusive, label_id]` of
        the predicted non-empty spans, label ids shifted by one so 0 is empty),
        `pos_tag_ids` (`(batch_size, max_length)`, if tags are predicted), `mask`, `words`,
        and `loss` when gold spans are given.
        """
        words = [m["words"] for m in metadata]
        mask, encoded = self._encode(tokens, words)
        chart, fenceposts = self._span_chart(encoded, mask.size(1))
        chart_np = chart.detach().float().cpu().numpy()  # numpy has no bfloat16
        lengths_np = mask.sum(dim=1).cpu().numpy()

        output: Dict[str, Any] = {"mask": mask, "words": words}
        loss = self._span_and_tag_loss(
            output, encoded, mask, chart, chart_np, lengths_np, pos_tags, gold_spans,
            gold_span_labels,
        )
        if loss is not None:
            output["loss"] = loss

        if not self.training:
            spans, _ = cky_decode(chart_np, lengths_np)
            output["spans"] = [s[s[:, 2] > 0].tolist() for s in spans]
            if self.explain:
                self._add_explanations(output, fenceposts)
            gold_trees = [m.get("gold_tree") for m in metadata]
            if any(tree is not None for tree in gold_trees):
                predicted = self._build_trees(output, metadata)
                self.evalb(predicted, gold_trees)
        return output

    def _encode(
        self, tokens: TextFieldTensors, words: Optional[List[List[str]]] = None
    ) -> Tuple[torch.BoolTensor, torch.Tensor]:
        """
        The word mask `(batch_size, max_length)` and the encoder output over `[START] words
        [STOP]`, `(batch_size, max_length + 2, encoder_dim)`, dropout applied. `words` name
        the sentences in the error for one longer than the transformer can read.
        """
        mask = util.get_text_field_mask(tokens)
        try:
            # shape (batch_size, max_length, embedding_dim)
            embedded = self.dropout(self.text_field_embedder(tokens))
        except (RuntimeError, IndexError) as error:
            explain_too_long(error, self.text_field_embedder, tokens, words)
            raise
        # shape (batch_size, max_length + 2, embedding_dim)
        bounded, bounded_mask = self.boundaries(embedded, mask)
        # shape (batch_size, max_length + 2, encoder_dim)
        encoded = self.dropout(self.encoder(bounded, bounded_mask))
        return mask, encoded

    def _span_chart(
        self, encoded: torch.Tensor, max_length: int
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        The chart of span label scores, `(batch_size, max_length + 1, max_length + 1,
        num_span_labels + 1)` (`[b, i, j, 0]` = 0 is the empty label, `1 + v` the vocabulary
        label v; cells with `j <= i` are 0), and the fencepost features.
        """
        starts, ends = span_indices(max_length, encoded.device)
        # shape (batch_size, max_length + 1, encoder_dim)
        fenceposts = fencepost_features(encoded, self.span_partitions)
        # shape (batch_size, num_spans, num_span_labels + 1); label 0 is empty (score 0)
        span_scores = self.span_label_scorer(fenceposts, starts, ends)
        chart = span_scores.new_zeros(
            span_scores.size(0), max_length + 1, max_length + 1, span_scores.size(-1)
        )
        chart[:, starts, ends] = span_scores
        return chart, fenceposts

    def _span_and_tag_loss(
        self,
        output: Dict[str, Any],
        encoded: torch.Tensor,
        mask: torch.BoolTensor,
        chart: torch.Tensor,
        chart_np: np.ndarray,
        lengths_np: np.ndarray,
        pos_tags: Optional[torch.LongTensor],
        gold_spans: Optional[torch.LongTensor],
        gold_span_labels: Optional[torch.LongTensor],
    ) -> Optional[torch.Tensor]:
        """
        The span loss (`span_loss`; if gold spans are given) plus the weighted POS tag loss
        (if tags are predicted and gold tags given); sets `output["pos_tag_ids"]`. `None` if
        there is nothing to learn from.
        """
        loss: Optional[torch.Tensor] = None
        if gold_spans is not None and gold_span_labels is not None:
            gold_chart = self._gold_chart(gold_spans, gold_span_labels, mask.size(1))
            if self.span_loss == "crf":
                loss = self._crf_loss(chart, mask.sum(dim=1), gold_chart)
            else:
                loss = self._hinge_loss(chart, chart_np, lengths_np, gold_chart)
        if self.predict_pos_tags:
            # shape (batch_size, max_length, num_pos_tags)
            tag_logits = self.tag_projection(encoded[:, 1:-1])
            output["pos_tag_ids"] = tag_logits.argmax(-1)
            if pos_tags is not None:
                tag_loss = util.sequence_cross_entropy_with_logits(tag_logits, pos_tags, mask)
                self.tag_accuracy(tag_logits, pos_tags, mask)
                weighted = self.pos_tag_loss_weight * tag_loss
                loss = weighted if loss is None else loss + weighted
        return loss

    def _add_explanations(self, output: Dict[str, Any], fenceposts: torch.Tensor) -> None:
        """Label attention per head and word, and head contributions per predicted span."""
        layer = find_label_attention(self.encoder)
        if layer is None:
            raise ConfigurationError(
                "Explanations need a label attention layer in the encoder "
                f"({type(self.encoder).__name__} has none)."
            )
        batch_size = len(output["spans"])
        if layer.query_vectors:
            # shape (batch_size, num_heads, max_length + 2): over [START] words [STOP]
            output["label_attention"] = layer.last_attention
        if layer.concatenate_heads and self.span_partitions == layer.num_heads:
            counts = [len(spans) for spans in output["spans"]]
            flat = [span for spans in output["spans"] for span in spans]
            index = torch.tensor(flat, dtype=torch.long, device=fenceposts.device).view(-1, 3)
            batch_index = torch.repeat_interleave(
                torch.arange(batch_size, device=fenceposts.device),
                torch.tensor(counts, device=fenceposts.device),
            )
            # shape (num_spans, num_heads)
            shares = head_contributions(
                fenceposts, batch_index, index[:, 0], index[:, 1], layer.num_heads
            )
            output["span_contributions"] = [
                part.tolist() for part in torch.split(shares.detach().cpu(), counts)
            ]
        if contributions_are_exact(layer):
            note = "exact: each head owns one slice of the span vector"
        else:
            note = (
                "approximate: the label attention layer's position-wise feed-forward layer (or "
                "combined heads) mixes the heads, so a slice does not belong to one head"
            )
        output["explanation_note"] = [note] * batch_size

    def _gold_chart(
        self, gold_spans: torch.LongTensor, gold_span_labels: torch.LongTensor, max_length: int
    ) -> np.ndarray:
        """Gold label id (shifted by one, 0 = not a constituent) for every span, as numpy."""
        spans = gold_spans.cpu().numpy()
        labels = gold_span_labels.cpu().numpy()
        # shape (batch_size, max_length + 1, max_length + 1)
        gold = np.zeros((spans.shape[0], max_length + 1, max_length + 1), dtype=np.int64)
        batch_index, span_index = np.nonzero(spans[:, :, 0] >= 0)
        gold[
            batch_index,
            spans[batch_index, span_index, 0],
            spans[batch_index, span_index, 1] + 1,
        ] = (labels[batch_index, span_index] + 1)
        return gold

    def _hinge_loss(
        self, chart: torch.Tensor, chart_np: np.ndarray, lengths: np.ndarray, gold: np.ndarray
    ) -> torch.Tensor:
        """Mean over sentences of `max(0, s(T_hat) + Hamming(T_hat, T*) - s(T*))`."""
        predicted, _ = cky_decode(chart_np, lengths, gold)
        # shape (num_predicted_spans, 4): batch, start, end, label
        pred = np.concatenate(
            [np.concatenate([np.full((len(s), 1), b), s], axis=1) for b, s in enumerate(predicted)]
        )
        # The Hamming cost: predicted spans whose label is not the gold one (0 = no constituent).
        wrong = pred[:, 3] != gold[pred[:, 0], pred[:, 1], pred[:, 2]]
        cost = np.bincount(pred[:, 0], wrong, minlength=len(lengths))
        margin = self._tree_scores(chart, pred) + chart.new_tensor(cost)
        return torch.relu(margin - self._gold_tree_scores(chart, gold)).mean()

    def _crf_loss(
        self, chart: torch.Tensor, lengths: torch.Tensor, gold: np.ndarray
    ) -> torch.Tensor:
        """Mean over sentences of `log Z - s(T*)` (the empty label's score is 0, so only the
        gold tree's labelled spans add to `s(T*)`)."""
        chart = chart.float()
        return (tree_log_partition(chart, lengths) - self._gold_tree_scores(chart, gold)).mean()

    @classmethod
    def _gold_tree_scores(cls, chart: torch.Tensor, gold: np.ndarray) -> torch.Tensor:
        """Per sentence, the score of the gold tree: its labelled spans (`gold[b, i, j] > 0`)."""
        b, i, j = np.nonzero(gold)
        return cls._tree_scores(chart, np.stack([b, i, j, gold[b, i, j]], axis=1))

    @staticmethod
    def _tree_scores(chart: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
        """Per sentence, the sum of `chart[b, i, j, label]` over the rows `(b, i, j, label)`."""
        index = torch.as_tensor(rows, dtype=torch.long, device=chart.device)
        scores = chart[index[:, 0], index[:, 1], index[:, 2], index[:, 3]]
        return chart.new_zeros(chart.size(0)).index_add(0, index[:, 0], scores)

    def _tags_for(self, output: Dict[str, Any], metadata: List[Dict[str, Any]]) -> List[List[str]]:
        tags = []
        for b, meta in enumerate(metadata):
            length = len(meta["words"])
            if self.predict_pos_tags:
                ids = output["pos_tag_ids"][b, :length].tolist()
                tags.append([self.vocab.get_token_from_index(i, "pos_tags") for i in ids])
            elif meta.get("pos_tags"):
                tags.append(list(meta["pos_tags"]))
            else:
                tags.append(["UNK"] * length)
        return tags

    def _labelled_spans(self, spans: List[List[int]]) -> List[Tuple[int, int, str]]:
        return [
            (int(i), int(j), self.vocab.get_token_from_index(int(label) - 1, "span_labels"))
            for i, j, label in spans
        ]

    def _build_trees(self, output: Dict[str, Any], metadata: List[Dict[str, Any]]) -> list:
        tags = self._tags_for(output, metadata)
        return [
            spans_to_tree(meta["words"], sentence_tags, self._labelled_spans(spans))
            for meta, sentence_tags, spans in zip(metadata, tags, output["spans"])
        ]

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds `trees` (one-line bracketed strings), `labelled_spans` and `pos_tags`."""
        metadata = [{"words": words} for words in output_dict["words"]]
        tags = self._tags_for(output_dict, metadata)
        output_dict["pos_tags"] = tags
        output_dict["labelled_spans"] = [self._labelled_spans(s) for s in output_dict["spans"]]
        if "label_attention" in output_dict:
            output_dict["label_attention"] = [
                attention[:, : len(words) + 2].tolist()
                for attention, words in zip(output_dict["label_attention"], output_dict["words"])
            ]
        output_dict["trees"] = [
            tree_to_string(spans_to_tree(words, sentence_tags, spans))
            for words, sentence_tags, spans in zip(
                output_dict["words"], tags, output_dict["labelled_spans"]
            )
        ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {}
        if self.predict_pos_tags:
            metrics["pos_accuracy"] = self.tag_accuracy.get_metric(reset)
        if not self.training:
            metrics.update(self.evalb.get_metric(reset))
        return metrics

    default_predictor = "lal_parser"
