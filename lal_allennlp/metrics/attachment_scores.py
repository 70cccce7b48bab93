"""
Unlabelled and labelled attachment scores (UAS / LAS) without punctuation, as dependency parsers
are usually scored: AllenNLP's `AttachmentScores` over the words whose *gold* POS tag is not a
punctuation tag (Chen & Manning 2014 and most PTB results since; the tags are a parameter, e.g.
`PUNCT` for UD treebanks, `PU` for the CTB).
"""
from typing import Optional, Sequence

import torch
from allennlp.data import Vocabulary
from allennlp.training.metrics import AttachmentScores

PTB_PUNCTUATION_TAGS = ("``", "''", ",", ".", ":")
"""POS tags of the words left out of UAS/LAS on the Penn Treebank (the usual convention)."""


class PunctuationFreeAttachmentScores(AttachmentScores):
    """
    `AttachmentScores` that leaves out the words tagged with one of `punctuation_tags` in the
    `pos_tags` given with each batch.

    # Parameters

    vocab : `Vocabulary`
    punctuation_tags : `Sequence[str]`
        The gold POS tags of punctuation; tags the vocabulary does not have are ignored.
    namespace : `str`
        The vocabulary namespace of the POS tags.
    """

    def __init__(self, vocab: Vocabulary, punctuation_tags: Sequence[str], namespace: str) -> None:
        super().__init__()
        tag_vocab = vocab.get_token_to_index_vocabulary(namespace)
        self._punctuation_ids = sorted(
            tag_vocab[tag] for tag in punctuation_tags if tag in tag_vocab
        )

    def __call__(  # type: ignore[override]
        self,
        predicted_indices: torch.Tensor,
        predicted_labels: torch.Tensor,
        gold_indices: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: torch.BoolTensor,
        pos_tags: Optional[torch.Tensor] = None,
    ) -> None:
        """As `AttachmentScores`; `pos_tags` `(batch, words)` are the gold tags (without them,
        every word counts). A gold label of -1 (`fields.UNSEEN_LABEL`: not in the vocabulary)
        never matches, so its word counts for UAS but is wrong for LAS."""
        if pos_tags is not None and self._punctuation_ids:
            punctuation = torch.tensor(self._punctuation_ids, device=pos_tags.device)
            mask = mask & ~torch.isin(pos_tags, punctuation)
        # Whatever the model predicts there (even an unlabelled -1) differs from the gold label.
        unseen = gold_labels < 0
        predicted_labels = torch.where(unseen, gold_labels - 1, predicted_labels)
        super().__call__(predicted_indices, predicted_labels, gold_indices, gold_labels, mask)
