"""The few CUDA driver calls that launch fusec's kernels in PyTorch's own CUDA context.

NVIDIA's OpenCL compiles a program to PTX, its program binary (``clGetProgramInfo``'s
``CL_PROGRAM_BINARIES``). The CUDA driver loads that PTX (``cuModuleLoadDataEx``) into the
context current on the thread, the primary context PyTorch uses, and launches its entries with
``cuLaunchKernel`` on a PyTorch stream, each parameter the plan's buffer at that position (a
``.u64`` global pointer; an entry has no other parameters). Two things differ from an OpenCL
launch, both checked on the H200 (2026-12-02, ``bench/probe_cuda_launch.py``: BERT-base,
GPT-2 small and a Llama-style model, every output equal to the OpenCL run's bit for bit):

- The PTX reads ``%envreg`` registers that the OpenCL driver fills before a launch (the
  global work offset, and the group offset of a grid it splits); a CUDA launch leaves them
  undefined (the first GEMM met an illegal address). fusec launches with no offset and one
  grid, so `module_ptx` reads each as 0.
- A kernel's ``__local`` memory beyond what its PTX declares statically is dynamic shared
  memory, asked for at each launch (`Function.dynamic_shared`).

Nothing here imports PyTorch; `fusec.runtime.cuda_launch` runs an executable's plan with it.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from typing import Any

from .errors import DeviceError

CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_EVENT_DISABLE_TIMING = 2
CU_EVENT_RECORD_EXTERNAL = 1
LOG_BYTES = 1 << 14

ENVREG = re.compile(rb"%envreg\d+")


def is_ptx(binary: bytes) -> bool:
    """Whether an OpenCL program binary is PTX text (NVIDIA's OpenCL), which CUDA loads."""
    return b".target sm_" in binary[:4096] and b".entry" in binary


def module_ptx(binary: bytes) -> bytes:
    """The PTX CUDA loads for an OpenCL program binary: every ``%envreg`` read as 0 (see the
    module docstring), NUL-terminated."""
    return ENVREG.sub(b"0", binary.rstrip(b"\0")) + b"\0"


class CudaDriver:
    """``libcuda`` through ctypes, with each status turned into a one-line `DeviceError`."""

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise DeviceError(f"the CUDA driver (libcuda.so.1) cannot be loaded: {e}") from None
        lib = self.lib
        lib.cuLaunchKernel.argtypes = [
            ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
            ctypes.c_void_p]
        lib.cuLaunchKernel.restype = ctypes.c_int
        self.launch_kernel = lib.cuLaunchKernel

    def message(self, status: int) -> str:
        text = ctypes.c_char_p()
        self.lib.cuGetErrorString(status, ctypes.byref(text))
        return f"{text.value.decode() if text.value else 'CUDA error'} ({status})"

    def check(self, status: int, what: str) -> None:
        if status:
            raise DeviceError(f"{what}: {self.message(status)}")

    def load(self, ptx: bytes) -> ctypes.c_void_p:
        """A module of `ptx` (NUL-terminated) in the current context; the JIT's log in the
        error where it fails."""
        module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(LOG_BYTES)
        options = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p).value, LOG_BYTES)
        status = self.lib.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(ptx), 2,
                                             options, values)
        if status:
            first = log.value.decode(errors="replace").strip().splitlines()[:1]
            raise DeviceError("the CUDA driver cannot load the program's PTX: "
                              f"{self.message(status)}{': ' + first[0] if first else ''}")
        return module

    def unload(self, module: ctypes.c_void_p) -> None:
        self.lib.cuModuleUnload(module)

    def function(self, module: ctypes.c_void_p, name: str, local_bytes: int) -> Function:
        """Entry `name` of `module`, given `local_bytes` of shared memory in all (what OpenCL
        gives the kernel, ``CL_KERNEL_LOCAL_MEM_SIZE``)."""
        handle = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(handle), module, name.encode()),
                   f"kernel '{name}' is not in the program's PTX")
        static = self.attribute(handle, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        dynamic = max(0, local_bytes - static)
        if dynamic:
            self.check(self.lib.cuFuncSetAttribute(
                handle, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic),
                f"kernel '{name}': {dynamic} bytes of dynamic shared memory")
        return Function(name, handle, dynamic,
                        self.attribute(handle, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK))

    def attribute(self, handle: ctypes.c_void_p, which: int) -> int:
        value = ctypes.c_int()
        self.check(self.lib.cuFuncGetAttribute(ctypes.byref(value), which, handle),
                   "cuFuncGetAttribute")
        return value.value


class HostReadback:
    """A few bytes of device memory read into page-locked host memory behind a stream's work,
    and an event after the read that the host waits for alone (`wait`): the stream's later
    work goes on. Enqueued while a stream is captured (`capturing`), the read is a copy node of
    the CUDA graph and the event an external event-record node, so each replay reads anew."""

    def __init__(self, driver: CudaDriver, nbytes: int):
        lib = driver.lib
        self.driver = driver
        self.nbytes = nbytes
        pointer = ctypes.c_void_p()
        driver.check(lib.cuMemHostAlloc(ctypes.byref(pointer), ctypes.c_size_t(nbytes), 0),
                     f"cuMemHostAlloc of {nbytes} bytes")
        self.host = pointer
        event = ctypes.c_void_p()
        status = lib.cuEventCreate(ctypes.byref(event), CU_EVENT_DISABLE_TIMING)
        if status:
            lib.cuMemFreeHost(self.host)
            driver.check(status, "cuEventCreate")
        self.event = event

    def enqueue(self, device_pointer: int, stream: int, capturing: bool) -> None:
        """Reads `nbytes` at `device_pointer` behind `stream`'s work (a CUDA stream handle),
        then records the event there."""
        lib, check = self.driver.lib, self.driver.check
        check(lib.cuMemcpyDtoHAsync_v2(self.host, ctypes.c_uint64(device_pointer),
                                       ctypes.c_size_t(self.nbytes), ctypes.c_void_p(stream)),
              "cuMemcpyDtoHAsync")
        check(lib.cuEventRecordWithFlags(self.event, ctypes.c_void_p(stream),
                                         CU_EVENT_RECORD_EXTERNAL if capturing else 0),
              "cuEventRecordWithFlags")

    def wait(self) -> bytes:
        """The bytes read, once the read is done (the host waits for the event alone)."""
        self.driver.check(self.driver.lib.cuEventSynchronize(self.event), "cuEventSynchronize")
        return ctypes.string_at(self.host, self.nbytes)

    def close(self) -> None:
        self.driver.lib.cuEventDestroy_v2(self.event)
        self.driver.lib.cuMemFreeHost(self.host)


@dataclass(frozen=True)
class Function:
    """One entry of a loaded module."""

    name: str
    handle: ctypes.c_void_p
    dynamic_shared: int
    """Bytes of dynamic shared memory each launch asks for."""
    max_threads: int
    """The most threads a block of it may have (its registers decide)."""


def block_for(global_size: tuple[int, ...], local_size: tuple[int, ...] | None,
              max_threads: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(grid, block) of a launch over `global_size` work items in groups of `local_size`; where
    the plan leaves the group to the driver (None), the largest divisor of the first
    dimension up to 256 threads (and `max_threads`), ones elsewhere, as a CUDA launch must
    cover the work exactly."""
    if local_size is None:
        limit = max(1, min(256, max_threads, global_size[0]))
        first = max(d for d in range(1, limit + 1) if global_size[0] % d == 0)
        local_size = (first, *([1] * (len(global_size) - 1)))
    grid = [g // size for g, size in zip(global_size, local_size, strict=True)]
    block = list(local_size)
    return ((*grid, 1, 1)[:3], (*block, 1, 1)[:3])  # type: ignore[return-value]


def launch_params(cells: list[ctypes.c_uint64], buffers: tuple[int, ...]) -> Any:
    """The parameter array ``cuLaunchKernel`` takes for a launch over `buffers` (plan buffer
    indices): the address of each buffer's cell in `cells`, one 64-bit address per buffer, so
    that a new address in a cell reaches every launch that uses the buffer."""
    return (ctypes.c_void_p * max(1, len(buffers)))(
        *[ctypes.addressof(cells[b]) for b in buffers])
