"""Python's cyclic garbage collector paused while a large IR is built or rewritten.

Every op, block and value of an xDSL module points back at its parent, so the collector's full
collections (which walk every live object) ran ever more often and for ever longer as a program
of 10^5 ops was parsed. The IR is freed by reference counting once the module is dropped; the
few cycles that erased ops leave are collected when the collector is back on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disables the cyclic collector inside the block (nested uses are fine)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
