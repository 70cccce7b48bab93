"""
Fields of gold labels that evaluation data may hold outside the training vocabulary.

AllenNLP's label namespaces (names ending in `tags` or `labels`: `pos_tags`, `span_labels`,
`dependency_labels`, `head_tags`) have no unknown token, so `SequenceLabelField.index` raises a
`KeyError` on a POS tag, constituent label or dependency label that the training data never had,
and `allennlp evaluate` stops on the first such sentence. A gold label the model has never seen
cannot be predicted, so it should count as an error, not stop the run: `GoldLabelField` indexes
it to `UNSEEN_LABEL` (-1), an index that is never a real label (real ones start at 0), that the
losses leave out and that the metrics count as wrong.

Input tags (fed to an embedding, e.g. the `pos_tokens` token indexer or the dependency readers'
`pos` namespace) are not gold labels: they live in padded namespaces, where AllenNLP maps an
unseen tag to the unknown token, and keep the plain fields.
"""
from allennlp.data.fields import SequenceLabelField
from allennlp.data.vocabulary import Vocabulary

UNSEEN_LABEL = -1
"""The index of a gold label that the vocabulary lacks (never a real label index)."""


class GoldLabelField(SequenceLabelField):
    """
    A `SequenceLabelField` of gold labels (POS tags for the tagger's loss and accuracy, span
    labels, dependency labels) whose labels missing from the vocabulary are indexed as
    `UNSEEN_LABEL` instead of raising; also in a padded namespace, where AllenNLP would give
    the unknown token's index, a real class the model could predict. Labels given as ints are
    kept as they are. Vocabulary counting is unchanged, so training data builds the same
    vocabulary as with `SequenceLabelField`.
    """

    def index(self, vocab: Vocabulary) -> None:
        if self._skip_indexing:
            return
        known = vocab.get_token_to_index_vocabulary(self._label_namespace)
        self._indexed_labels = [known.get(label, UNSEEN_LABEL) for label in self.labels]
