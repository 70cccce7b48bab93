"""
The MKL vendor shim loaded at start-up (`lal_allennlp/_compat/import_hook.py`): on an AMD CPU with
the shim built it is in the process and MKL leaves its generic code path; `LAL_MKL_CPU_CHECK=mkl`
keeps MKL as shipped; both give the same matrix products. Each setting needs a fresh interpreter
(the choice is made before torch is loaded), so the checks run in subprocesses of this Python,
whose start-up file loads the shim as an installed project's does.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lal_allennlp._compat import import_hook

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


def _probe(setting: str) -> dict:
    env = dict(os.environ, LAL_MKL_CPU_CHECK=setting)
    result = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def probes():
    return {setting: _probe(setting) for setting in ("auto", "mkl")}


def test_mkl_as_shipped_when_turned_off(probes):
    assert probes["mkl"]["shim"] is None


def test_shim_loaded_on_amd_and_mkl_leaves_its_generic_path(probes):
    expected = import_hook.mkl_shim_for_this_cpu()
    assert probes["auto"]["shim"] == expected
    if expected is None:
        pytest.skip("not an AMD CPU, or the install could not build the shim (no C compiler)")
    if probes["auto"]["code_path"] is None:
        pytest.skip("this torch exports no mkl_serv_cpu_detect (not built with MKL)")
    # MKL's code path 0 is its generic one, which it takes on any non-Intel CPU by itself.
    assert probes["mkl"]["code_path"] == 0
    assert probes["auto"]["code_path"] > 0


def test_both_settings_compute_the_same_products(probes):
    reference = np.array(probes["mkl"]["reference"])
    for setting in ("auto", "mkl"):
        product = np.array(probes[setting]["product"])
        np.testing.assert_allclose(product, reference, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(
        np.array(probes["auto"]["product"]), np.array(probes["mkl"]["product"]), rtol=1e-5, atol=1e-4
    )


def test_loaded_shim_is_found_in_this_process():
    # pytest runs under the same start-up file: the test process itself has the shim exactly
    # when a fresh interpreter with the default setting has it (unless this one was started
    # with LAL_MKL_CPU_CHECK=mkl).
    if os.environ.get("LAL_MKL_CPU_CHECK", "auto") == "auto":
        assert import_hook.loaded_mkl_shim() == import_hook.mkl_shim_for_this_cpu()


def test_not_loaded_once_torch_is_imported():
    import torch  # noqa: F401

    # Too late for MKL to see it: the function declines rather than pretend.
    assert import_hook.use_mkl_kernels_of_this_cpu() is None
