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
import weakref
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


ENTRY_BODY = re.compile(rb"(\.entry\s+\w+\s*\([^)]*\)[^{]*\{)")
"""An entry's declaration up to the brace that opens its body."""

PTX_VERSION = re.compile(rb"\.version\s+(\d+)\.(\d+)")
"""The module's PTX version (``griddepcontrol`` needs 7.8)."""

LAUNCH_DEPENDENTS = b"\n\tgriddepcontrol.launch_dependents;"
DEPENDENT_LAUNCH = b"\n\tgriddepcontrol.wait;" + LAUNCH_DEPENDENTS
"""What a kernel launched as a dependent launch (`CudaDriver.launch_dependent`) does first:
waits until the kernel before it on the stream has finished and its writes are visible, then
lets the kernel after it start its work-groups (which wait the same way)."""


def entry_prologue(ptx: bytes, body: int) -> bytes:
    """What the entry whose body starts at `body` in `ptx` begins with as a dependent launch:
    `DEPENDENT_LAUNCH`, or where the kernel waits for the kernel before it itself, later
    (``griddepcontrol.wait`` in its body: work it may do first, `gemm_wgmma`'s prefetch of
    B), the second half of it alone: the kernel after it may start at once."""
    end = ptx.find(b".entry", body)
    own_wait = b"griddepcontrol.wait" in ptx[body:end if end >= 0 else len(ptx)]
    return LAUNCH_DEPENDENTS if own_wait else DEPENDENT_LAUNCH


def module_ptx(binary: bytes, dependent: bool = False) -> bytes:
    """The PTX CUDA loads for an OpenCL program binary: every ``%envreg`` read as 0 (see the
    module docstring), NUL-terminated; with `dependent`, each entry opens with
    `DEPENDENT_LAUNCH`."""
    ptx = ENVREG.sub(b"0", binary.rstrip(b"\0"))
    if dependent:
        ptx = ENTRY_BODY.sub(lambda m: m.group(1) + entry_prologue(ptx, m.end()), ptx)
        ptx = PTX_VERSION.sub(lambda m: m.group(0) if (int(m.group(1)), int(m.group(2)))
                              >= (7, 8) else b".version 7.8", ptx, count=1)
    return ptx + b"\0"


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
        self._launch_ex: Any = None

    def launch_dependent(self, config: LaunchConfig, function: ctypes.c_void_p,
                         params: Any) -> int:
        """``cuLaunchKernelEx`` of `function` as `config` says (a `dependent_config`): the
        kernel may start while the one before it on the stream runs, and waits for it itself
        (`DEPENDENT_LAUNCH`). Returns the status."""
        if self._launch_ex is None:
            self._launch_ex = self.lib.cuLaunchKernelEx
            self._launch_ex.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_void_p]
            self._launch_ex.restype = ctypes.c_int
        return self._launch_ex(ctypes.addressof(config), function, params, None)

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


CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6


class LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute``: an id and a 64-byte union of values."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_int),
                ("rest", ctypes.c_char * 60)]


class LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig``: a launch's grid, block, shared memory, stream and attributes."""

    _fields_ = [("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint), ("grid_z", ctypes.c_uint),
                ("block_x", ctypes.c_uint), ("block_y", ctypes.c_uint),
                ("block_z", ctypes.c_uint), ("shared_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(LaunchAttribute)),
                ("num_attrs", ctypes.c_uint)]


def dependent_config(grid: tuple[int, int, int], block: tuple[int, int, int],
                     shared: int) -> LaunchConfig:
    """The configuration of a dependent launch (`CudaDriver.launch_dependent`); its stream
    is set at each launch."""
    attribute = LaunchAttribute(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, b"", 1)
    config = LaunchConfig(*grid, *block, shared, None, ctypes.pointer(attribute), 1)
    config.attribute = attribute  # type: ignore[attr-defined]  # kept alive with it
    return config


class KernelNodeParams(ctypes.Structure):
    """``CUDA_KERNEL_NODE_PARAMS_v2``: what a kernel node of a graph launches."""

    _fields_ = [("func", ctypes.c_void_p),
                ("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint), ("grid_z", ctypes.c_uint),
                ("block_x", ctypes.c_uint), ("block_y", ctypes.c_uint),
                ("block_z", ctypes.c_uint), ("shared_bytes", ctypes.c_uint),
                ("kernel_params", ctypes.c_void_p), ("extra", ctypes.c_void_p),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


def captured_node(driver: CudaDriver, stream: int) -> ctypes.c_void_p:
    """The node that the last launch on `stream`, a stream being captured, added to the
    graph: the one node the capture's next work would depend on."""
    lib = driver.lib
    status_out, ident = ctypes.c_int(), ctypes.c_uint64()
    graph, nodes, count = ctypes.c_void_p(), ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
    if hasattr(lib, "cuStreamGetCaptureInfo_v3"):
        edges = ctypes.c_void_p()
        status = lib.cuStreamGetCaptureInfo_v3(
            ctypes.c_void_p(stream), ctypes.byref(status_out), ctypes.byref(ident),
            ctypes.byref(graph), ctypes.byref(nodes), ctypes.byref(edges), ctypes.byref(count))
    else:
        status = lib.cuStreamGetCaptureInfo_v2(
            ctypes.c_void_p(stream), ctypes.byref(status_out), ctypes.byref(ident),
            ctypes.byref(graph), ctypes.byref(nodes), ctypes.byref(count))
    driver.check(status, "cuStreamGetCaptureInfo")
    if count.value != 1:
        raise DeviceError(f"a captured launch left {count.value} nodes to depend on, not one")
    return ctypes.c_void_p(nodes[0])


GRAPH_UPDATE_CALLS = ("cuGraphInstantiateWithFlags", "cuGraphExecKernelNodeSetParams_v2",
                      "cuGraphLaunch", "cuGraphExecDestroy")
"""The driver calls `GraphExec` makes (CUDA 12 and later), besides `captured_node`'s."""


def updates_graphs(driver: CudaDriver) -> bool:
    """Whether the driver has what `GraphExec` and `captured_node` call."""
    lib = driver.lib
    return (all(hasattr(lib, call) for call in GRAPH_UPDATE_CALLS)
            and (hasattr(lib, "cuStreamGetCaptureInfo_v3")
                 or hasattr(lib, "cuStreamGetCaptureInfo_v2")))


class GraphExec:
    """A captured CUDA graph instantiated by the driver (`graph`: its ``CUgraph``), whose
    kernel nodes can be given new parameters between launches (`set_params`: the change
    reaches the launches after it, not one already enqueued)."""

    def __init__(self, driver: CudaDriver, graph: int):
        self.driver = driver
        lib = driver.lib
        handle = ctypes.c_void_p()
        driver.check(lib.cuGraphInstantiateWithFlags(ctypes.byref(handle), ctypes.c_void_p(graph),
                                                     ctypes.c_ulonglong(0)),
                     "cuGraphInstantiateWithFlags")
        self.handle = handle
        self.close = weakref.finalize(self, lib.cuGraphExecDestroy, handle)
        """Destroys the instantiated graph (once; also when this object is collected)."""
        self._set = lib.cuGraphExecKernelNodeSetParams_v2
        self._set.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self._set.restype = ctypes.c_int
        self._launch = lib.cuGraphLaunch
        self._launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._launch.restype = ctypes.c_int

    def set_params(self, node: ctypes.c_void_p, params: KernelNodeParams) -> None:
        status = self._set(self.handle, node, ctypes.addressof(params))
        if status:
            self.driver.check(status, "cuGraphExecKernelNodeSetParams")

    def launch(self, stream: int) -> None:
        status = self._launch(self.handle, stream)
        if status:
            self.driver.check(status, "cuGraphLaunch")


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
