"""Host arrays that a device sharing host memory can use in place (zero-copy).

On a device that shares the host's memory (a CPU OpenCL device, an integrated GPU) a buffer
created with ``CL_MEM_USE_HOST_PTR`` over a suitably aligned host array is that array: kernels
read and write it without a copy. Intel's CPU runtime uses the pointer in place when it is
aligned to the device's ``CL_DEVICE_MEM_BASE_ADDR_ALIGN`` (1024 bits, 128 bytes; measured with a
kernel that writes its argument's address: at 16 or 64 bytes off a 128-byte boundary the
runtime silently copies the array into memory of its own). Intel's guide for its integrated
GPUs asks for page (4096-byte) alignment. numpy aligns large arrays only to 16 bytes, so a
caller's array is often misaligned; `aligned_empty` makes arrays that are not.
"""

from __future__ import annotations

import math

import numpy as np
import pyopencl as cl

PAGE = 4096
"""Bytes of alignment asked of a host array used in place by a GPU sharing host memory."""

MIN_ALIGNMENT = 64
"""The least alignment used for any device (a cache line)."""


def shares_host_memory(device: cl.Device) -> bool:
    """Whether kernels on `device` can use host arrays in place: a CPU device, or one that
    reports ``CL_DEVICE_HOST_UNIFIED_MEMORY`` (deprecated by OpenCL 2.0, absent on some 3.0
    drivers: then only a CPU counts)."""
    if device.type & cl.device_type.CPU:
        return True
    try:
        return bool(device.host_unified_memory)
    except (cl.Error, AttributeError):
        return False


def host_alignment(device: cl.Device) -> int:
    """The alignment in bytes a host array needs for `device` to use it in place."""
    base = max(MIN_ALIGNMENT, device.mem_base_addr_align // 8)
    if device.type & cl.device_type.CPU:
        return base
    return max(base, PAGE)


def address(array: np.ndarray) -> int:
    """The address of the first element of `array`."""
    return array.__array_interface__["data"][0]


def is_aligned(array: np.ndarray, alignment: int) -> bool:
    return address(array) % alignment == 0


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype, alignment: int = PAGE) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts at a multiple of `alignment`.

    The caller owns it like any numpy array; its ``base`` is the (slightly larger) byte array
    it was cut from.
    """
    raw = np.empty(math.prod(shape) * dtype.itemsize + alignment, np.uint8)
    return np.ndarray(shape, dtype, raw, -address(raw) % alignment)


USE_HOST_READ = cl.mem_flags.USE_HOST_PTR | cl.mem_flags.READ_ONLY
USE_HOST_READ_WRITE = cl.mem_flags.USE_HOST_PTR | cl.mem_flags.READ_WRITE


def use_host_buffer(context: cl.Context, array: np.ndarray, read_only: bool) -> cl.Buffer:
    """A buffer that is `array` itself (``CL_MEM_USE_HOST_PTR``); `array` must be
    C-contiguous and must outlive every command that uses the buffer."""
    return cl.Buffer(context, USE_HOST_READ if read_only else USE_HOST_READ_WRITE, hostbuf=array)


def pinned_empty(queue: cl.CommandQueue, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array in page-locked host memory of `queue`'s context: a buffer
    allocated by the driver (``CL_MEM_ALLOC_HOST_PTR``), mapped once and never unmapped (the
    array keeps the buffer): what a non-blocking read lands in without the driver staging it
    through memory of its own, as it must for pageable memory (a numpy array)."""
    nbytes = max(1, math.prod(shape) * np.dtype(dtype).itemsize)
    buffer = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
                       nbytes)
    array, _ = cl.enqueue_map_buffer(queue, buffer, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                     shape, dtype, is_blocking=True)
    return array
