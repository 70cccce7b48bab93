"""
The joint span parser (Zhou & Zhao 2019, "Head-Driven Phrase Structure Grammar Parsing on Penn
Treebank"; the parser of Mrini et al. 2020, LAL-Parser): one encoder, span label scores over
the joint span labels (`<H>` sub-head spans included) and biaffine dependency scores, decoded
together into a constituency tree and a dependency tree that agree.

text field embedder -> [START] words [STOP] -> any `Seq2SeqEncoder` ->
  * fencepost span features -> span label scores (as `lal_span_parser`);
  * Dozat & Manning (2017) biaffine scorer: separate MLPs for dependents and heads,
    `s(d, h) = d^T W h + U^T d + V^T h + b`, with [START] standing for the root;
  * a biaffine dependency label classifier over (dependent, head) pairs, its own MLPs.

Training: loss = hinge loss over the labelled joint spans (Hamming-augmented CKY, as the span
parser) + cross-entropy of each word's head + cross-entropy of its dependency label given the
gold head (+ the POS tag loss). Decoding: the exact joint span decoder
(`lal_allennlp.structs.JointSpanChart`) on `lambda * span scores` and `(1 - lambda) *
log P(head | dependent)`; each word's label is the label classifier's best label for the
decoded head.
"""
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, TextFieldEmbedder
from allennlp.modules.matrix_attention import BilinearMatrixAttention
from allennlp.nn import InitializerApplicator, util

from lal_allennlp.dataset_readers.fields import UNSEEN_LABEL
from lal_allennlp.metrics.attachment_scores import (
    PTB_PUNCTUATION_TAGS,
    PunctuationFreeAttachmentScores,
)
from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.models.span_parser_base import Gold, SpanParserBase
from lal_allennlp.modules.fast_dropout import FastDropout
from lal_allennlp.structs import JointSpanChart, SpanChart, decoder_columns
from lal_allennlp.structs.confidence import sentence_confidence
from lal_allennlp.structs.joint_span_chart import decoder_label_names
from lal_allennlp.syntax.dependencies import DependencySentence, to_conllu
from lal_allennlp.syntax.joint_spans import joint_constituents
from lal_allennlp.syntax.trees import spans_to_tree


class _MLP(torch.nn.Sequential):
    """Linear -> LeakyReLU(0.1) -> dropout (Dozat & Manning's dependent/head projections)."""

    def __init__(self, input_dim: int, output_dim: int, dropout: float) -> None:
        super().__init__(
            torch.nn.Linear(input_dim, output_dim),
            torch.nn.LeakyReLU(0.1),
            FastDropout(dropout),
        )


class _PairLabelScorer(torch.nn.Module):
    """
    Biaffine label scores of aligned (dependent, head) pairs, Dozat & Manning (2017):
    `s_l(d, h) = d^T W_l h + U_l^T d + V_l^T h + b_l`, with `U`, `V`, `b` folded into `W` by
    appending a 1 to both inputs.

    Computed as one matrix product: `s_l(d, h) = sum_ij (d h^T)_ij W_lij`, the pairs' outer
    products `(pairs, dim^2)` times the weights flattened per label `(dim^2, labels)`. That is
    the same number of multiplications as torch's `bilinear` (or an `einsum`) but runs as one
    large GEMM, forward and backward; with hundreds of labels this is the largest product of a
    joint parse (the benchmark page has the figures). Neither form materialises `W` per pair.
    """

    def __init__(self, input_dim: int, num_labels: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(num_labels, input_dim + 1, input_dim + 1))
        torch.nn.init.xavier_uniform_(self.weight)

    def forward(self, dependents: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
        ones = dependents.new_ones(dependents.shape[:-1] + (1,))
        dependents = torch.cat([dependents, ones], -1)
        heads = torch.cat([heads, ones], -1)
        # shape (..., (dim + 1)^2): [.., i (dim + 1) + j] = d_i h_j
        outer = (dependents.unsqueeze(-1) * heads.unsqueeze(-2)).flatten(-2)
        # shape (..., num_labels)
        return outer @ self.weight.flatten(1).t()


@Model.register("lal_joint_parser")
class JointSpanParser(SpanParserBase):
    """
    Registered as a `Model` with name "lal_joint_parser". Reads the instances of the `lal_ptb`
    reader with `joint_spans` (or `dependencies_dir` / `dependencies_path`) set.

    # Parameters

    vocab : `Vocabulary`
        Needs `span_labels` (the joint span labels, `<H>` among them), `dependency_labels`
        and, when tags are predicted or punctuation is left out of UAS/LAS, `pos_tags`.
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2SeqEncoder`
    arc_dim : `int`, optional (default = `256`)
        Output size of the dependent and head MLPs of the arc scorer (Dozat & Manning: 500).
    dependency_label_dim : `int`, optional (default = `100`)
        Output size of the MLPs of the label classifier (Dozat & Manning: 100).
    span_weight : `float`, optional (default = `0.5`)
        The lambda of the decoder: span scores times lambda, arc log-probabilities times
        1 - lambda (Zhou & Zhao's and Mrini et al.'s best setting: 0.5).
    dependency_loss_weight : `float`, optional (default = `1.0`)
        Weight of the head and label cross-entropies in the loss.
    dependency_input : `str`, optional (default = `"encoder"`)
        What the arc and dependency label MLPs read per position (`[START]`, the root, and the
        words): `"encoder"` (the encoder output), `"embedder"` (the text field embedder's
        output with the learned `[START]` vector, e.g. the transformer's word vectors), or
        `"both"` (the two concatenated), as `pos_tag_input` for the tagger. A label attention
        encoder's output is sliced per label head for spans; heads and dependents may be read
        better from the word vectors themselves.
    punctuation_tags : `Sequence[str]`, optional (default = `` `` '' , . : ``)
        Gold POS tags of the words left out of UAS/LAS (e.g. `["PU"]` for the CTB).
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
        Applied once every layer, the span parser's included, exists.
    **kwargs
        The other parameters of `lal_span_parser` (`span_hidden_dim`, `span_partitions`,
        `dropout` (also used in the dependency MLPs), `predict_pos_tags`, `evalb_preset`,
        `confidence_temperatures` (here `"spans"`, `"heads"` and `"dependency_labels"`), ...).
    """

    temperature_names = ("spans", "heads", "dependency_labels")

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        arc_dim: int = 256,
        dependency_label_dim: int = 100,
        span_weight: float = 0.5,
        dependency_loss_weight: float = 1.0,
        dependency_input: str = "encoder",
        punctuation_tags: Sequence[str] = PTB_PUNCTUATION_TAGS,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, text_field_embedder, encoder, **kwargs)
        if not 0.0 <= span_weight <= 1.0:
            raise ValueError(f"span_weight (lambda) must be in [0, 1], not {span_weight}")
        if dependency_input not in ("encoder", "embedder", "both"):
            raise ConfigurationError(
                'dependency_input must be "encoder", "embedder" or "both", '
                f'got "{dependency_input}".'
            )
        self.dependency_input = dependency_input
        encoder_dim = {
            "encoder": encoder.get_output_dim(),
            "embedder": text_field_embedder.get_output_dim(),
            "both": encoder.get_output_dim() + text_field_embedder.get_output_dim(),
        }[dependency_input]
        dropout = self.dropout.p
        self.arc_dependent = _MLP(encoder_dim, arc_dim, dropout)
        self.arc_head = _MLP(encoder_dim, arc_dim, dropout)
        # d^T W h + U^T d + V^T h + b: the input biases add the linear terms and the bias.
        self.arc_scorer = BilinearMatrixAttention(arc_dim, arc_dim, use_input_biases=True)
        self.label_dependent = _MLP(encoder_dim, dependency_label_dim, dropout)
        self.label_head = _MLP(encoder_dim, dependency_label_dim, dropout)
        self.num_dependency_labels = vocab.get_vocab_size("dependency_labels")
        self.label_scorer = _PairLabelScorer(dependency_label_dim, self.num_dependency_labels)
        self.span_weight = span_weight
        self.dependency_loss_weight = dependency_loss_weight
        self.punctuation_tags = tuple(punctuation_tags)
        self.attachment_scores = PunctuationFreeAttachmentScores(
            vocab, self.punctuation_tags, "pos_tags"
        )
        self._decoder_columns = decoder_columns(self.span_labels)
        self._decoder_names = decoder_label_names(self.span_labels, self._decoder_columns)
        initializer(self)

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        metadata: List[Dict[str, Any]],
        pos_tags: Optional[torch.LongTensor] = None,
        gold_spans: Optional[torch.LongTensor] = None,
        gold_span_labels: Optional[torch.LongTensor] = None,
        gold_heads: Optional[torch.LongTensor] = None,
        gold_dependency_labels: Optional[torch.LongTensor] = None,
        explain: Optional[List[bool]] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        As `lal_span_parser`'s, plus

        gold_heads : `torch.LongTensor`, optional
            Shape `(batch_size, max_length)`: the head of each word, 0 for the root.
        gold_dependency_labels : `torch.LongTensor`, optional
            Shape `(batch_size, max_length)`: ids in the `dependency_labels` namespace.

        # Returns

        As `lal_span_parser` (`trees`, `labelled_spans`; no decoder `spans`, which only
        explanations read), plus `heads` and `dependency_label_ids` (`(batch_size,
        max_length)`) when not training.
        """
        gold = {
            "pos_tags": pos_tags,
            "gold_spans": gold_spans,
            "gold_span_labels": gold_span_labels,
            "gold_heads": gold_heads,
            "gold_dependency_labels": gold_dependency_labels,
        }
        return self._parse(tokens, metadata, gold, explain)

    def _dependency_features(
        self, encoded: torch.Tensor, embedded: torch.Tensor, mask: torch.BoolTensor
    ) -> torch.Tensor:
        """What the arc and label MLPs read (`dependency_input`) over `[START] words [STOP]`:
        `(batch_size, max_length + 2, dim)`."""
        if self.dependency_input == "encoder":
            return encoded
        # The embedder's words between the same learned [START] and [STOP] vectors that the
        # encoder reads.
        bounded, _ = self.boundaries(embedded, mask)
        if self.dependency_input == "embedder":
            return bounded
        return torch.cat([encoded, bounded], dim=-1)

    def _chart(  # type: ignore[override]
        self,
        encoded: torch.Tensor,
        fenceposts: torch.Tensor,
        mask: torch.BoolTensor,
        embedded: torch.Tensor,
    ) -> JointSpanChart:
        """The span chart and, for each word, the log-probability of every head."""
        spans = self._span_chart(fenceposts, mask)
        max_length = mask.size(1)
        features = self._dependency_features(encoded, embedded, mask)
        # [START] stands for the root: heads are positions 0..n, dependents the words 1..n.
        heads_in, dependents_in = features[:, :-1], features[:, 1:-1]
        head_mask = torch.cat([mask.new_ones(mask.size(0), 1), mask], dim=1)
        # shape (batch_size, max_length, max_length + 1): [b, d - 1, h]
        arc_logits = self.arc_scorer(self.arc_dependent(dependents_in), self.arc_head(heads_in))
        allowed = head_mask.unsqueeze(1) & mask.unsqueeze(2)
        words = torch.arange(max_length, device=mask.device)
        allowed[:, words, words + 1] = False  # no word is its own head
        # float32 under any autocast: the log-softmax's sums need it, and allennlp's masked
        # softmax has no bfloat16 (`tiny_value_of_dtype`)
        arc_log_probs = util.masked_log_softmax(arc_logits.float(), allowed, dim=-1)
        return JointSpanChart(
            spans, arc_log_probs, self._decoder_columns, self.span_weight, features
        )

    def _loss(  # type: ignore[override]
        self,
        chart: JointSpanChart,
        encoded: torch.Tensor,
        mask: torch.BoolTensor,
        gold: Gold,
    ) -> Optional[torch.Tensor]:
        """The span loss plus the weighted head and dependency label losses."""
        loss = super()._loss(chart.spans, encoded, mask, gold)
        gold_heads, gold_labels = gold.get("gold_heads"), gold.get("gold_dependency_labels")
        if gold_heads is not None and gold_labels is not None:
            label_logits = self._label_logits(chart.word_features, gold_heads)
            # A gold label the vocabulary lacks (UNSEEN_LABEL) has no term in the label loss;
            # LAS counts it as wrong.
            known = mask & (gold_labels != UNSEEN_LABEL)
            label_loss = util.sequence_cross_entropy_with_logits(  # float32: as the arcs
                label_logits.float(), gold_labels.clamp(min=0), known
            )
            arc_loss = chart.arc_loss(gold_heads, mask)
            dependency_loss = self.dependency_loss_weight * (arc_loss + label_loss)
            loss = dependency_loss if loss is None else loss + dependency_loss
        return loss

    def _label_logits(self, features: torch.Tensor, heads: torch.LongTensor) -> torch.Tensor:
        """Label scores of each word with the given head: `(batch_size, max_length, labels)`,
        from `_dependency_features`."""
        # shape (batch_size, max_length, label_dim) and (batch_size, max_length + 1, label_dim)
        label_dependents = self.label_dependent(features[:, 1:-1])
        label_heads = self.label_head(features[:, :-1])
        index = heads.unsqueeze(2).expand(-1, -1, label_heads.size(-1))
        # shape (batch_size, max_length, label_dim): the representation of each word's head
        chosen_heads = label_heads.gather(1, index)
        return self.label_scorer(label_dependents, chosen_heads)

    def _decode(  # type: ignore[override]
        self,
        chart: JointSpanChart,
        encoded: torch.Tensor,
        mask: torch.BoolTensor,
        words: List[List[str]],
        tags: List[List[str]],
    ) -> Dict[str, Any]:
        """
        The joint span decoder's trees and heads, and the label classifier's best label for
        each decoded head.
        """
        spans, heads = chart.decode()
        # The decoder's rows are in pre-order, so its constituents are the trees' labelled
        # spans as `tree_to_spans` would list them. (`tolist`: the rows are read number by
        # number, which is slow on numpy arrays.)
        rows = [s.tolist() for s in spans]
        labelled = [joint_constituents(r, self._decoder_names) for r in rows]
        trees = [spans_to_tree(w, t, c) for w, t, c in zip(words, tags, labelled)]
        # shape (batch_size, max_length), built on the CPU and moved to the device once
        padded = np.zeros(tuple(mask.shape), dtype=np.int64)
        for b, sentence_heads in enumerate(heads):
            padded[b, : len(sentence_heads)] = sentence_heads
        predicted_heads = torch.as_tensor(padded, device=mask.device)
        label_logits = self._label_logits(chart.word_features, predicted_heads)
        columns = self._decoder_columns
        return {
            "trees": trees,
            "labelled_spans": labelled,
            # the decoded tree's labelled spans as chart rows (i, j, column), `<H>` spans
            # included: the tree the span CRF scores (`_confidences`)
            "spans": [[(i, j, columns[label]) for i, j, label in r if label > 0] for r in rows],
            "heads": predicted_heads,
            "dependency_label_ids": label_logits.argmax(-1),
            # kept for `_confidences` and calibration, which would otherwise score the labels again
            "dependency_label_logits": label_logits,
        }

    def _confidences(  # type: ignore[override]
        self, chart: JointSpanChart, output: Dict[str, Any], asked: List[bool]
    ) -> Dict[str, List[Any]]:
        """
        What `confidence` adds, per sentence (`None` for the sentences that did not ask):

        - `span_confidences` (models trained with `span_loss: "crf"`): per constituent, its
          labelled marginal under the span CRF (`SpanParserBase._confidences`); the joint
          decode is not the CRF's own best tree, but each number is still the CRF's
          probability of that labelled span;
        - `head_confidences`: per word, `P(head | word)` of the decoded head, the arc
          scorer's softmax over the sentence's positions (the distribution the head loss
          trains), its logits divided by the `"heads"` temperature;
        - `dependency_label_confidences`: per word, the label classifier's probability of the
          chosen label given the decoded head (`"dependency_labels"` temperature);
        - `tree_probability`: the product of the span CRF's probability of the constituency
          tree (with its `<H>` spans) and of every head and label probability, the model's
          probability of the parse if its two halves were independent (the decoder makes
          them agree; they are trained as separate distributions);
        - `sentence_confidence`: the mean of all the confidences above, the expected fraction
          of the parse's decisions that are right.
        """
        if self.span_loss == "crf":
            spans, span_log_probs = self._span_confidences(chart.spans, output, asked)
        else:
            spans, span_log_probs = [None] * len(asked), [0.0 if a else None for a in asked]
        heads, labels = output["heads"], output["dependency_label_ids"]
        # log P(head | word) of every head; a log-softmax of the logits' log-softmax divided
        # by a temperature equals the logits' own, divided by it (the shift cancels)
        arc_log_probs = chart.arc_log_probs.detach().float()
        # The heads a word may have (the sentence's positions but itself): the masked
        # log-softmax leaves the others at about -30, not -inf, which a temperature above 1
        # would bring back into the softmax.
        lengths = chart.spans.lengths.to(arc_log_probs.device)
        positions = torch.arange(arc_log_probs.size(2), device=arc_log_probs.device)
        words = torch.arange(arc_log_probs.size(1), device=arc_log_probs.device)
        allowed = (positions.view(1, 1, -1) <= lengths.view(-1, 1, 1)) & (
            positions.view(1, 1, -1) != words.view(1, -1, 1) + 1
        )
        head_log_probs = torch.log_softmax(
            arc_log_probs.masked_fill(~allowed, float("-inf"))
            / self.confidence_temperatures["heads"],
            -1,
        ).gather(2, heads.unsqueeze(2)).squeeze(2)
        label_logits = output["dependency_label_logits"].detach().float()
        label_log_probs = torch.log_softmax(
            label_logits / self.confidence_temperatures["dependency_labels"], -1
        ).gather(2, labels.unsqueeze(2)).squeeze(2)
        result: Dict[str, List[Any]] = {
            key: []
            for key in (
                "span_confidences",
                "head_confidences",
                "dependency_label_confidences",
                "tree_probability",
                "sentence_confidence",
            )
        }
        for b, wanted in enumerate(asked):
            if not wanted:
                for values in result.values():
                    values.append(None)
                continue
            n = len(output["words"][b])
            head_lp, label_lp = head_log_probs[b, :n], label_log_probs[b, :n]
            log_p = span_log_probs[b] + float(head_lp.sum()) + float(label_lp.sum())
            head_p, label_p = head_lp.exp().tolist(), label_lp.exp().tolist()
            result["span_confidences"].append(spans[b])
            result["head_confidences"].append(head_p)
            result["dependency_label_confidences"].append(label_p)
            result["tree_probability"].append(float(np.exp(log_p)))
            result["sentence_confidence"].append(
                sentence_confidence((spans[b] or []) + head_p + label_p, log_p)
            )
        return result

    def _update_metrics(
        self,
        output: Dict[str, Any],
        metadata: List[Dict[str, Any]],
        mask: torch.BoolTensor,
        gold: Gold,
    ) -> None:
        """EVALB, and UAS/LAS over the words whose gold POS tag is not punctuation."""
        super()._update_metrics(output, metadata, mask, gold)
        gold_heads, gold_labels = gold.get("gold_heads"), gold.get("gold_dependency_labels")
        if gold_heads is None or gold_labels is None:
            return
        self.attachment_scores(
            output["heads"],
            output["dependency_label_ids"],
            gold_heads,
            gold_labels,
            mask,
            gold.get("pos_tags"),
        )

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """
        As `lal_span_parser`'s (`trees`, `labelled_spans`, `pos_tags`), plus per word `heads`
        (0 = root) and `dependency_labels`, and `conllu` (the sentence in CoNLL-U).
        """
        output_dict = super().make_output_human_readable(output_dict)
        heads = output_dict.pop("heads").tolist()
        label_ids = output_dict.pop("dependency_label_ids").tolist()
        output_dict.pop("dependency_label_logits", None)
        output_dict["heads"], output_dict["dependency_labels"], output_dict["conllu"] = [], [], []
        for b, (words, tags) in enumerate(zip(output_dict["words"], output_dict["pos_tags"])):
            n = len(words)
            sentence_heads = heads[b][:n]
            labels = [
                self.vocab.get_token_from_index(i, "dependency_labels") for i in label_ids[b][:n]
            ]
            output_dict["heads"].append(sentence_heads)
            output_dict["dependency_labels"].append(labels)
            output_dict["conllu"].append(
                to_conllu(DependencySentence(words, tags, sentence_heads, labels))
            )
        return output_dict

    @property
    def capabilities(self) -> ParseCapabilities:
        """Trees and dependencies (CoNLL-U); predicted tags with a tagging head. No
        explanations; confidences (head and label probabilities, and span marginals when
        trained as a tree CRF)."""
        return ParseCapabilities(
            trees=True,
            heads=True,
            pos_tags=self.predict_pos_tags,
            explanations=False,
            confidences=True,
            kbest=False,
        )

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = super().get_metrics(reset)
        if not self.training:
            scores = self.attachment_scores.get_metric(reset)
            metrics.update(UAS=scores["UAS"], LAS=scores["LAS"])
        return metrics
