"""Learned `[START]` and `[STOP]` vectors around each sentence (Kitaev & Klein 2018, sec. 2)."""
from typing import Tuple

import torch


class SentenceBoundaries(torch.nn.Module):
    """Adds a learned START vector before and a STOP vector after each (padded) sentence."""

    def __init__(self, dim: int):
        super().__init__()
        self.start = torch.nn.Parameter(torch.randn(dim) * 0.02)
        self.stop = torch.nn.Parameter(torch.randn(dim) * 0.02)

    def forward(
        self, embedded: torch.Tensor, mask: torch.BoolTensor
    ) -> Tuple[torch.Tensor, torch.BoolTensor]:
        """
        `embedded`: `(batch_size, max_length, dim)`, `mask`: `(batch_size, max_length)`.
        Returns `(batch_size, max_length + 2, dim)` with START at 0 and STOP right after each
        sentence's last word, and the matching mask.
        """
        batch_size, max_length, dim = embedded.shape
        lengths = mask.sum(dim=1)
        # shape (batch_size, max_length + 2, dim)
        padded = torch.nn.functional.pad(embedded * mask.unsqueeze(-1), (0, 0, 1, 1))
        positions = torch.arange(max_length + 2, device=embedded.device).unsqueeze(0)
        is_start = positions == 0
        is_stop = positions == (lengths + 1).unsqueeze(1)
        padded = padded + is_start.unsqueeze(-1) * self.start + is_stop.unsqueeze(-1) * self.stop
        new_mask = positions <= (lengths + 1).unsqueeze(1)
        return padded, new_mask
