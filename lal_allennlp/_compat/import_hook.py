"""
An import hook that applies `shims.apply_shims()` just before `allennlp` is first imported.

The `allennlp` console script imports `allennlp.commands` (and through it torchvision and
transformers) before it reads `--include-package` or `.allennlp_plugins`, so shims applied
from `lal_allennlp/__init__.py` would come too late for the CLI. The file
`lal_allennlp_compat.pth`, installed into site-packages with this package, loads this module
by path at interpreter start-up (without importing `lal_allennlp` or anything heavy) and calls
`install()`. Programs that never import allennlp pay only for this small file.
"""
import importlib.util
import os
import sys
from typing import Any, Optional, Sequence

_SHIMS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shims.py")


def _load_shims() -> Any:
    name = "lal_allennlp._compat.shims"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _SHIMS_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class AllennlpShimFinder:
    """A `sys.meta_path` finder that never finds anything: it only applies the shims when the
    first `allennlp` import is attempted, then removes itself."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> None:
        if fullname == "allennlp" or fullname.startswith("allennlp."):
            uninstall()
            _load_shims().apply_shims()
        return None


def install() -> None:
    if "allennlp" in sys.modules:
        _load_shims().apply_shims()
        return
    if not any(isinstance(f, AllennlpShimFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AllennlpShimFinder())


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AllennlpShimFinder)]
