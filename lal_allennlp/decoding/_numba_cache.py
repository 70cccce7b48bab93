"""Numba's on-disk cache of the decoder kernels, invalidated by a change to any module of this
package.

Every kernel here is compiled with ``cache=True``. Numba keys a cached kernel on the source of
the file that defines it and nothing else, but the kernels are built from the package's other
modules: ``joint_span_one`` inlines the label tables and traceback pieces of
``joint_span_tables`` and the vector kernels of ``kernels``, and everything inlines the maxima
of ``kernels``. With numba's own key, an edit of ``kernels.py`` alone (or a ``git pull`` into an
editable install that changes only that file) leaves the cached kernels of ``joint_span_one``
running the old code, silently.

So the kernels of this package are cached under a stamp that hashes the sources of all its
modules. In a source checkout, the cached kernels of ``tests/`` and ``benchmarks/`` (oracles,
timing harnesses that call the package's kernels) get the same stamp plus their own file's.
A change to any of those files then recompiles every kernel on its next call, once.

The locators are numba's own (same cache folders and file names), with the stamp replaced; they
are put in front of numba's list of locators (``CacheImpl._locator_classes``, not a public
API), and only answer for the files above. If numba's list is not there, numba's own keys stay
in use and :func:`install` says so with a warning.
"""

import functools
import hashlib
import os
import warnings

import numba
from numba.core import caching

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.dirname(os.path.dirname(PACKAGE_DIR))
_CHECKOUT_DIRS = tuple(os.path.join(_CHECKOUT, name) + os.sep for name in ("tests", "benchmarks"))
_IN_CHECKOUT = os.path.isfile(os.path.join(_CHECKOUT, "setup.py"))  # not an installed wheel


def covered(py_file: str) -> bool:
    """Whether kernels defined in ``py_file`` are cached under the package's stamp: a module of
    this package, or a file under ``tests/`` or ``benchmarks/`` of a source checkout."""
    path = os.path.abspath(py_file)
    if os.path.dirname(path) == PACKAGE_DIR:
        return True
    return _IN_CHECKOUT and path.startswith(_CHECKOUT_DIRS)


@functools.lru_cache(maxsize=None)
def _file_hash(path: str, mtime_ns: int, size: int) -> bytes:
    # mtime and size are in the key so that a file edited while the process runs is read again
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).digest()


def sources_stamp(package_dir: str, own_file: str) -> bytes:
    """The stamp of a kernel defined in ``own_file``: the hash of every ``.py`` file of
    ``package_dir`` and of ``own_file`` (by content, so that a copy or a fresh checkout of the
    same sources keeps the cache valid)."""
    paths = sorted(
        os.path.join(package_dir, name) for name in os.listdir(package_dir) if name.endswith(".py")
    )
    own = os.path.abspath(own_file)
    if own not in paths:
        paths.append(own)
    digest = hashlib.sha256()
    for path in paths:
        status = os.stat(path)
        digest.update(os.path.basename(path).encode())
        digest.update(_file_hash(path, status.st_mtime_ns, status.st_size))
    return digest.digest()


class _PackageStamp:
    """Mixin for numba's source-file locators: the package's stamp, and only for its files."""

    _py_file: str

    def get_source_stamp(self):
        return sources_stamp(PACKAGE_DIR, self._py_file)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not covered(py_file):
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]


# In numba's order of preference: NUMBA_CACHE_DIR if set, then __pycache__ beside the source,
# then the user's cache folder where __pycache__ is not writable (a read-only install).
class _UserProvidedLocator(_PackageStamp, caching.UserProvidedCacheLocator):
    pass


class _InTreeLocator(_PackageStamp, caching.InTreeCacheLocator):
    pass


class _UserWideLocator(_PackageStamp, caching.UserWideCacheLocator):
    pass


LOCATORS = (_UserProvidedLocator, _InTreeLocator, _UserWideLocator)


def install() -> bool:
    """Put the package's locators in front of numba's (once); before any kernel of the package
    is defined, since numba picks a kernel's locator when ``njit(cache=True)`` wraps it.
    Returns whether they are in place."""
    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not isinstance(classes, list):
        warnings.warn(
            "numba's cache locators are not where lal_allennlp expects them "
            f"(numba.core.caching.CacheImpl._locator_classes, numba {numba.__version__}): "
            "cached decoder kernels are keyed on their own file only; after changing a "
            "decoder module, delete the *.nbi and *.nbc files under lal_allennlp/decoding/",
            RuntimeWarning,
        )
        return False
    for locator in reversed(LOCATORS):
        if locator not in classes:
            classes.insert(0, locator)
    return True
