"""Host arrays for a call's outputs, reused once the caller has let go of them (output recycling).

A call that returns numpy arrays needs a host array per output. A new one is not free: an
array of megabytes comes from fresh pages (glibc maps allocations that large unless its
threshold has grown), and the kernels that write it then take a page fault per page while they
run. Measured on Intel CPU OpenCL, 2 cores, a loop calling relu((a+b)*c) on 16M floats: 8.8-12.4
ms a call and 545 page faults with a new output each time, 4.6-8.1 ms and none with the memory
reused (four runs each, bench/results/cpu-2026-11-25-s4-output-recycling.log); a 6144x128 softmax
(3 MiB) took 0.19-0.20 ms either way, glibc reusing that size by itself.
A caller that calls the same function in a loop mostly drops the previous result before the
next call; its memory can serve again.

`OutputSlot` keeps the memory (and the OpenCL buffer over it) of the last array it handed out
and reuses both when nothing outside the slot refers to that memory any more: no array, no view
(a numpy view of a view refers to the memory's owner, which is what the slot counts), no buffer
export such as a ``torch.from_numpy`` tensor (it holds the array). While the caller holds any of
them the slot allocates anew, so a returned array is never written by a later call.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np
import pyopencl as cl

from .host_memory import address


class OutputSlot:
    """The host memory of one output of an executable (see the module docstring)."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, alignment: int,
                 make_buffer: Callable[[np.ndarray], cl.Buffer] | None = None):
        self.shape = shape
        self.dtype = dtype
        self.alignment = alignment
        self.make_buffer = make_buffer
        """Makes the buffer the kernels write an array through (None: the array is only
        copied into, so no buffer is kept)."""
        self.owner: np.ndarray | None = None
        """The byte array the handed-out arrays are views of."""
        self.offset = 0
        self.buffer: cl.Buffer | None = None
        self.unshared_references = 0
        """`references()` when the slot alone holds `owner`."""

    def take(self) -> tuple[np.ndarray, cl.Buffer | None]:
        """An array for this call's output and the buffer over it (None without
        `make_buffer`): the last one's memory if no one else refers to it, else new."""
        if self.owner is None or self.references() != self.unshared_references:
            self.allocate()
        assert self.owner is not None
        return np.ndarray(self.shape, self.dtype, self.owner, self.offset), self.buffer

    def references(self) -> int:
        return sys.getrefcount(self.owner)

    def allocate(self) -> None:
        nbytes = math.prod(self.shape) * self.dtype.itemsize
        self.owner = np.empty(nbytes + self.alignment, np.uint8)
        self.offset = -address(self.owner) % self.alignment
        self.buffer = None
        if self.make_buffer is not None:
            self.buffer = self.make_buffer(
                np.ndarray(self.shape, self.dtype, self.owner, self.offset))
        self.unshared_references = self.references()
