"""The decoder kernels' on-disk cache is keyed on all of the package's sources
(:mod:`lal_allennlp.decoding._numba_cache`)."""

import os
import shutil
import subprocess
import sys
import textwrap
import warnings

from numba.core import caching

from lal_allennlp.decoding import _numba_cache, cky, joint_span_one, joint_span_tables, kernels
from tests.oracles import joint_span_n5


def test_stamp_changes_with_any_module_and_only_with_content(tmp_path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "a.py").write_text("A = 1\n")
    (package / "b.py").write_text("B = 1\n")
    (package / "notes.txt").write_text("not a module\n")
    own = tmp_path / "bench.py"
    own.write_text("C = 1\n")
    first = _numba_cache.sources_stamp(str(package), str(own))
    assert _numba_cache.sources_stamp(str(package), str(own)) == first
    (package / "notes.txt").write_text("still not a module\n")
    assert _numba_cache.sources_stamp(str(package), str(own)) == first
    (package / "b.py").write_text("B = 2\n")  # another module of the package
    second = _numba_cache.sources_stamp(str(package), str(own))
    assert second != first
    own.write_text("C = 2\n")  # the kernel's own file outside the package
    third = _numba_cache.sources_stamp(str(package), str(own))
    assert third != second
    # the same sources elsewhere (a fresh checkout, a copy) keep the cache valid
    copy = tmp_path / "copy"
    shutil.copytree(package, copy / "package")
    shutil.copy(own, copy / "bench.py")
    assert _numba_cache.sources_stamp(str(copy / "package"), str(copy / "bench.py")) == third


def test_package_and_checkout_kernels_take_the_package_stamp(tmp_path) -> None:
    for kernel in (
        cky._cky_batch,
        joint_span_tables.label_tables,
        joint_span_one.fill_charts,
        kernels.segment_max,
        joint_span_n5._decode_batch,  # an oracle of the tests: a source checkout's file
    ):
        locator = kernel._cache._impl._locator
        assert isinstance(locator, _numba_cache.LOCATORS), kernel
        assert locator.get_source_stamp() == _numba_cache.sources_stamp(
            _numba_cache.PACKAGE_DIR, locator._py_file
        )
    assert _numba_cache.install()  # again: the locators stay in front, once each
    classes = caching.CacheImpl._locator_classes
    assert tuple(classes[: len(_numba_cache.LOCATORS)]) == _numba_cache.LOCATORS
    assert all(classes.count(locator) == 1 for locator in _numba_cache.LOCATORS)
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("X = 1\n")
    assert not _numba_cache.covered(str(elsewhere))


def test_an_edit_of_one_module_recompiles_the_kernels_of_another(tmp_path) -> None:
    """A package laid out as ours (the locator module copied in): a cached kernel of user.py
    inlines one of helpers.py. After helpers.py alone changes, a new process must run the new
    code (numba's own key, user.py's source, would load the stale kernel), and without a change
    it must load the kernel from the cache."""
    package = tmp_path / "pkg"
    package.mkdir()
    shutil.copy(_numba_cache.__file__, package / "_numba_cache.py")
    (package / "__init__.py").write_text("from pkg import _numba_cache\n_numba_cache.install()\n")
    helpers = package / "helpers.py"
    helpers.write_text(
        "from numba import njit\n\n\n@njit(cache=True)\ndef value():\n    return 1\n"
    )
    (package / "user.py").write_text(
        textwrap.dedent(
            """
            from numba import njit

            from pkg.helpers import value


            @njit(cache=True)
            def twice():
                return 2 * value()
            """
        )
    )
    script = "import pkg.user as u; print(u.twice(), sum(u.twice.stats.cache_hits.values()))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env["PYTHONPATH"] = str(tmp_path)

    def run() -> list:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.split()

    assert run() == ["2", "0"]  # compiled and written to the cache
    assert run() == ["2", "1"]  # loaded from the cache
    helpers.write_text(helpers.read_text().replace("return 1", "return 21"))
    assert run() == ["42", "0"]  # recompiled: helpers.py changed
    assert run() == ["42", "1"]


def test_without_numba_locator_list_install_warns_and_keeps_numba_keys(monkeypatch) -> None:
    """If a numba release moves its list of locators, the decoders still import and run, on
    numba's own keys, and the user is told how to clear the cache after an edit."""

    class Moved:  # a CacheImpl without the list
        pass

    monkeypatch.setattr(caching, "CacheImpl", Moved)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _numba_cache.install() is False
    assert any("*.nbi and *.nbc" in str(w.message) for w in caught)
