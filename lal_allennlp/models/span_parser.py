"""
A span-based constituency parser: Stern, Andreas & Klein (2017), "A Minimal Span-Based
Neural Constituency Parser", with the encoder, span features and label classifier of Kitaev &
Klein (2018), "Constituency Parsing with a Self-Attentive Encoder", sec. 2.

text field embedder -> [START] words [STOP] -> any `Seq2SeqEncoder` -> fencepost span
features -> span label scores (empty label fixed at 0) -> `SpanChart` -> CKY. Training
minimises the structured hinge loss `max(0, max_T [s(T) + Hamming(T, T*)] - s(T*))`, the
inner max found by cost-augmented CKY (`span_loss: "hinge"`, the papers' objective), or the
negative log-likelihood of the gold tree under a CRF over labelled trees, `log Z - s(T*)`
(`span_loss: "crf"`, as Zhang et al. 2020); decoding is the same CKY. An optional POS-tagging
head is trained jointly, so raw text needs no external tagger. With a label attention layer
in the encoder (Mrini et al. 2020), the parser explains its predictions on request
(`models/explanations.py`).
"""
from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator

from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.models.explanations import (
    contributions_are_exact,
    find_label_attention,
    head_contributions,
)
from lal_allennlp.models.span_parser_base import SpanParserBase
from lal_allennlp.structs import SpanChart
from lal_allennlp.structs.confidence import marginals_and_log_partition, mbr_trees, scaled


@Model.register("lal_span_parser")
class SpanConstituencyParser(SpanParserBase):
    """
    Registered as a `Model` with name "lal_span_parser".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2SeqEncoder`
    span_decoding : `str`, optional (default = `"viterbi"`)
        `"viterbi"`: the CKY's highest-scoring tree. `"mbr"` (models trained with `span_loss:
        "crf"`): the minimum Bayes risk tree of the CRF's labelled marginals
        (`structs.confidence.mbr_trees`), which maximises the expected correct labelled
        constituents less `mbr_gain` per constituent. A decode setting: set it on a trained
        model with `-o '{"model.span_decoding": "mbr"}'` (`allennlp evaluate`, `predict`) or
        `Parser.load(..., overrides=...)`.
    mbr_gain : `float`, optional (default = `0.5`)
        What each constituent of an MBR tree must be worth in probability to be kept: 0.5
        keeps a labelled span when it is more likely right than wrong; 0 maximises the
        expected labelled recall alone, and gives binary trees.
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    **kwargs
        The parameters of `SpanParserBase` (`span_hidden_dim`, `span_partitions`, `dropout`,
        `predict_pos_tags`, `pos_tag_loss_weight`, `span_loss`, `evalb_preset`,
        `evalb_parameter_file`, `evalb_gold_tags`, `confidence_temperatures`).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        span_decoding: str = "viterbi",
        mbr_gain: float = 0.5,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, text_field_embedder, encoder, **kwargs)
        if span_decoding not in ("viterbi", "mbr"):
            raise ConfigurationError(
                f'span_decoding must be "viterbi" or "mbr", got "{span_decoding}".'
            )
        if span_decoding == "mbr" and self.span_loss != "crf":
            raise ConfigurationError(
                'span_decoding "mbr" decodes the tree CRF\'s marginals: it needs a model trained '
                f'with span_loss: "crf", and this one has span_loss: "{self.span_loss}".'
            )
        if not 0.0 <= mbr_gain <= 1.0:
            raise ConfigurationError(f"mbr_gain must be in [0, 1], got {mbr_gain}.")
        self.span_decoding = span_decoding
        self.mbr_gain = mbr_gain
        initializer(self)

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        metadata: List[Dict[str, Any]],
        pos_tags: Optional[torch.LongTensor] = None,
        gold_spans: Optional[torch.LongTensor] = None,
        gold_span_labels: Optional[torch.LongTensor] = None,
        explain: Optional[List[bool]] = None,
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
        explain : `List[bool]`, optional
            Per sentence, whether to explain the prediction (the predictor's `"explain"`);
            when any is true, the batch's explanations are computed.

        # Returns

        A dict with `words`, `loss` with gold spans or tags, and when not training `trees`,
        `labelled_spans` and the decoder's `spans` (see `SpanParserBase._parse`), with
        explanations when asked: `label_attention` (per sentence and head, the attention over
        `[START] words [STOP]`), `span_contributions` (per labelled span, each head's share)
        and `explanation_note`.
        """
        gold = {
            "pos_tags": pos_tags,
            "gold_spans": gold_spans,
            "gold_span_labels": gold_span_labels,
        }
        return self._parse(tokens, metadata, gold, explain)

    def _decode(
        self,
        chart: SpanChart,
        encoded: torch.Tensor,
        mask: torch.BoolTensor,
        words: List[List[str]],
        tags: List[List[str]],
    ) -> Dict[str, Any]:
        """The CKY's best trees, or with `span_decoding: "mbr"` the MBR trees of the
        marginals (the temperature does not change the Viterbi tree; it does change MBR's)."""
        if self.span_decoding == "viterbi":
            return super()._decode(chart, encoded, mask, words, tags)
        crf = scaled(chart, self.confidence_temperatures["spans"])
        marginals, _ = marginals_and_log_partition(crf)
        rows = mbr_trees(marginals, chart.lengths, self.mbr_gain)
        return self._trees(words, tags, [[tuple(r) for r in s.tolist()] for s in rows])

    @property
    def capabilities(self) -> ParseCapabilities:
        """Trees; predicted tags with a tagging head; explanations with a label attention
        layer in the encoder; span confidences when trained as a tree CRF."""
        return ParseCapabilities(
            trees=True,
            heads=False,
            pos_tags=self.predict_pos_tags,
            explanations=find_label_attention(self.encoder) is not None,
            confidences=self.span_loss == "crf",
            kbest=True,
        )

    def _explain(self, output: Dict[str, Any], fenceposts: torch.Tensor) -> Dict[str, Any]:
        """Label attention per head and word, and head contributions per predicted span."""
        layer = find_label_attention(self.encoder)
        if layer is None:
            raise ConfigurationError(
                "Explanations need a label attention layer in the encoder "
                f"({type(self.encoder).__name__} has none)."
            )
        words, spans = output["words"], output["spans"]
        explanations: Dict[str, Any] = {}
        if layer.query_vectors:
            # shape (batch_size, num_heads, max_length + 2): over [START] words [STOP]
            attention = layer.last_attention.detach().cpu()
            explanations["label_attention"] = [
                attention[b, :, : len(w) + 2].tolist() for b, w in enumerate(words)
            ]
        if layer.concatenate_heads and self.span_partitions == layer.num_heads:
            device = fenceposts.device
            counts = [len(s) for s in spans]
            flat = [span for sentence_spans in spans for span in sentence_spans]
            index = torch.tensor(flat, dtype=torch.long, device=device).view(-1, 3)
            batch_index = torch.repeat_interleave(
                torch.arange(len(spans), device=device), torch.tensor(counts, device=device)
            )
            # shape (num_spans, num_heads)
            shares = head_contributions(
                fenceposts, batch_index, index[:, 0], index[:, 1], layer.num_heads
            )
            explanations["span_contributions"] = [
                part.tolist() for part in torch.split(shares.detach().cpu(), counts)
            ]
        if contributions_are_exact(layer):
            note = "exact: each head owns one slice of the span vector"
        else:
            note = (
                "approximate: the label attention layer's position-wise feed-forward layer (or "
                "combined heads) mixes the heads, so a slice does not belong to one head"
            )
        explanations["explanation_note"] = [note] * len(spans)
        return explanations
