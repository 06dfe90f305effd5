"""Device arrays that PyTorch sees as CUDA tensors without a copy (NVIDIA GPUs).

NVIDIA's OpenCL driver lists ``cl_khr_external_memory_opaque_fd`` and imports opaque file
descriptors (``bench/probe_external_memory.py`` on the H100: a buffer made by the CUDA driver
as exportable, imported into OpenCL, read and written correctly from both sides). Memory that
PyTorch allocates (``cudaMalloc`` through its caching allocator) is not exportable, so the
sharing goes the other way: `enable_cuda_sharing` makes the device's buffer pool allocate
every device array as exportable CUDA memory (``cuMemCreate`` with a POSIX file descriptor
handle, mapped into the CUDA address space) imported into OpenCL
(``clCreateBufferWithProperties`` with ``CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR``). Then:

- `to_torch(array)`: a CUDA tensor over the array's memory (``__cuda_array_interface__``, no
  copy; it keeps the array, and so its buffer, alive). It waits for the commands that write
  the array first.
- `view_at(pool, array, offset, shape, dtype)`: a CUDA tensor over a range of the array's
  bytes, a storage of its own that keeps the array alive (a weight held as part of a folded
  one, `fusec.compiler.torch_weights`).
- `from_torch(tensor, device)`: a device array over a tensor made by `to_torch` (no copy), or,
  for any other CUDA tensor, a new device array filled by one device-to-device copy in
  PyTorch (a memory-bound copy on the GPU: 0.06 ms for 64 MiB on the H100, where the copy
  through the host that `fusec.runtime.interop` makes costs 66 ms). It waits for PyTorch's
  current stream, so the values are there before any OpenCL command reads them;
  `from_torch_all` takes a call's inputs together, with one wait. The copies are ordered
  after the OpenCL commands already enqueued (which may still read a buffer the pool hands
  out again) on the GPU, by `StreamOrder`, where the device has one: the host then waits
  once, for the stream, not first for the queue too.

Each imported buffer is acquired for OpenCL once, when it is made
(``clEnqueueAcquireExternalMemObjectsKHR``), and the host waits at each hand-over between the
two APIs (the OpenCL queue before `to_torch`, the CUDA stream in `from_torch`); there are no
semaphores between them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import pathlib
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pyopencl as cl

from .device import OpenCLDevice
from .device_array import BufferPool, DeviceArray, device_queue, empty
from .errors import DeviceError, InputError

EXTENSION = "cl_khr_external_memory_opaque_fd"
CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR = 0x2060
CL_MEM_READ_WRITE = 1

CU_MEM_ALLOCATION_TYPE_PINNED = 1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3


class CUmemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CUmemAllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class CUmemAllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", CUmemLocation), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", CUmemAllocFlags)]


class CUmemAccessDesc(ctypes.Structure):
    _fields_ = [("location", CUmemLocation), ("flags", ctypes.c_int)]


def unsupported_reason(device: OpenCLDevice) -> str | None:
    """Why `device` cannot share memory with CUDA here; None if it can."""
    if not device.device.type & cl.device_type.GPU:
        return f"{device.description} is not a GPU"
    extensions = set(device.device.extensions.split()) | set(
        device.device.platform.extensions.split())
    if EXTENSION not in extensions:
        return f"{device.description} does not list {EXTENSION}"
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch has no CUDA device"
    return None


def opencl_library() -> ctypes.CDLL:
    """The ICD loader pyopencl uses (its wheel bundles one), else the system's."""
    here = pathlib.Path(cl.__file__).parent
    for libs in (here / ".libs", here.parent / "pyopencl.libs"):
        for candidate in sorted(libs.glob("libOpenCL*.so*")) if libs.is_dir() else []:
            return ctypes.CDLL(str(candidate))
    return ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")


class SharedAllocation:
    """One exportable CUDA allocation, mapped for CUDA and imported as an OpenCL buffer."""

    def __init__(self, pool: CudaSharedPool, nbytes: int) -> None:
        cuda = pool.cuda
        self.cuda = cuda
        prop = pool.prop
        size = pool.allocation_bytes(nbytes)
        self.size = size
        self.handle = ctypes.c_ulonglong()
        self.pointer = ctypes.c_ulonglong()
        check(cuda.cuMemCreate(ctypes.byref(self.handle), ctypes.c_size_t(size),
                               ctypes.byref(prop), ctypes.c_ulonglong(0)), "cuMemCreate")
        fd = ctypes.c_int(-1)
        check(cuda.cuMemExportToShareableHandle(
            ctypes.byref(fd), self.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            ctypes.c_ulonglong(0)), "cuMemExportToShareableHandle")
        check(cuda.cuMemAddressReserve(ctypes.byref(self.pointer), ctypes.c_size_t(size),
                                       ctypes.c_size_t(0), ctypes.c_ulonglong(0),
                                       ctypes.c_ulonglong(0)), "cuMemAddressReserve")
        check(cuda.cuMemMap(self.pointer, ctypes.c_size_t(size), ctypes.c_size_t(0),
                            self.handle, ctypes.c_ulonglong(0)), "cuMemMap")
        access = CUmemAccessDesc(CUmemLocation(CU_MEM_LOCATION_TYPE_DEVICE, pool.ordinal),
                                 CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        check(cuda.cuMemSetAccess(self.pointer, ctypes.c_size_t(size), ctypes.byref(access),
                                  ctypes.c_size_t(1)), "cuMemSetAccess")
        props = (ctypes.c_ulonglong * 3)(CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, fd.value, 0)
        status = ctypes.c_int()
        mem = pool.create_buffer(ctypes.c_void_p(pool.context.int_ptr), props,
                                 ctypes.c_ulonglong(CL_MEM_READ_WRITE), ctypes.c_size_t(size),
                                 None, ctypes.byref(status))
        if status.value != 0 or not mem:
            self.release_cuda()
            raise DeviceError(f"OpenCL cannot import CUDA memory of {size} bytes "
                              f"(CL error {status.value})")
        self.buffer = cl.Buffer.from_int_ptr(mem, retain=False)
        self.raw: Any = None
        """`CudaSharedPool.raw`'s tensor over this allocation, once made."""
        if pool.acquire is not None:
            mems = (ctypes.c_void_p * 1)(mem)
            check(pool.acquire(ctypes.c_void_p(pool.queue.int_ptr), 1, mems, 0, None, None),
                  "clEnqueueAcquireExternalMemObjectsKHR")

    def release_cuda(self) -> None:
        self.cuda.cuMemUnmap(self.pointer, ctypes.c_size_t(self.size))
        self.cuda.cuMemAddressFree(self.pointer, ctypes.c_size_t(self.size))
        self.cuda.cuMemRelease(self.handle)


def check(status: int, what: str) -> None:
    if status != 0:
        raise DeviceError(f"{what} failed (error {status})")


class CudaSharedPool(BufferPool):
    """A `BufferPool` whose buffers are CUDA memory imported into OpenCL (see the module
    docstring); `allocation` finds the CUDA side of one of its buffers."""

    cuda_addressable = True

    def __init__(self, device: OpenCLDevice) -> None:
        super().__init__(device.context)
        import torch

        torch.zeros(1, device="cuda")  # the primary context, current on this thread
        self.ordinal = torch.cuda.current_device()
        self.queue = device_queue(device).queue
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.prop = CUmemAllocationProp()
        self.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED
        self.prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        self.prop.location = CUmemLocation(CU_MEM_LOCATION_TYPE_DEVICE, self.ordinal)
        granularity = ctypes.c_size_t()
        check(self.cuda.cuMemGetAllocationGranularity(ctypes.byref(granularity),
                                                      ctypes.byref(self.prop), 0),
              "cuMemGetAllocationGranularity")
        self.granularity = granularity.value
        lib = opencl_library()
        self.create_buffer = lib.clCreateBufferWithProperties
        self.create_buffer.restype = ctypes.c_void_p
        lookup = lib.clGetExtensionFunctionAddressForPlatform
        lookup.restype = ctypes.c_void_p
        address = lookup(ctypes.c_void_p(device.device.platform.int_ptr),
                         b"clEnqueueAcquireExternalMemObjectsKHR")
        signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint,
                                     ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p)
        self.acquire = signature(address) if address else None
        self.allocations_by_buffer: dict[int, SharedAllocation] = {}
        self.allocations_by_pointer: dict[int, SharedAllocation] = {}
        self.order: StreamOrder | None = None
        """`stream_order`'s, once made."""

    def allocation_bytes(self, nbytes: int) -> int:
        """The bytes an allocation of `nbytes` takes: whole granules of the CUDA driver."""
        return -(-max(nbytes, 1) // self.granularity) * self.granularity

    def make(self, nbytes: int) -> cl.Buffer:
        allocation = SharedAllocation(self, nbytes)
        self.allocations_by_buffer[allocation.buffer.int_ptr] = allocation
        self.allocations_by_pointer[allocation.pointer.value] = allocation
        return allocation.buffer

    def allocation(self, buffer: cl.Buffer | None) -> SharedAllocation | None:
        return None if buffer is None else self.allocations_by_buffer.get(buffer.int_ptr)

    def raw(self, buffer: cl.Buffer) -> Any:
        """A uint8 CUDA tensor over the whole allocation of one of the pool's buffers, made
        once (an allocation lives as long as the pool): what `from_torch_all` copies into
        without a new ``torch.as_tensor`` per call. Never handed to a caller, since it does
        not keep a device array alive."""
        allocation = self.allocations_by_buffer[buffer.int_ptr]
        if allocation.raw is None:
            import torch

            interface = RawView(allocation.pointer.value, allocation.size)
            allocation.raw = torch.as_tensor(interface, device=f"cuda:{self.ordinal}")
        return allocation.raw


CU_STREAM_WAIT_VALUE_GEQ = 0


class StreamOrder:
    """PyTorch's stream made to wait, on the GPU, for what the OpenCL queue has enqueued so
    far, so that the host need not (`to_torch_all` with `ordered`).

    NVIDIA's OpenCL imports semaphores but exports none (``bench/probe_semaphores.py`` on the
    H200: ``CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR`` is empty), and the CUDA driver only
    imports them, so the two cannot share one. Memory they do share: an 8-byte counter in a
    shared allocation. Each `after_queue` enqueues on the OpenCL queue, behind the call's
    kernels, a fill of the counter with the next number, flushes the queue, and puts on the
    stream a ``cuStreamWaitValue64`` until the counter reaches that number (a wait of the
    GPU's front end, which takes no SM while it waits). The OpenCL queue is in order, so the
    fill runs once every kernel before it has finished writing."""

    def __init__(self, pool: CudaSharedPool) -> None:
        import torch

        self.pool = pool
        self.count = 0
        self.wait = None
        self.reason: str | None = None
        """Why the stream cannot be ordered so here (then callers wait on the host)."""
        try:
            self.counter = SharedAllocation(pool, 8)
        except DeviceError as e:
            self.reason = f"no shared counter: {e}"
            return
        for name in ("cuStreamWaitValue64_v2", "cuStreamWaitValue64"):
            self.wait = getattr(pool.cuda, name, None)
            if self.wait is not None:
                break
        if self.wait is None:
            self.reason = "the CUDA driver has no cuStreamWaitValue64"
            return
        self.wait.argtypes = (ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_ulonglong,
                              ctypes.c_uint)
        zero = torch.as_tensor(RawView(self.counter.pointer.value, 8),
                               device=f"cuda:{pool.ordinal}")
        zero.zero_()
        stream = torch.cuda.current_stream()
        status = self.wait(ctypes.c_void_p(stream.cuda_stream), self.counter.pointer.value, 0,
                           CU_STREAM_WAIT_VALUE_GEQ)
        stream.synchronize()
        if status != 0:
            self.reason = f"cuStreamWaitValue64 failed (error {status})"

    def after_queue(self, stream: Any) -> None:
        """Orders `stream` (a ``torch.cuda.Stream``) after every command enqueued so far on
        the pool's OpenCL queue."""
        self.count += 1
        queue = self.pool.queue
        cl.enqueue_fill_buffer(queue, self.counter.buffer, np.array([self.count], np.uint64),
                               0, 8)
        queue.flush()
        check(self.wait(ctypes.c_void_p(stream.cuda_stream), self.counter.pointer.value,
                        self.count, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64")


def stream_order(device: OpenCLDevice) -> StreamOrder | None:
    """The device's `StreamOrder` (made once), or None where the stream cannot be ordered
    after the queue (its ``reason`` says why)."""
    pool = shared_pool(device)
    if pool.order is None:
        pool.order = StreamOrder(pool)
    return pool.order if pool.order.reason is None else None


def enable_cuda_sharing(device: OpenCLDevice) -> CudaSharedPool:
    """Makes every later device array of `device`'s context CUDA-shareable (a DeviceError
    saying why where it cannot be)."""
    shared = device_queue(device)
    if isinstance(shared.pool, CudaSharedPool):
        return shared.pool
    reason = unsupported_reason(device)
    if reason is not None:
        raise DeviceError(f"cannot share memory with CUDA: {reason}")
    shared.pool = CudaSharedPool(device)
    return shared.pool


class RawView:
    """The bytes of one shared allocation, as ``torch.as_tensor`` reads them."""

    def __init__(self, pointer: int, size: int) -> None:
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1",
                                         "data": (pointer, False), "version": 3,
                                         "strides": None}


class CudaView:
    """What ``torch.as_tensor`` reads (``__cuda_array_interface__``); it holds the array.
    `shape` and `dtype`: of a part of the array that starts at `pointer` (default: all of
    it)."""

    def __init__(self, array: DeviceArray, pointer: int, shape: tuple[int, ...] | None = None,
                 dtype: np.dtype | None = None) -> None:
        self.array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape if shape is None else shape,
            "typestr": (array.dtype if dtype is None else dtype).str, "data": (pointer, False),
            "version": 3, "strides": None}


def shared_pool(device: OpenCLDevice) -> CudaSharedPool:
    pool = device_queue(device).pool
    if not isinstance(pool, CudaSharedPool):
        raise InputError("CUDA sharing is not enabled for this device "
                         "(fusec.runtime.cuda_interop.enable_cuda_sharing)")
    return pool


def to_torch_all(arrays: Sequence[DeviceArray], ordered: bool = False) -> list[Any]:
    """`to_torch` of a call's outputs. With `ordered`, where the device has a `stream_order`,
    without the host waiting: PyTorch's current stream waits on the GPU for the queue's
    commands instead, and a bad index the kernels meet is reported at the next wait (so a
    caller passes `ordered` only where it refused bad indices before the call, as
    `fusec.compiler.torch_partition` does)."""
    if not arrays:
        return []
    order = stream_order(arrays[0].device) if ordered else None
    if order is None:
        return [to_torch(a) for a in arrays]
    import torch

    pool = order.pool
    order.after_queue(torch.cuda.current_stream(pool.ordinal))
    return [view_of(pool, a) for a in arrays]


def to_torch(array: DeviceArray) -> Any:
    """A CUDA tensor over `array`'s memory, no copy (waits for the commands writing it, and
    raises a bad index that a call met, `fusec.runtime.index_errors`)."""
    pool = shared_pool(array.device)  # refuses a device without sharing, torch or not
    shared = device_queue(array.device)
    shared.queue.finish()
    if shared.pending:  # a bad index a call met is raised before its output is handed over
        shared.report_pending()
    return view_of(pool, array)


def view_of(pool: CudaSharedPool, array: DeviceArray) -> Any:
    """A CUDA tensor over the memory of `array` (made in `pool`'s shared memory)."""
    import torch

    allocation = pool.allocation(array.buffer)
    if allocation is None and array.nbytes:
        raise InputError("the device array was not made in CUDA-shared memory (it was made "
                         "before enable_cuda_sharing, or wraps a pyopencl array)")
    pointer = allocation.pointer.value if allocation is not None else 0
    return torch.as_tensor(CudaView(array, pointer), device=f"cuda:{pool.ordinal}")


def view_at(pool: CudaSharedPool, array: DeviceArray, offset: int, shape: tuple[int, ...],
            dtype: np.dtype) -> Any:
    """A CUDA tensor of `shape` and `dtype`, row-major, over the bytes of `array` (made in
    `pool`'s shared memory) from byte `offset` on: a storage of its own that keeps `array`
    alive."""
    import torch

    allocation = pool.allocation(array.buffer)
    nbytes = math.prod(shape) * dtype.itemsize
    if allocation is None or offset < 0 or offset + nbytes > array.nbytes:
        raise InputError(f"no {nbytes} bytes at byte {offset} of a device array of "
                         f"{array.nbytes} bytes in CUDA-shared memory")
    view = CudaView(array, allocation.pointer.value + offset, shape, dtype)
    return torch.as_tensor(view, device=f"cuda:{pool.ordinal}")


def from_torch(tensor: Any, device: OpenCLDevice) -> DeviceArray:
    """A device array with `tensor`'s values: its own memory where `to_torch` made it, else
    one device-to-device copy (see the module docstring)."""
    return from_torch_all([tensor], device)[0][0]


def from_torch_all(tensors: Sequence[Any], device: OpenCLDevice, narrow: bool = False,
                   bounded: Collection[int] = ()) -> tuple[list[DeviceArray],
                                                           dict[int, tuple[int, int]]]:
    """`from_torch` of each tensor, with one wait on PyTorch's stream for them all (a call's
    inputs cross together).

    With `narrow`, each int64 tensor becomes an int32 device array (the copy converts). The
    least and greatest values of each int64 tensor and of each one at a position in `bounded`
    are read in the same wait, by position, for the caller to refuse values outside int32, or
    outside what a kernel indexes, before any kernel reads them."""
    import torch

    pool = shared_pool(device)
    for tensor in tensors:
        if not tensor.is_cuda:
            raise InputError(f"from_torch takes a CUDA tensor, got one on {tensor.device}")
    arrays: list[DeviceArray] = []
    copies: list[tuple[DeviceArray, Any, Any]] = []  # (array, tensor, the array's torch dtype)
    ranged: list[int] = []  # the positions whose least and greatest values are read
    for position, tensor in enumerate(tensors):
        stored = tensor.dtype
        if narrow and stored == torch.int64:
            stored = torch.int32
        if tensor.numel() and (tensor.dtype == torch.int64 or position in bounded):
            ranged.append(position)
        dtype = np.dtype(str(stored).removeprefix("torch."))
        shape = tuple(tensor.shape)
        allocation = pool.allocations_by_pointer.get(tensor.data_ptr())
        if allocation is not None and tensor.is_contiguous() and dtype.itemsize == \
                tensor.element_size() and tensor.numel() * dtype.itemsize <= allocation.size:
            arrays.append(DeviceArray(device, allocation.buffer, shape, dtype, owner=tensor))
            continue
        out = empty(device, shape, dtype)
        arrays.append(out)
        if out.nbytes:
            copies.append((out, tensor, stored))
    shared = device_queue(device)
    if copies:  # no OpenCL command may still use a reused buffer when the copies write it
        order = stream_order(device)
        if order is None:
            shared.queue.finish()
        else:  # ordered on the GPU: the host goes on to enqueue the copies at once
            order.after_queue(torch.cuda.current_stream(pool.ordinal))
        for out, tensor, stored in copies:
            target = pool.raw(out.buffer)[:out.nbytes].view(stored).view(out.shape)
            target.copy_(tensor.detach().reshape(out.shape))
    bounds: dict[int, tuple[int, int]] = {}
    if ranged:  # reading them waits for the stream, copies included
        pairs = torch.stack([torch.stack(torch.aminmax(tensors[i].to(torch.int64)))
                             for i in ranged]).tolist()
        bounds = {i: (low, high) for i, (low, high) in zip(ranged, pairs, strict=True)}
    elif tensors:
        torch.cuda.current_stream(tensors[0].device).synchronize()
    if shared.pending:  # a bad index an earlier call met, not yet reported
        shared.report_pending()
    return arrays, bounds

