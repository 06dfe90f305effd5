"""Bad indices that the kernels of a call recorded, raised as errors of the call.

A kernel that indexes with values it reads (a gather) checks each index and records the first
bad one in the program's ``index_errors`` buffer (`fusec.codegen.plan.IndexCheck`): word 0
is set, and the check's own word holds the lowest bad position and its value. `IndexErrors`
holds that buffer for one executable and reads word 0 when the call's results are waited
for; when it is set, the whole record is read, put back to its initial contents, and the
first check (in launch order) that recorded something is raised as an
`fusec.errors.IndexOutOfRangeError` (an `InputError`) naming the indices, the position and
the value. A call that raises returns no outputs.

When: a call with host arrays raises it from the call itself, after its one wait. A call with
device arrays returns before its kernels have run, so it cannot: its record is read at the
next wait on the device's queue, i.e. `DeviceArray.get` (or ``np.asarray``), `DeviceArray.wait`
or `Executable.synchronize`, which raise it (`DeviceQueue.pending`). Nothing is waited for
that was not: on a device that uses host arrays in place (Intel's CPU OpenCL) the buffer is
over a host array, read in place after the wait (a few tens of ns a call); elsewhere each call
enqueues a non-blocking 8-byte read of word 0 behind its kernels, which the wait covers, into
page-locked memory (`host_memory.pinned_empty`; on the H200, 2026-12-02, back-to-back calls of
BERT-base and GPT-2 small through the torch backend took 0.10-0.22 ms less than with a numpy
array in three of four rows, 0.03 more in the fourth, in one run:
bench/results/h200-2026-12-02-s14-timeline.log, run 4). The record stays set until it is reported, so a later call on the same executable that waits
first reports it too (as an asynchronous CUDA error is reported by a later call).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyopencl as cl

from fusec.codegen.plan import IndexCheck, ProgramPlan
from fusec.errors import IndexOutOfRangeError

from .device import OpenCLDevice
from .device_array import device_queue
from .host_memory import aligned_empty, host_alignment, pinned_empty, use_host_buffer


class IndexErrors:
    """The ``index_errors`` buffer of one executable (see the module docstring)."""

    def __init__(self, plan: ProgramPlan, device: OpenCLDevice, host_memory: bool) -> None:
        assert plan.index_errors is not None
        initial = plan.buffers[plan.index_errors].data
        assert initial is not None
        self.checks = plan.index_checks
        self.initial = initial
        self.in_place = host_memory and device.host_pointers
        """Whether the buffer is over `words`, which the host reads after a wait."""
        if self.in_place:
            self.words = aligned_empty(initial.shape, initial.dtype, host_alignment(device.device))
            self.words[...] = initial
            self.buffer = use_host_buffer(device.context, self.words, read_only=False)
            self.seen = self.words[:1]
        else:
            self.buffer = cl.Buffer(device.context,
                                    cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                    hostbuf=initial)
            self.seen = pinned_empty(device_queue(device).queue, (1,), np.int64)
            self.seen[0] = 0
        self.flag = memoryview(self.seen)
        """Word 0 as last seen by the host (``flag[0]`` is a Python int: the cheapest read)."""

    def enqueue_read(self, queue: cl.CommandQueue) -> cl.Event | None:
        """Behind the call's kernels, a non-blocking read of word 0 into `seen`, its event
        (nothing, None, where the host reads the buffer in place)."""
        if self.in_place:
            return None
        return cl.enqueue_copy(queue, self.seen, self.buffer, is_blocking=False)

    def check(self, queue: cl.CommandQueue) -> None:
        """Raises the recorded error, if word 0 was seen set (after a wait)."""
        if self.flag[0]:
            raise self.take(queue)

    def take(self, queue: cl.CommandQueue) -> IndexOutOfRangeError:
        """The first recorded error; the record is put back to its initial contents."""
        queue.finish()
        words = np.empty_like(self.initial)
        if self.in_place:
            words[...] = self.words
            self.words[...] = self.initial
        else:
            cl.enqueue_copy(queue, words, self.buffer, is_blocking=True)
            cl.enqueue_copy(queue, self.buffer, self.initial, is_blocking=True)
            self.seen[0] = 0
        return first_error(self.checks, words, self.initial)


def first_error(checks: Sequence[IndexCheck], words: np.ndarray,
                initial: np.ndarray) -> IndexOutOfRangeError:
    """The error of the first check (in launch order) whose word of the record `words` is no
    longer its `initial` one: what a record with word 0 set says."""
    for check in checks:
        if words[check.slot] != initial[check.slot]:
            return check.error(int(words[check.slot]))
    raise AssertionError("index_errors: word 0 is set but no check recorded an index")
