"""
Dropout with a mask that is cheap to draw on the CPU.

torch's CPU dropout draws every element with `bernoulli_`: one Mersenne Twister call and a
conversion to double per element, a visible cost on large activations such as the span
classifier's hidden layer over every span. Here each element takes 16 random bits.
Every 64-bit draw of the same generator fills four elements, and an element is dropped when
its 16 bits, read as a signed integer, fall below `round(p * 65536) - 32768`. So an element is
dropped with probability `p` rounded to a multiple of 1/65536 (within 8e-6 of `p`). The kept
elements are scaled by `1 / (1 - p_rounded)`, which keeps the expectation exact. Masks come
from torch's default generator, so `torch.manual_seed` makes them repeatable.

Off the CPU, torch's own dropout is used: its GPU kernels are already fast.
"""
from typing import Sequence

import torch

_BITS = 16
_LEVELS = 1 << _BITS


def rounded_probability(p: float) -> float:
    """The drop probability actually used for `p`: `p` rounded to a multiple of 1/65536."""
    return round(p * _LEVELS) / _LEVELS


def keep_mask(shape: Sequence[int], p: float, like: torch.Tensor) -> torch.Tensor:
    """
    A tensor of `shape` with the dtype and device of `like`, holding `1 / (1 - p')` where an
    element is kept and 0 where it is dropped; each element is dropped independently with
    probability `p'`. On the CPU `p' = rounded_probability(p)`; elsewhere the mask comes from
    torch's `bernoulli_` and `p' = p`.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"The dropout probability must be in [0, 1), got {p}.")
    if like.device.type != "cpu":
        return like.new_empty(shape).bernoulli_(1.0 - p).div_(1.0 - p)
    numel = 1
    for size in shape:
        numel *= size
    # Four 16-bit fields per full-range 64-bit draw.
    draws = torch.empty((numel + 3) // 4, dtype=torch.int64).random_(-(1 << 63), None)
    fields = draws.view(torch.int16)[:numel].view(tuple(shape))
    threshold = round(p * _LEVELS) - (_LEVELS // 2)
    scale = 1.0 / (1.0 - rounded_probability(p))
    return (fields >= threshold).to(like.dtype).mul_(scale)


def fast_dropout(inputs: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """`torch.nn.functional.dropout` with the cheap mask on the CPU."""
    if not training or p == 0.0:
        return inputs
    if p == 1.0 or inputs.device.type != "cpu":
        return torch.nn.functional.dropout(inputs, p, training=True)
    return inputs * keep_mask(inputs.shape, p, inputs)


class FastDropout(torch.nn.Dropout):
    """`torch.nn.Dropout` with the cheap CPU mask (see the module docstring)."""

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.inplace:
            raise ValueError("FastDropout does not support inplace=True.")
        return fast_dropout(inputs, self.p, self.training)


def replace_dropout(module: torch.nn.Module) -> int:
    """
    Replaces every `torch.nn.Dropout` (that exact class, not subclasses) inside `module`, for
    example in a pretrained transformer, by a `FastDropout` with the same `p`. Returns how many
    were replaced.
    """
    replaced = 0
    for parent in module.modules():
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Dropout and not child.inplace:
                setattr(parent, name, FastDropout(child.p))
                replaced += 1
    return replaced
