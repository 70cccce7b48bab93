"""
Compatibility shims that let AllenNLP 2.10.1 (October 2022, its last release) run on
Python 3.11 with torch 2.x and transformers 4.5x.

Each shim fixes one break, documented in `../shared/notes/allennlp-stack.md`:

1. `torchvision` -- `allennlp.data.image_loader` and `allennlp.modules.vision` import it at
   import time. PyPI's torchvision wheels are built against CUDA torch and fail to load
   beside a CPU torch (`operator torchvision::nms does not exist`). When no working
   torchvision is importable, small stub modules are registered, so allennlp imports; its
   vision modules (unused by this project) then raise a clear error if used.
2. `transformers.AdamW` -- removed in transformers 4.50, but `allennlp.training.optimizers`
   subclasses it at import time. It is served through the lazy module's attribute lookup as
   a `torch.optim.AdamW` subclass that accepts (and honours) `correct_bias`.
3. `AutoTokenizer.from_pretrained(..., add_special_tokens=False)` -- allennlp passes this
   keyword, which raises since transformers 4.44 (it had no effect before); the shim drops it.

This module must not import allennlp (it runs *before* allennlp is imported, from the
import hook in `import_hook.py`), nor anything from `lal_allennlp` (it may be loaded by
file path, without its package). `apply_shims()` is idempotent.
"""
import importlib
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

_APPLIED = False


class _TorchvisionMissing(types.ModuleType):
    """A stub for `torchvision` and its sub-modules: imports succeed, any use fails clearly."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(
            f"torchvision.{name} is not available: lal_allennlp replaced torchvision by a stub "
            "because no torchvision that works with the installed torch could be imported. "
            "AllenNLP's vision modules cannot be used in this environment."
        )


def _torchvision_works() -> bool:
    if importlib.util.find_spec("torchvision") is None:
        return False
    try:
        importlib.import_module("torchvision")
        importlib.import_module("torchvision.ops.boxes")
        return True
    except Exception:  # a CUDA-built torchvision beside a CPU torch raises RuntimeError
        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        return False


def _stub_torchvision() -> None:
    names = ["torchvision", "torchvision.ops", "torchvision.ops.boxes"]
    modules = {}
    for name in names:
        module = _TorchvisionMissing(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, loader=None, is_package=True)
        module.__path__ = []  # type: ignore[attr-defined]
        modules[name] = module
        sys.modules[name] = module
    # `import torchvision.ops.boxes as box_ops` reads attributes of the parents.
    object.__setattr__(modules["torchvision"], "ops", modules["torchvision.ops"])
    object.__setattr__(modules["torchvision.ops"], "boxes", modules["torchvision.ops.boxes"])


def _make_adamw() -> type:
    import torch

    class AdamW(torch.optim.AdamW):
        """`transformers.AdamW` as it was before transformers 4.50, on top of torch's AdamW.

        torch's AdamW always corrects the bias, so `correct_bias=False` (BERT's original
        optimizer) is rejected with a clear error rather than silently ignored.
        """

        def __init__(
            self,
            params: Any,
            lr: float = 1e-3,
            betas: Any = (0.9, 0.999),
            eps: float = 1e-6,
            weight_decay: float = 0.0,
            correct_bias: bool = True,
            no_deprecation_warning: bool = False,
        ) -> None:
            if not correct_bias:
                raise ValueError(
                    "transformers.AdamW(correct_bias=False) is not supported by the "
                    "lal_allennlp compatibility shim; use the 'adamw' optimizer instead of "
                    "'huggingface_adamw', or keep correct_bias=true."
                )
            super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    AdamW.__module__ = "transformers"
    return AdamW


def _patch_transformers() -> None:
    import transformers
    from transformers.utils import import_utils

    lazy_module = import_utils._LazyModule
    if not getattr(lazy_module, "_lal_allennlp_patched", False):
        original_getattr = lazy_module.__getattr__
        cache: dict = {}

        def __getattr__(self: Any, name: str) -> Any:
            try:
                return original_getattr(self, name)
            except AttributeError:
                if name == "AdamW" and self.__name__ == "transformers":
                    if "AdamW" not in cache:
                        cache["AdamW"] = _make_adamw()
                    return cache["AdamW"]
                raise

        lazy_module.__getattr__ = __getattr__
        lazy_module._lal_allennlp_patched = True

    auto_tokenizer = transformers.AutoTokenizer
    if not getattr(auto_tokenizer, "_lal_allennlp_patched", False):
        original_from_pretrained = auto_tokenizer.from_pretrained.__func__

        def from_pretrained(cls: Any, *args: Any, **kwargs: Any) -> Any:
            kwargs.pop("add_special_tokens", None)
            return original_from_pretrained(cls, *args, **kwargs)

        auto_tokenizer.from_pretrained = classmethod(from_pretrained)
        auto_tokenizer._lal_allennlp_patched = True


def apply_shims() -> None:
    """Apply every shim once. Safe to call many times and after allennlp is imported."""
    global _APPLIED
    if _APPLIED:
        return
    _APPLIED = True
    if "torchvision" not in sys.modules and not _torchvision_works():
        _stub_torchvision()
    _patch_transformers()
