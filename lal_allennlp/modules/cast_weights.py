"""
Low-precision copies of a module's linear weights, kept between inference calls under autocast.

Under `torch.autocast(dtype=torch.bfloat16)` every `nn.Linear` casts its float32 weight and bias
to bfloat16 on each call; autocast's own cache of those casts only lives for one autocast
region, i.e. one batch. At parse time the weights do not change from batch to batch, so
`CastWeights` casts them once and hands the copies to `torch.func.functional_call`: the linear
layers then receive bfloat16 weights, which autocast leaves as they are. The values are those
autocast would have made (the same rounding of the same float32 numbers), so the output is
bit for bit the same, without the cast of every weight per batch (MiniLM's four layers: 7 M
numbers, about 8 ms per batch on one CPU core).

The copies are made again whenever a weight changes in a way that `key` detects from each
tensor's identity, storage, device and in-place version counter (`load_state_dict`, a move to
another device, an in-place edit). An optimizer step need not bump the version counter: torch's
fused AdamW (`fused_adamw`) updates the weights without it. So the model also drops the copies
(`clear`) whenever it goes into training mode, as a trainer does before every epoch; otherwise
validation during training would run the transformer with the weights of the first validation.
"""
from typing import Dict, Optional, Tuple

import torch


class CastWeights:
    """The `dtype` copies of the weights and biases of the `nn.Linear` layers inside a module,
    by parameter name (as `functional_call` takes them), rebuilt when a weight changes."""

    def __init__(self) -> None:
        self._key: Optional[Tuple] = None
        self._copies: Dict[str, torch.Tensor] = {}

    @staticmethod
    def _linear_parameters(module: torch.nn.Module) -> Dict[str, torch.nn.Parameter]:
        found = {}
        for prefix, layer in module.named_modules():
            if isinstance(layer, torch.nn.Linear):
                for name, parameter in layer.named_parameters(recurse=False):
                    found[f"{prefix}.{name}" if prefix else name] = parameter
        return found

    def clear(self) -> None:
        """Forget the copies: the next call of `copies` casts the weights again."""
        self._key = None
        self._copies = {}

    def copies(self, module: torch.nn.Module, dtype: torch.dtype) -> Dict[str, torch.Tensor]:
        """The copies for `module`'s linear layers in `dtype`, cast now only if some weight
        (or the dtype) changed since the last call."""
        parameters = self._linear_parameters(module)
        key = (dtype,) + tuple(
            (name, id(p), p.data_ptr(), p._version, p.device, p.dtype)
            for name, p in parameters.items()
        )
        if key != self._key:
            with torch.no_grad():
                self._copies = {name: p.detach().to(dtype) for name, p in parameters.items()}
            self._key = key
        return self._copies
