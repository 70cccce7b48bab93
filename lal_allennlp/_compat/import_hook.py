"""
Interpreter start-up: an import hook that applies `shims.apply_shims()` just before `allennlp` is
first imported, and, on AMD CPUs, MKL's fast kernels for torch (`use_mkl_kernels_of_this_cpu`).

The `allennlp` console script imports `allennlp.commands` (and through it torchvision and
transformers) before it reads `--include-package` or `.allennlp_plugins`, so shims applied
from `lal_allennlp/__init__.py` would come too late for the CLI. The file
`lal_allennlp_compat.pth`, installed into site-packages with this package, loads this module
by path at interpreter start-up (without importing `lal_allennlp` or anything heavy) and calls
`install()`. Programs that never import allennlp pay only for this small file.

MKL on AMD CPUs. torch's CPU library carries Intel MKL, which runs its generic kernels, without
AVX2 or FMA, on any CPU whose vendor is not Intel; matrix products are most of a training step.
MKL asks `mkl_serv_intel_cpu_true()` first, and only on Intel looks at the instruction sets.
`_mkl_cpu_vendor` (built from `mkl_cpu_vendor.c` by the install; optional) defines that function
to answer 1. Loaded into the global symbol scope before torch is, it is the definition MKL's own
call binds to, and MKL then picks its kernels by the instruction sets the CPU reports, as on an
Intel CPU. It must be loaded before torch, hence here. `LAL_MKL_CPU_CHECK=mkl` turns it off (MKL
as shipped); `benchmarks/mkl_kernels_speed.py` measures both.
"""
import importlib.machinery
import importlib.util
import os
import sys
from typing import Any, Optional, Sequence

_HERE = os.path.dirname(os.path.abspath(__file__))
_SHIMS_PATH = os.path.join(_HERE, "shims.py")
_MKL_SHIM_NAME = "_mkl_cpu_vendor"
# The environment variable that turns the MKL vendor shim off ("mkl"; default "auto").
MKL_SWITCH = "LAL_MKL_CPU_CHECK"
# The CPU vendors the shim is for: AMD, and Hygon (AMD's licensed Zen).
AMD_VENDORS = ("AuthenticAMD", "HygonGenuine")


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


def cpu_vendor() -> Optional[str]:
    """The `vendor_id` of the first CPU in `/proc/cpuinfo` ("AuthenticAMD", "GenuineIntel", ...),
    or None where there is no such file (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():  # the end of the first CPU's block
                    break
    except OSError:
        pass
    return None


def mkl_shim_path() -> Optional[str]:
    """The built shim next to this file, or None when the install could not build it."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(_HERE, _MKL_SHIM_NAME + suffix)
        if os.path.isfile(path):
            return path
    return None


def mkl_shim_for_this_cpu() -> Optional[str]:
    """The built shim when this CPU is one it is for (`AMD_VENDORS`), else None."""
    if cpu_vendor() not in AMD_VENDORS:
        return None
    return mkl_shim_path()


def use_mkl_kernels_of_this_cpu() -> Optional[str]:
    """
    Loads the MKL vendor shim (module docstring) into the global symbol scope when
    `mkl_shim_for_this_cpu()` has one, torch is not imported yet and `LAL_MKL_CPU_CHECK` is not
    `mkl`. Returns the loaded path, or None; never raises, since it runs at interpreter start-up.
    """
    if os.environ.get(MKL_SWITCH, "auto").strip().lower() == "mkl" or "torch" in sys.modules:
        return None
    path = mkl_shim_for_this_cpu()
    if path is None:
        return None
    import ctypes

    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None
    return path


def loaded_mkl_shim() -> Optional[str]:
    """The path of the MKL vendor shim if this process has loaded it (from the process's memory
    map: the start-up module is not kept in `sys.modules`), else None."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if os.path.basename(path).startswith(_MKL_SHIM_NAME):
                    return path
    except OSError:
        pass
    return None


def install() -> None:
    use_mkl_kernels_of_this_cpu()
    if "allennlp" in sys.modules:
        _load_shims().apply_shims()
        return
    if not any(isinstance(f, AllennlpShimFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AllennlpShimFinder())


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AllennlpShimFinder)]
