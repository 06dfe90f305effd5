"""Arrays that live on an OpenCL device, so that calls can stay there.

A `DeviceArray` is a C-contiguous array in one device buffer: ``.shape``, ``.dtype``, and
``.get()`` (or ``.numpy()``, ``np.asarray(a)``) to copy it to the host, which waits for the work
that writes it. An `Executable` called with device arrays only enqueues its kernels and returns
device arrays (see `fusec.runtime.executable`), which another executable on the same device
takes as inputs without a trip through the host.

Every device array of a context is ordered by one in-order command queue, `DeviceQueue.queue`
(without profiling: profiled calls use the device's profiling queue and wait for this one
first). That queue is what makes asynchronous calls safe: a buffer handed back to the pool
while kernels still read it is only written by commands enqueued after them.

Buffers come from a `BufferPool` per context: an array that is no longer referenced gives its
buffer back, and the next array of the same byte size takes it, so a loop of calls that drops
each call's outputs before the next allocates nothing after its first iterations
(`BufferPool.allocations` counts the buffers ever made).

`to_device` copies a host array into a new device array; `wrap` makes a ``pyopencl.array.Array``
on the same context one (same buffer, no copy; work pending on its own queue is waited for on
the device before anything later reads it); `DeviceArray.to_pyopencl` goes the other way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

from .device import OpenCLDevice
from .errors import InputError


class BufferPool:
    """Device buffers of one context, reused by exact byte size.

    `take` gives a free buffer of that size or makes one; `give` puts one back (a device
    array does so when it is garbage). Free buffers are kept until `release_free`."""

    cuda_addressable = False
    """Whether its buffers are CUDA memory too (`fusec.runtime.cuda_interop.CudaSharedPool`):
    then an executable takes its intermediates from it, so that kernels launched through CUDA
    (`fusec.runtime.cuda_launch`) use them in place."""

    def __init__(self, context: cl.Context) -> None:
        self.context = context
        self.free: dict[int, list[cl.Buffer]] = {}
        self.allocations = 0
        """Buffers made so far (not taken from the free lists)."""
        self.allocated_bytes = 0

    def take(self, nbytes: int, prefer: cl.Buffer | None = None) -> cl.Buffer:
        """A buffer of `nbytes`: `prefer` if it is free (so that a kernel argument that held
        it need not be set again), else the one given back last, else a new one."""
        stack = self.free.get(nbytes)
        if stack:
            if prefer is not None and stack[-1] is not prefer:
                for i in range(len(stack) - 2, -1, -1):
                    if stack[i] is prefer:
                        return stack.pop(i)
            return stack.pop()
        self.allocations += 1
        self.allocated_bytes += nbytes
        return self.make(nbytes)

    def make(self, nbytes: int) -> cl.Buffer:
        """A new buffer (a subclass may take its memory from elsewhere)."""
        return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)

    def give(self, nbytes: int, buffer: cl.Buffer) -> None:
        self.free.setdefault(nbytes, []).append(buffer)

    @property
    def free_bytes(self) -> int:
        return sum(n * len(stack) for n, stack in self.free.items())

    def release_free(self) -> None:
        """Lets go of every free buffer (the device frees it once no command uses it)."""
        for nbytes, stack in self.free.items():
            self.allocated_bytes -= nbytes * len(stack)
        self.free.clear()


@dataclass(eq=False)
class DeviceQueue:
    """What every device array of one context shares: the queue that orders them and the pool
    their buffers come from."""

    queue: cl.CommandQueue
    pool: BufferPool
    empty: cl.Buffer
    """Stands for an array of no elements (OpenCL has no empty buffers)."""
    pending: dict[int, tuple[Any, cl.CommandQueue, cl.Event]] = field(default_factory=dict)
    """Records of bad indices (`fusec.runtime.index_errors.IndexErrors`, by id) that calls
    with device arrays wrote and no wait has read yet, each with the queue of its last call
    and that call's last command: a wait on this context reads those whose command is done
    (`report_pending`)."""

    def report_pending(self) -> None:
        """After a wait: raises the first bad index that a pending record whose last call
        has finished holds (the others stay pending)."""
        complete = cl.command_execution_status.COMPLETE
        for key, (record, queue, event) in list(self.pending.items()):
            if event.command_execution_status == complete:
                del self.pending[key]
                record.check(queue)


_QUEUES: dict[int, DeviceQueue] = {}


def device_queue(device: OpenCLDevice) -> DeviceQueue:
    """The queue and pool of `device`'s context, made on first use."""
    key = device.context.int_ptr
    found = _QUEUES.get(key)
    if found is None:
        queue = cl.CommandQueue(device.context, device.device)
        found = DeviceQueue(queue, BufferPool(device.context),
                            cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 1))
        _QUEUES[key] = found
    return found


def opened_pools() -> list[BufferPool]:
    """The pools of every device context `device_queue` has made a queue for."""
    return [found.pool for found in _QUEUES.values()]


def same_context(a: cl.Context, b: cl.Context) -> bool:
    return a is b or a.int_ptr == b.int_ptr


class DeviceArray:
    """A C-contiguous array in a device buffer (see the module docstring)."""

    def __init__(self, device: OpenCLDevice, buffer: cl.Buffer | None, shape: tuple[int, ...],
                 dtype: np.dtype, *, pool: BufferPool | None = None,
                 event: cl.Event | None = None, owner: object = None) -> None:
        self.device = device
        self.buffer = buffer
        """The buffer holding the elements; None for an array of no elements."""
        self.shape = shape
        self.dtype = dtype
        self.size = math.prod(shape)
        self.nbytes = self.size * dtype.itemsize
        self.event = event
        """The last command that writes this array, where it was made by one (None: written
        already, or by commands this array does not know of)."""
        self._pool = pool if buffer is not None else None
        """Where the buffer goes back when this array is garbage (None: not pooled)."""
        self._owner = owner
        """What else must stay alive while this array does (a wrapped pyopencl array)."""

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.give(self.nbytes, self.buffer)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def context(self) -> cl.Context:
        return self.device.context

    @property
    def queue(self) -> cl.CommandQueue:
        return device_queue(self.device).queue

    @property
    def ready(self) -> bool:
        """Whether the commands that write this array have finished (never waits)."""
        return (self.event is None
                or self.event.command_execution_status == cl.command_execution_status.COMPLETE)

    def wait(self) -> None:
        """Waits until the commands that write this array have finished; raises a bad index
        that a call met (`fusec.runtime.index_errors`)."""
        if self.event is not None:
            self.event.wait()
        shared = device_queue(self.device)
        if shared.pending:
            shared.report_pending()

    def get(self) -> np.ndarray:
        """A new host array with the values (waits for the commands that write them); raises
        a bad index that a call met (`fusec.runtime.index_errors`)."""
        out = np.empty(self.shape, self.dtype)
        shared = device_queue(self.device)
        if self.buffer is not None and out.nbytes:
            cl.enqueue_copy(shared.queue, out, self.buffer, is_blocking=True)
        if shared.pending:
            shared.report_pending()
        return out

    def numpy(self) -> np.ndarray:
        return self.get()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.get()
        return out if dtype is None else out.astype(dtype, copy=False)

    def to_pyopencl(self) -> cl_array.Array:
        """The same buffer as a ``pyopencl.array.Array`` (no copy) on this array's queue; it
        keeps this array (and so its buffer) alive."""
        array = cl_array.Array(self.queue, self.shape, self.dtype,
                               data=self.buffer if self.buffer is not None else None)
        array.fusec_owner = self  # type: ignore[attr-defined]
        return array

    def __repr__(self) -> str:
        return (f"DeviceArray(shape={self.shape}, dtype={self.dtype}, "
                f"device={self.device.description!r})")


def empty(device: OpenCLDevice, shape: tuple[int, ...], dtype: Any) -> DeviceArray:
    """An uninitialised device array from the pool."""
    dtype = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    nbytes = math.prod(shape) * dtype.itemsize
    pool = device_queue(device).pool
    return DeviceArray(device, pool.take(nbytes) if nbytes else None, shape, dtype, pool=pool)


def to_device(device: OpenCLDevice, array: Any) -> DeviceArray:
    """A device array with a copy of the host array `array` (the copy is done on return, so
    the caller may change `array` at once)."""
    shape = np.shape(array)
    host = np.ascontiguousarray(array).reshape(shape)  # ascontiguousarray makes 0-d 1-d
    out = empty(device, host.shape, host.dtype)
    if out.buffer is not None:
        cl.enqueue_copy(out.queue, out.buffer, host, is_blocking=True)
    return out


def is_device_array(value: object) -> bool:
    return isinstance(value, (DeviceArray, cl_array.Array))


def wrap(device: OpenCLDevice, array: cl_array.Array, name: str = "array") -> DeviceArray:
    """The ``pyopencl.array.Array`` `array` as a device array of `device` (same buffer).

    `array` must be C-contiguous and on `device`'s context (else an InputError that names it
    `name`). Commands pending on its own queue, and its recorded events, are waited for on the
    device (not by the host) before any later command of `device_queue(device)`. The other way
    round is the caller's: a command enqueued later on `array`'s own queue is not ordered after
    the calls that read it (``synchronize()`` first, or make `array` on that queue)."""
    if not same_context(array.context, device.context):
        raise InputError(f"{name} is a pyopencl array of another OpenCL context "
                         f"(not that of {device.description})")
    if not array.flags.c_contiguous:
        raise InputError(f"{name} is a pyopencl array that is not C-contiguous")
    queue = device_queue(device).queue
    waits = [e for e in array.events if e is not None]
    if array.queue is not None and array.queue.int_ptr != queue.int_ptr:
        waits.append(cl.enqueue_marker(array.queue))
        array.queue.flush()
    if waits:
        cl.enqueue_barrier(queue, wait_for=waits)
    buffer = None
    if array.nbytes:
        buffer = array.base_data if array.offset == 0 else array.data
    return DeviceArray(device, buffer, tuple(array.shape), np.dtype(array.dtype), owner=array)
