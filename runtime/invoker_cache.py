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

PyOpenCL makes that cache with no memory of its own (``in_mem_cache_size=0``), so every
``cl.Kernel`` reads its invoker back from sqlite and unpickles it, even for a kernel name seen a
moment before: an executable makes one kernel per launch (84 for a 12-layer BERT, of 6
names). `load_invoker` gives it pytools' in-memory LRU (`INVOKERS_IN_MEMORY` entries), which
its ``WriteOncePersistentDict`` has for this (the entries are written once, never changed).
"""

from __future__ import annotations

import functools
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
        keep_in_memory(getattr(sys.modules["pyopencl.invoker"], "invoker_cache", None))
        return
    try:
        invoker = importlib.import_module("pyopencl.invoker")
    except sqlite3.DatabaseError as e:  # OperationalError ("unable to open") is one too
        log.warning("PyOpenCL's kernel-invoker cache (under pytools' cache folder) cannot be "
                    "used (%s); going on without PyOpenCL's caches", e)
        sys.modules.pop("pyopencl.invoker", None)
        cl._PYOPENCL_NO_CACHE = True  # type: ignore[attr-defined]
        invoker = importlib.import_module("pyopencl.invoker")
    keep_in_memory(getattr(invoker, "invoker_cache", None))


INVOKERS_IN_MEMORY = 256
"""How many invokers `keep_in_memory` keeps (one per kernel name and argument count)."""


def keep_in_memory(cache: object) -> None:
    """Gives PyOpenCL's invoker cache (a pytools ``WriteOncePersistentDict``, None without
    caches) an in-memory LRU in front of its sqlite file, as its ``in_mem_cache_size`` would
    have; a cache of another shape (another pytools) or one given it already is left as it
    is."""
    fetch = getattr(cache, "_fetch_uncached", None)
    cache_info = getattr(getattr(cache, "_fetch", None), "cache_info", None)
    if fetch is None or cache_info is None or cache_info().maxsize != 0:
        return  # another pytools, or given its memory already
    memory = functools.lru_cache(maxsize=INVOKERS_IN_MEMORY)(fetch)
    cache._fetch = memory  # type: ignore[attr-defined]
