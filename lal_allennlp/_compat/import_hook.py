"""
Interpreter start-up: an import hook that applies `shims.apply_shims()` just before `allennlp` is
first imported, and, only when asked for with `LAL_MKL_VENDOR_OVERRIDE=1`, the MKL vendor
override (`use_mkl_kernels_of_this_cpu`).

The `allennlp` console script imports `allennlp.commands` (and through it torchvision and
transformers) before it reads `--include-package` or `.allennlp_plugins`, so shims applied
from `lal_allennlp/__init__.py` would come too late for the CLI. The file
`lal_allennlp_compat.pth`, installed into site-packages with this package, loads this module
by path at interpreter start-up (without importing `lal_allennlp` or anything heavy) and calls
`install()`. Programs that never import allennlp pay only for this small file.

The MKL vendor override (opt-in). torch's CPU library carries Intel MKL, which runs its generic
kernels, without AVX2 or FMA, on any CPU whose vendor is not Intel; matrix products are most of
a training step. MKL asks `mkl_serv_intel_cpu_true()` first, and only on Intel looks at the
instruction sets. `_mkl_cpu_vendor` (built from `mkl_cpu_vendor.c` by the install; optional)
defines that function to answer 1. Loaded into the global symbol scope before torch is, it is
the definition MKL's own call binds to, and MKL then picks its kernels by the instruction sets
the CPU reports, as on an Intel CPU. It must be loaded before torch, hence at start-up. Because
it replaces a symbol of a library in the process, no process gets it unasked: it is loaded only
when the environment has `LAL_MKL_VENDOR_OVERRIDE=1`, on an AMD (or Hygon) CPU. Unset, empty or
`0` leaves MKL as shipped; any other value is a mistake, which gets one warning and leaves it off.
`benchmarks/mkl_kernels_speed.py` measures both.
"""
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any, Optional, Sequence

_HERE = os.path.dirname(os.path.abspath(__file__))
_SHIMS_PATH = os.path.join(_HERE, "shims.py")
_MKL_SHIM_NAME = "_mkl_cpu_vendor"
# The environment variable that turns the MKL vendor override on ("1"; unset, "" or "0": off).
MKL_SWITCH = "LAL_MKL_VENDOR_OVERRIDE"
# The variable of earlier versions, where the override was on by default ("mkl" turned it off).
_FORMER_SWITCH = "LAL_MKL_CPU_CHECK"
# The CPU vendors the shim is for: AMD, and Hygon (AMD's licensed Zen).
AMD_VENDORS = ("AuthenticAMD", "HygonGenuine")
# The key in `sys.modules` that marks a process whose start-up has run `install()`.
_STARTED = "_lal_allennlp_started"


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


def _warn(message: str) -> None:
    """One warning at start-up (stderr, through `warnings`, so `-W ignore` silences it)."""
    import warnings

    warnings.warn(message, RuntimeWarning, stacklevel=2)


def mkl_override_requested() -> bool:
    """Whether the environment asks for the MKL vendor override: `LAL_MKL_VENDOR_OVERRIDE=1`.
    Unset, empty or `0` is no, silently; any other value is no, with a warning (as is the
    former `LAL_MKL_CPU_CHECK`, which is no longer read)."""
    if os.environ.get(_FORMER_SWITCH) is not None:
        _warn(
            f"{_FORMER_SWITCH} is no longer read: the MKL vendor override is off unless "
            f"{MKL_SWITCH}=1 (unset {_FORMER_SWITCH} to silence this warning)"
        )
    value = os.environ.get(MKL_SWITCH, "").strip()
    if value in ("", "0"):
        return False
    if value != "1":
        _warn(
            f"{MKL_SWITCH}={value!r} is neither 1 (load the MKL vendor override) nor 0 "
            "(leave MKL as shipped): the override stays off"
        )
        return False
    return True


def use_mkl_kernels_of_this_cpu() -> Optional[str]:
    """
    Loads the MKL vendor shim (module docstring) into the global symbol scope when the
    environment asks for it (`mkl_override_requested`), the CPU is one it is for and torch is
    not imported yet. Returns the loaded path, or None; never raises, since it runs at
    interpreter start-up. Asked for but impossible (shim not built, torch already loaded): a
    warning saying why.
    """
    if not mkl_override_requested() or cpu_vendor() not in AMD_VENDORS:
        return None
    if "torch" in sys.modules:
        _warn(f"{MKL_SWITCH}=1, but torch is already loaded: MKL keeps its generic kernels")
        return None
    path = mkl_shim_path()
    if path is None:
        _warn(
            f"{MKL_SWITCH}=1, but the MKL vendor override was not built (the install found no "
            "C compiler): MKL keeps its generic kernels. Install a C compiler and reinstall "
            "(make install)"
        )
        return None
    import ctypes

    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        _warn(f"{MKL_SWITCH}=1, but {path} could not be loaded ({error})")
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
    """What the start-up file runs: the MKL vendor override if asked for, and the shims' import
    hook. Once per process: `site` can read the start-up file more than once (a virtual
    environment's site-packages is processed as a site directory and as a prefix's), and each
    reading loads this file as a new module."""
    if _STARTED in sys.modules:
        return
    sys.modules[_STARTED] = types.ModuleType(_STARTED, "lal_allennlp's start-up has run.")
    use_mkl_kernels_of_this_cpu()
    if "allennlp" in sys.modules:
        _load_shims().apply_shims()
        return
    if not any(isinstance(f, AllennlpShimFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AllennlpShimFinder())


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AllennlpShimFinder)]
