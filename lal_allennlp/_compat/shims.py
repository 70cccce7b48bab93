"""
Compatibility shims that let AllenNLP 2.10.1 (October 2022, its last release) run on
Python 3.11 with torch 2.x and transformers 4.5x.

Each shim fixes one break, documented in `docs/allennlp-stack.md`:

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
4. Plugin discovery -- AllenNLP finds plugins only through a `.allennlp_plugins` file in the
   current directory (or `~/.allennlp/plugins`), so the bare `allennlp` command run anywhere
   but the repository root did not know `lal_ptb`. Installed, `lal_allennlp` is added to the
   discovered plugins wherever the command runs, as `allennlp_models` always is.
5. Network at import -- `allennlp_models.rc.tools.narrativeqa` (imported by AllenNLP's plugin
   loading, unused here) calls `nltk.download("punkt")` when the data is missing, which on a
   machine without internet prints "[nltk_data] Error loading punkt" on every command. Its
   import runs with `nltk.download` disabled; the module's functions then raise NLTK's own
   "resource not found" error if ever used. The `pkg_resources` deprecation warning of the
   `rouge` package it imports is silenced too.
6. `torch.cuda.amp.autocast(...)` -- deprecated in torch 2.4; AllenNLP's trainer calls it on
   every batch, and torch warns once per run. The warning from that module is silenced (the
   call still does what it did).

This module must not import allennlp (it runs *before* allennlp is imported, from the
import hook in `import_hook.py`), nor anything from `lal_allennlp` (it may be loaded by
file path, without its package). `apply_shims()` is idempotent.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import Any, Callable, Dict, Optional, Sequence

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


class _ImportWrapper(importlib.abc.MetaPathFinder):
    """Runs `wrapper(execute)` instead of `execute()` when one of the named modules is first
    imported (`execute` runs the module's code), for shims that must act around a module's own
    import-time code or right after it."""

    def __init__(self, wrappers: Dict[str, Callable[[Callable[[], None]], None]]) -> None:
        self.wrappers = wrappers

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None):
        wrapper = self.wrappers.get(fullname)
        if wrapper is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        original_exec = spec.loader.exec_module

        class WrappedLoader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return None

            def exec_module(self, module: types.ModuleType) -> None:
                wrapper(lambda: original_exec(module))

        spec.loader = WrappedLoader()
        return spec


def _add_lal_allennlp_plugin(execute: Callable[[], None]) -> None:
    """After `allennlp.common.plugins` runs: its `discover_plugins` also yields `lal_allennlp`
    (installed, so importable from anywhere), after the plugins named in plugin files."""
    execute()
    plugins = sys.modules["allennlp.common.plugins"]
    original = plugins.discover_plugins

    def discover_plugins():  # type: ignore[no-untyped-def]
        found = []
        for name in original():
            found.append(name)
            yield name
        if "lal_allennlp" not in found and importlib.util.find_spec("lal_allennlp") is not None:
            yield "lal_allennlp"

    discover_plugins.__doc__ = original.__doc__
    plugins.discover_plugins = discover_plugins


def _without_nltk_downloads(execute: Callable[[], None]) -> None:
    """Runs a module's import with `nltk.download` returning False instead of trying the
    network, and the `pkg_resources` deprecation warning of its imports silenced."""
    import nltk

    original = nltk.download
    nltk.download = lambda *args, **kwargs: False
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
            execute()
    finally:
        nltk.download = original


def _wrap_imports() -> None:
    sys.meta_path.insert(0, _ImportWrapper({
        "allennlp.common.plugins": _add_lal_allennlp_plugin,
        "allennlp_models.rc.tools.narrativeqa": _without_nltk_downloads,
    }))


def apply_shims() -> None:
    """Apply every shim once. Safe to call many times and after allennlp is imported."""
    global _APPLIED
    if _APPLIED:
        return
    _APPLIED = True
    if "torchvision" not in sys.modules and not _torchvision_works():
        _stub_torchvision()
    _patch_transformers()
    _wrap_imports()
    warnings.filterwarnings(
        "ignore",
        message=r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated",
        category=FutureWarning,
        module="allennlp.training.gradient_descent_trainer",
    )
