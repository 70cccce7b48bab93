"""
The MKL vendor override (`lal_allennlp/_compat/import_hook.py`) is opt-in: a fresh interpreter of
this environment has no C symbol override unless started with `LAL_MKL_VENDOR_OVERRIDE=1`; with
it, on an AMD CPU with the shim built, the shim is in the process and MKL leaves its generic
code path; a value other than 1 or 0 gets one warning and leaves it off; both give the same
matrix products. Each setting needs a fresh interpreter (the choice is made before torch is
loaded), so those checks run in subprocesses of this Python, whose start-up file is the one an
installed project has.
"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from lal_allennlp._compat import import_hook

SWITCH = import_hook.MKL_SWITCH
FORMER_SWITCH = "LAL_MKL_CPU_CHECK"

PROBE = """
import ctypes, json, os
import torch
# what `import_hook.loaded_mkl_shim()` reads, without importing the whole package here
shims = [line.split()[-1] for line in open("/proc/self/maps") if "_mkl_cpu_vendor" in line]
library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
detect = getattr(library, "mkl_serv_cpu_detect", None)
generator = torch.Generator().manual_seed(0)
a = torch.randn(200, 384, generator=generator)
b = torch.randn(384, 300, generator=generator)
print(json.dumps({
    "shim": shims[0] if shims else None,
    "code_path": int(detect()) if detect is not None else None,
    "product": (a @ b).tolist(),
    "reference": (a.double() @ b.double()).tolist(),
}))
"""


def _probe(setting) -> dict:
    """A fresh interpreter's report with `LAL_MKL_VENDOR_OVERRIDE` set to `setting` (None:
    unset), and its stderr."""
    env = {k: v for k, v in os.environ.items() if k not in (SWITCH, FORMER_SWITCH)}
    if setting is not None:
        env[SWITCH] = setting
    result = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    report["stderr"] = result.stderr
    return report


@pytest.fixture(scope="module")
def probes():
    return {setting: _probe(setting) for setting in (None, "0", "1", "yes")}


def test_no_override_unless_asked_for(probes):
    for setting in (None, "0", "yes"):
        assert probes[setting]["shim"] is None, setting
        assert SWITCH not in probes[setting]["stderr"] or setting == "yes"
    if probes[None]["code_path"] is not None and import_hook.cpu_vendor() in (
        import_hook.AMD_VENDORS
    ):
        # MKL's code path 0 is its generic one, which it takes on any non-Intel CPU by itself.
        assert probes[None]["code_path"] == 0


def test_a_wrong_value_is_warned_about_once(probes):
    assert probes["yes"]["stderr"].count(f"{SWITCH}='yes' is neither 1") == 1


def test_asked_for_on_amd_the_shim_is_loaded_and_mkl_leaves_its_generic_path(probes):
    expected = import_hook.mkl_shim_for_this_cpu()
    assert probes["1"]["shim"] == expected
    if expected is None:
        pytest.skip("not an AMD CPU, or the install could not build the shim (no C compiler)")
    if probes["1"]["code_path"] is None:
        pytest.skip("this torch exports no mkl_serv_cpu_detect (not built with MKL)")
    assert probes["1"]["code_path"] > 0
    assert probes["0"]["code_path"] == 0


def test_both_settings_compute_the_same_products(probes):
    reference = np.array(probes["0"]["reference"])
    for setting in ("0", "1"):
        product = np.array(probes[setting]["product"])
        np.testing.assert_allclose(product, reference, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        np.array(probes["1"]["product"]), np.array(probes["0"]["product"]), rtol=1e-5, atol=1e-4
    )


def test_this_process_has_the_shim_only_if_started_with_the_switch():
    if os.environ.get(SWITCH, "").strip() == "1":
        assert import_hook.loaded_mkl_shim() == import_hook.mkl_shim_for_this_cpu()
    else:
        assert import_hook.loaded_mkl_shim() is None


@pytest.mark.parametrize("value, requested", [("", False), ("0", False), (" 1 ", True)])
def test_the_values_read_without_a_warning(monkeypatch, value, requested):
    monkeypatch.delenv(FORMER_SWITCH, raising=False)
    monkeypatch.setenv(SWITCH, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert import_hook.mkl_override_requested() is requested


@pytest.mark.parametrize("value", ["true", "on", "2", "auto"])
def test_other_values_are_off_with_a_warning(monkeypatch, value):
    monkeypatch.delenv(FORMER_SWITCH, raising=False)
    monkeypatch.setenv(SWITCH, value)
    with pytest.warns(RuntimeWarning, match=f"{SWITCH}='{value}' is neither 1"):
        assert import_hook.mkl_override_requested() is False


def test_the_former_switch_is_no_longer_read_and_says_so(monkeypatch):
    monkeypatch.delenv(SWITCH, raising=False)
    monkeypatch.setenv(FORMER_SWITCH, "auto")
    with pytest.warns(RuntimeWarning, match=f"{FORMER_SWITCH} is no longer read"):
        assert import_hook.mkl_override_requested() is False


def test_not_loaded_once_torch_is_imported(monkeypatch):
    import torch  # noqa: F401

    monkeypatch.delenv(FORMER_SWITCH, raising=False)
    monkeypatch.setenv(SWITCH, "1")
    if import_hook.cpu_vendor() not in import_hook.AMD_VENDORS:
        assert import_hook.use_mkl_kernels_of_this_cpu() is None
        return
    # Too late for MKL to see it: the function declines, and says so, rather than pretend.
    with pytest.warns(RuntimeWarning, match="torch is already loaded"):
        assert import_hook.use_mkl_kernels_of_this_cpu() is None
