"""PyOpenCL's kernel-invoker cache, damaged or unopenable, is run without.

PyOpenCL keeps the Python code that sets a kernel's arguments in a sqlite file of pytools
(``$XDG_CACHE_HOME/pytools/pdict-*-pyopencl-invoker-cache-*.sqlite``), opened when
``pyopencl.invoker`` is first imported, i.e. at the first kernel call of the process. A file
that is not a database (truncated, overwritten) or cannot be opened (a folder in its place, no
permission) made that import raise ``sqlite3.DatabaseError`` from deep inside the first launch:
an internal error, exit 70. `load_invoker` imports it before fusec launches anything; on such an
error it logs a warning (logger ``fusec.cache``, shown by ``fusec-run --verbose``) and imports
it again with PyOpenCL's caches off (``pyopencl._PYOPENCL_NO_CACHE``, what ``PYOPENCL_NO_CACHE=1``
sets): the invokers are generated in memory instead, as fast after the first call.
"""

from __future__ import annotations

import importlib
import logging
import sqlite3
import sys

import pyopencl as cl

log = logging.getLogger("fusec.cache")
log.addHandler(logging.NullHandler())


def load_invoker() -> None:
    """Imports ``pyopencl.invoker``, without its cache if the cache cannot be used."""
    if "pyopencl.invoker" in sys.modules:
        return
    try:
        importlib.import_module("pyopencl.invoker")
    except sqlite3.DatabaseError as e:  # OperationalError ("unable to open") is one too
        log.warning("PyOpenCL's kernel-invoker cache (under pytools' cache folder) cannot be "
                    "used (%s); going on without PyOpenCL's caches", e)
        sys.modules.pop("pyopencl.invoker", None)
        cl._PYOPENCL_NO_CACHE = True  # type: ignore[attr-defined]
        importlib.import_module("pyopencl.invoker")
