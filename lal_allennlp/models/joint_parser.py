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
(`lal_allennlp.decoding.joint_span_decode`) on `lambda * span scores` and `(1 - lambda) *
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
from allennlp.training.metrics import AttachmentScores

from lal_allennlp.syntax.dependencies import DependencySentence, to_conllu
from lal_allennlp.syntax.joint_spans import SUB_HEAD_LABEL, joint_spans_to_tree_and_heads
from lal_allennlp.syntax.trees import tree_to_spans, tree_to_string
from lal_allennlp.decoding import joint_span_decode
from lal_allennlp.models.span_parser import SpanConstituencyParser
from lal_allennlp.modules.fast_dropout import FastDropout

PTB_PUNCTUATION_TAGS = ("``", "''", ",", ".", ":")
"""POS tags of the words left out of UAS/LAS on the Penn Treebank (the usual convention)."""


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
    appending a 1 to both inputs. Contracts one pair at a time (`(pairs, labels, dim)` at most),
    unlike a broadcast matmul over all labels, which would materialise `W` per pair.
    """

    def __init__(self, input_dim: int, num_labels: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(num_labels, input_dim + 1, input_dim + 1))
        torch.nn.init.xavier_uniform_(self.weight)

    def forward(self, dependents: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
        ones = dependents.new_ones(dependents.shape[:-1] + (1,))
        dependents = torch.cat([dependents, ones], -1)
        heads = torch.cat([heads, ones], -1)
        # shape (..., num_labels)
        return torch.einsum("...i,lij,...j->...l", dependents, self.weight, heads)


@Model.register("lal_joint_parser")
class JointSpanParser(SpanConstituencyParser):
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
    punctuation_tags : `Sequence[str]`, optional (default = `` `` '' , . : ``)
        Gold POS tags of the words left out of UAS/LAS (e.g. `["PU"]` for the CTB).
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
        Applied once every layer, the span parser's included, exists.
    **kwargs
        The other parameters of `lal_span_parser` (`span_hidden_dim`, `span_partitions`,
        `dropout` (also used in the dependency MLPs), `predict_pos_tags`, `evalb_preset`, ...).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2SeqEncoder,
        arc_dim: int = 256,
        dependency_label_dim: int = 100,
        span_weight: float = 0.5,
        dependency_loss_weight: float = 1.0,
        punctuation_tags: Sequence[str] = PTB_PUNCTUATION_TAGS,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs: Any,
    ) -> None:
        super().__init__(vocab, text_field_embedder, encoder, **kwargs)
        if not 0.0 <= span_weight <= 1.0:
            raise ValueError(f"span_weight (lambda) must be in [0, 1], not {span_weight}")
        encoder_dim = encoder.get_output_dim()
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
        tag_vocab = vocab.get_token_to_index_vocabulary("pos_tags")
        self._punctuation_ids = sorted(
            tag_vocab[tag] for tag in self.punctuation_tags if tag in tag_vocab
        )
        self.attachment_scores = AttachmentScores()
        self._decoder_labels = self._decoder_label_order(vocab)
        initializer(self)

    @staticmethod
    def _decoder_label_order(vocab: Vocabulary) -> List[int]:
        """
        The chart column for each decoder label: decoder label 0 is empty (chart column 0),
        1 is `<H>` (-1 when the vocabulary has no `<H>`: it then gets the score -inf), then the
        other labels in vocabulary order (chart column `1 + vocabulary id`).
        """
        labels = vocab.get_token_to_index_vocabulary("span_labels")
        sub_head = labels.get(SUB_HEAD_LABEL)
        others = [1 + i for label, i in sorted(labels.items(), key=lambda x: x[1]) if i != sub_head]
        order = [0, -1 if sub_head is None else 1 + sub_head] + others
        while len(order) < 3:  # the decoder needs a phrase label; this one is never chosen
            order.append(-1)
        return order

    def _decoder_label_names(self) -> List[str]:
        names = ["", SUB_HEAD_LABEL]
        for column in self._decoder_labels[2:]:
            names.append(
                "" if column < 0 else self.vocab.get_token_from_index(column - 1, "span_labels")
            )
        return names

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        metadata: List[Dict[str, Any]],
        pos_tags: Optional[torch.LongTensor] = None,
        gold_spans: Optional[torch.LongTensor] = None,
        gold_span_labels: Optional[torch.LongTensor] = None,
        gold_heads: Optional[torch.LongTensor] = None,
        gold_dependency_labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        As `lal_span_parser`'s, plus

        gold_heads : `torch.LongTensor`, optional
            Shape `(batch_size, max_length)`: the head of each word, 0 for the root.
        gold_dependency_labels : `torch.LongTensor`, optional
            Shape `(batch_size, max_length)`: ids in the `dependency_labels` namespace.

        # Returns

        As `lal_span_parser` (with `spans` of the joint span decoder: all nodes of its binary
        tree, labels in the decoder's order, see `_decoder_label_order`), plus `heads` and
        `dependency_label_ids` (per sentence, one per word), and `loss` with gold data.
        """
        if self.explain:
            raise ConfigurationError(
                "Explanations (label attention, head contributions) are given by "
                "lal_span_parser models; lal_joint_parser does not compute them yet."
            )
        words = [m["words"] for m in metadata]
        mask, encoded = self._encode(tokens, words)
        max_length = mask.size(1)
        chart, _ = self._span_chart(encoded, max_length)
        chart_np = chart.detach().float().cpu().numpy()  # numpy has no bfloat16
        lengths_np = mask.sum(dim=1).cpu().numpy()
        output: Dict[str, Any] = {"mask": mask, "words": words}
        loss = self._span_and_tag_loss(
            output, encoded, mask, chart, chart_np, lengths_np, pos_tags, gold_spans,
            gold_span_labels,
        )

        # [START] stands for the root: heads are positions 0..n, dependents the words 1..n.
        heads_in, dependents_in = encoded[:, :-1], encoded[:, 1:-1]
        head_mask = torch.cat([mask.new_ones(mask.size(0), 1), mask], dim=1)
        # shape (batch_size, max_length, max_length + 1): [b, d - 1, h]
        arc_logits = self.arc_scorer(self.arc_dependent(dependents_in), self.arc_head(heads_in))
        allowed = head_mask.unsqueeze(1) & mask.unsqueeze(2)
        words = torch.arange(max_length, device=mask.device)
        allowed[:, words, words + 1] = False  # no word is its own head
        arc_log_probs = util.masked_log_softmax(arc_logits, allowed, dim=-1)
        label_dependents = self.label_dependent(dependents_in)
        label_heads = self.label_head(heads_in)

        if gold_heads is not None and gold_dependency_labels is not None:
            arc_loss = self._word_mean(
                -arc_log_probs.gather(2, gold_heads.unsqueeze(2)).squeeze(2), mask
            )
            label_logits = self._label_logits(label_dependents, label_heads, gold_heads)
            label_loss = util.sequence_cross_entropy_with_logits(
                label_logits, gold_dependency_labels, mask
            )
            dependency_loss = self.dependency_loss_weight * (arc_loss + label_loss)
            loss = dependency_loss if loss is None else loss + dependency_loss
        if loss is not None:
            output["loss"] = loss

        if not self.training:
            self._decode(output, chart_np, arc_log_probs, lengths_np, label_dependents, label_heads)
            if gold_heads is not None and gold_dependency_labels is not None:
                self._score_dependencies(output, mask, pos_tags, gold_heads, gold_dependency_labels)
            gold_trees = [m.get("gold_tree") for m in metadata]
            if any(tree is not None for tree in gold_trees):
                self.evalb(self._build_trees(output, metadata), gold_trees)
        return output

    @staticmethod
    def _word_mean(values: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """Mean over the real words of the batch."""
        return (values * mask).sum() / mask.sum().clamp(min=1)

    def _label_logits(
        self, label_dependents: torch.Tensor, label_heads: torch.Tensor, heads: torch.LongTensor
    ) -> torch.Tensor:
        """Label scores of each word with the given head: `(batch_size, max_length, labels)`."""
        index = heads.unsqueeze(2).expand(-1, -1, label_heads.size(-1))
        # shape (batch_size, max_length, label_dim): the representation of each word's head
        chosen_heads = label_heads.gather(1, index)
        return self.label_scorer(label_dependents, chosen_heads)

    def _decode(
        self,
        output: Dict[str, Any],
        chart_np: np.ndarray,
        arc_log_probs: torch.Tensor,
        lengths_np: np.ndarray,
        label_dependents: torch.Tensor,
        label_heads: torch.Tensor,
    ) -> None:
        """Runs the joint span decoder and the label classifier on its heads."""
        batch_size, fences = chart_np.shape[:2]
        columns = np.asarray(self._decoder_labels)
        span_scores = chart_np[..., np.maximum(columns, 0)].astype(np.float64)
        span_scores[..., columns < 0] = -np.inf
        # shape (batch_size, max_length + 1, max_length + 1): [b, h, d], column 0 unused
        arcs = np.zeros((batch_size, fences, fences), dtype=np.float64)
        arcs[:, :, 1:] = arc_log_probs.detach().float().cpu().numpy().transpose(0, 2, 1)
        spans, heads, _ = joint_span_decode(
            self.span_weight * span_scores, (1.0 - self.span_weight) * arcs, lengths_np
        )
        output["spans"] = [s.tolist() for s in spans]
        padded = np.zeros((batch_size, fences - 1), dtype=np.int64)
        for b, sentence_heads in enumerate(heads):
            padded[b, : len(sentence_heads)] = sentence_heads
        predicted_heads = torch.as_tensor(padded, device=label_heads.device)
        label_logits = self._label_logits(label_dependents, label_heads, predicted_heads)
        output["heads"] = predicted_heads
        output["dependency_label_ids"] = label_logits.argmax(-1)

    def _score_dependencies(
        self,
        output: Dict[str, Any],
        mask: torch.BoolTensor,
        pos_tags: Optional[torch.LongTensor],
        gold_heads: torch.LongTensor,
        gold_labels: torch.LongTensor,
    ) -> None:
        """UAS/LAS over the words whose gold POS tag is not punctuation."""
        scored = mask.clone()
        if pos_tags is not None and self._punctuation_ids:
            punctuation = torch.tensor(self._punctuation_ids, device=pos_tags.device)
            scored &= ~torch.isin(pos_tags, punctuation)
        self.attachment_scores(
            output["heads"], output["dependency_label_ids"], gold_heads, gold_labels, scored
        )

    def _build_trees(self, output: Dict[str, Any], metadata: List[Dict[str, Any]]) -> list:
        tags = self._tags_for(output, metadata)
        names = self._decoder_label_names()
        trees = []
        for b, (meta, sentence_tags) in enumerate(zip(metadata, tags)):
            n = len(meta["words"])
            heads = output["heads"][b, :n].tolist()
            tree, _ = joint_spans_to_tree_and_heads(
                meta["words"], sentence_tags, output["spans"][b], heads, names
            )
            trees.append(tree)
        return trees

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """
        Adds `trees` (one-line bracketed strings), `labelled_spans` (the constituents, as the
        span parser gives them), `pos_tags`, and per word `heads` (0 = root) and
        `dependency_labels`, and `conllu` (the sentence in CoNLL-U).
        """
        words = output_dict["words"]
        metadata = [{"words": w} for w in words]
        tags = self._tags_for(output_dict, metadata)
        trees = self._build_trees(output_dict, metadata)
        heads, labels, conllu, spans = [], [], [], []
        for b, (sentence, sentence_tags, tree) in enumerate(zip(words, tags, trees)):
            n = len(sentence)
            sentence_heads = output_dict["heads"][b, :n].tolist()
            label_ids = output_dict["dependency_label_ids"][b, :n].tolist()
            sentence_labels = [
                self.vocab.get_token_from_index(i, "dependency_labels") for i in label_ids
            ]
            heads.append(sentence_heads)
            labels.append(sentence_labels)
            conllu.append(
                to_conllu(
                    DependencySentence(sentence, sentence_tags, sentence_heads, sentence_labels)
                )
            )
            spans.append(tree_to_spans(tree)[2])
        output_dict.update(
            pos_tags=tags,
            trees=[tree_to_string(tree) for tree in trees],
            labelled_spans=spans,
            heads=heads,
            dependency_labels=labels,
            conllu=conllu,
        )
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = super().get_metrics(reset)
        if not self.training:
            scores = self.attachment_scores.get_metric(reset)
            metrics.update(UAS=scores["UAS"], LAS=scores["LAS"])
        return metrics

    default_predictor = "lal_parser"
