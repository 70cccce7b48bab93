"""
Installs `lal_allennlp` and the `lal_allennlp_compat.pth` start-up file, which applies the
AllenNLP compatibility shims (and, only with `LAL_MKL_VENDOR_OVERRIDE=1`, the MKL vendor
override).

AllenNLP itself is deliberately *not* an install requirement: its 2.10.1 pins cannot be
resolved on Python 3.11. `make install` installs the pinned stack from `requirements.txt`,
then `allennlp==2.10.1 allennlp-models==2.10.1` with `--no-deps`, then this package.
"""
import os

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH_FILE = "lal_allennlp_compat.pth"


class BuildPyWithPth(build_py):
    """Copies the start-up `.pth` file to the root of the wheel (site-packages)."""

    def run(self) -> None:
        super().run()
        self.copy_file(PTH_FILE, os.path.join(self.build_lib, PTH_FILE), preserve_mode=0)

    def get_outputs(self, include_bytecode: bool = True) -> list:
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH_FILE)]


class EditableWheelWithPth(editable_wheel):
    """Adds the start-up `.pth` file to editable installs (`pip install -e .`) too."""

    def _select_strategy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        strategy = super()._select_strategy(*args, **kwargs)
        original_call = strategy.__call__

        class WithPth(type(strategy)):  # type: ignore[misc, valid-type]
            def __call__(self, wheel, files, mapping):  # type: ignore[no-untyped-def]
                original_call(wheel, files, mapping)
                with open(PTH_FILE, encoding="utf-8") as pth:
                    wheel.writestr(PTH_FILE, pth.read())

        strategy.__class__ = WithPth
        return strategy


packages = find_packages(include=["lal_allennlp", "lal_allennlp.*"])

# Not a Python module: a one-function shared object that makes Intel MKL pick its AVX2/AVX-512
# kernels on AMD CPUs (see the C file and `lal_allennlp/_compat/import_hook.py`), loaded with
# ctypes at start-up only in processes started with LAL_MKL_VENDOR_OVERRIDE=1 (opt-in). Optional:
# without a C compiler the install goes on, and the override is not available.
mkl_cpu_vendor = Extension(
    "lal_allennlp._compat._mkl_cpu_vendor",
    sources=["lal_allennlp/_compat/mkl_cpu_vendor.c"],
    optional=True,
)

setup(
    name="lal_allennlp",
    version="0.1.0",
    description="Label Attention Layer and span parsers for AllenNLP",
    python_requires=">=3.10",
    packages=packages,
    include_package_data=False,
    package_data={"lal_allennlp.serving": ["page.html"]},
    install_requires=["numpy", "numba", "nltk", "torch"],
    entry_points={
        "console_scripts": [
            "lal-parse=lal_allennlp.commands.parse:main",
            "lal-explain=lal_allennlp.commands.explain:main",
            "lal-score-unsupervised=lal_allennlp.commands.score_unsupervised:main",
            "lal-serve=lal_allennlp.commands.serve:main",
            "lal-analyze=lal_allennlp.commands.analyze:main",
        ],
        # spaCy finds the `lal_parser` pipeline component here, without an import.
        "spacy_factories": ["lal_parser = lal_allennlp.spacy_component:make_lal_parser"],
    },
    ext_modules=[mkl_cpu_vendor],
    cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth},
)
