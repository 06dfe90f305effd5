"""Can OpenCL on the GPU machine share memory with CUDA (PyTorch) without a copy?

    python3 -m fusec.bench.probe_external_memory [--json OUT] [--mib 64]

Reports, as JSON on stdout, one step at a time (each step's failure is reported, never raised):

1. ``extensions``: every OpenCL platform and device, and which external-memory extensions
   (``cl_khr_external_memory*``, ``cl_khr_external_semaphore*``) each lists.
2. ``handle_types``: the handle types the platform and device say they import
   (``CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR``,
   ``CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR``), by name.
3. ``import``: where opaque file descriptors are importable and CUDA is there, the whole path:
   memory made by the CUDA driver as exportable (``cuMemCreate`` with a POSIX file descriptor
   handle), filled by CUDA, imported into OpenCL (``clCreateBufferWithProperties`` with
   ``CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR``), read by OpenCL, written by OpenCL and read back
   by CUDA and through a torch tensor over the same memory (``__cuda_array_interface__``).
   Ordinary PyTorch tensors (``cudaMalloc`` through its caching allocator) cannot be exported
   this way; a zero-copy design would have fusec allocate such memory and hand it to torch.
4. ``staged_copy``: what a CUDA tensor costs a call today (`fusec.runtime.interop`): the tensor
   to the host (``.cpu()``) and into an OpenCL buffer, and an output back the same way, in ms,
   median of several, for ``--mib`` MiB; the device-to-device figure beside it for scale.
"""

from __future__ import annotations

import ctypes
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from fusec.files import atomic_write
from fusec.runtime.cuda_interop import (  # the ctypes declarations the runtime uses
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    CU_MEM_ALLOCATION_TYPE_PINNED,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
    CU_MEM_LOCATION_TYPE_DEVICE,
    CUmemAccessDesc,
    CUmemAllocationProp,
    CUmemLocation,
    opencl_library,
)

EXTERNAL = ("cl_khr_external_memory", "cl_khr_external_semaphore")

CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR = 0x2044
CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR = 0x204F
HANDLE_TYPES = {
    0x2060: "OPAQUE_FD", 0x2061: "OPAQUE_WIN32", 0x2062: "OPAQUE_WIN32_KMT",
    0x2063: "D3D11_TEXTURE", 0x2064: "D3D11_TEXTURE_KMT", 0x2065: "D3D12_HEAP",
    0x2066: "D3D12_RESOURCE", 0x2067: "DMA_BUF", 0x2069: "OPAQUE_WIN32_NAME",
}
CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR = 0x2060
CL_MEM_READ_WRITE = 1


def step(report: dict[str, Any], name: str, fn: Callable[[], Any]) -> Any:
    """Runs one step; its result or its error goes into `report[name]`."""
    try:
        result = fn()
    except Exception as error:  # noqa: BLE001 - a probe reports, it does not stop
        report[name] = {"status": "failed", "error": f"{type(error).__name__}: {error}"}
        return None
    report[name] = result
    return result


def extensions() -> list[dict[str, Any]]:
    import pyopencl as cl

    from fusec.runtime.opencl_env import configure_opencl_env

    configure_opencl_env()
    found = []
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            listed = sorted(set(platform.extensions.split()) | set(device.extensions.split()))
            found.append({
                "platform": platform.name.strip(), "version": platform.version.strip(),
                "device": device.name.strip(),
                "type": cl.device_type.to_string(device.type),
                "external": [e for e in listed if e.startswith(EXTERNAL)],
            })
    return found


def gpu_device() -> Any:
    import pyopencl as cl

    for platform in cl.get_platforms():
        for device in platform.get_devices():
            if device.type & cl.device_type.GPU:
                return platform, device
    raise LookupError("no OpenCL GPU device")


def query_handle_types(lib: ctypes.CDLL, query: Any, handle: int, param: int) -> list[str]:
    size = ctypes.c_size_t()
    status = query(ctypes.c_void_p(handle), ctypes.c_uint(param), ctypes.c_size_t(0), None,
                   ctypes.byref(size))
    if status != 0:
        return [f"query failed: CL error {status}"]
    count = size.value // 4
    values = (ctypes.c_uint * max(count, 1))()
    status = query(ctypes.c_void_p(handle), ctypes.c_uint(param), size, values, None)
    if status != 0:
        return [f"query failed: CL error {status}"]
    return [HANDLE_TYPES.get(v, hex(v)) for v in values[:count]]


def handle_types() -> list[dict[str, Any]]:
    """The import handle types of every platform and device (an error code where the
    query is not understood, as on a platform without the extension)."""
    import pyopencl as cl

    lib = opencl_library()
    found = []
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            found.append({
                "device": device.name.strip(),
                "platform": query_handle_types(
                    lib, lib.clGetPlatformInfo, platform.int_ptr,
                    CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR),
                "device_import": query_handle_types(
                    lib, lib.clGetDeviceInfo, device.int_ptr,
                    CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR),
            })
    return found


# --- CUDA driver API, just what the import needs ---------------------------------------------


def cuda_check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed: CUDA error {status}")


class CudaArray:
    """A torch view of raw CUDA memory (``__cuda_array_interface__``, no copy)."""

    def __init__(self, pointer: int, count: int) -> None:
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": "<f4",
                                         "data": (pointer, False), "version": 3}


def import_cuda_memory(mib: int) -> dict[str, Any]:
    """CUDA-exported memory imported into OpenCL, used by both sides (see step 3)."""
    import numpy as np
    import pyopencl as cl
    import torch

    if not torch.cuda.is_available():
        raise LookupError("torch has no CUDA device")
    platform, device = gpu_device()
    types = query_handle_types(opencl_library(), opencl_library().clGetDeviceInfo,
                               device.int_ptr, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR)
    if "OPAQUE_FD" not in types:
        return {"status": "not possible", "reason": f"device imports {types or 'no handles'}"}
    torch.zeros(1, device="cuda")  # the primary context, current on this thread
    cuda = ctypes.CDLL("libcuda.so.1")
    ordinal = torch.cuda.current_device()
    prop = CUmemAllocationProp()
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    prop.location = CUmemLocation(CU_MEM_LOCATION_TYPE_DEVICE, ordinal)
    granularity = ctypes.c_size_t()
    cuda_check(cuda.cuMemGetAllocationGranularity(ctypes.byref(granularity), ctypes.byref(prop),
                                                  0), "cuMemGetAllocationGranularity")
    size = -(-(mib << 20) // granularity.value) * granularity.value
    handle = ctypes.c_ulonglong()
    cuda_check(cuda.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop),
                                ctypes.c_ulonglong(0)), "cuMemCreate")
    fd = ctypes.c_int(-1)
    cuda_check(cuda.cuMemExportToShareableHandle(ctypes.byref(fd), handle,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                                 ctypes.c_ulonglong(0)),
               "cuMemExportToShareableHandle")
    pointer = ctypes.c_ulonglong()
    cuda_check(cuda.cuMemAddressReserve(ctypes.byref(pointer), ctypes.c_size_t(size),
                                        ctypes.c_size_t(0), ctypes.c_ulonglong(0),
                                        ctypes.c_ulonglong(0)), "cuMemAddressReserve")
    cuda_check(cuda.cuMemMap(pointer, ctypes.c_size_t(size), ctypes.c_size_t(0), handle,
                             ctypes.c_ulonglong(0)), "cuMemMap")
    access = CUmemAccessDesc(CUmemLocation(CU_MEM_LOCATION_TYPE_DEVICE, ordinal),
                             CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    cuda_check(cuda.cuMemSetAccess(pointer, ctypes.c_size_t(size), ctypes.byref(access),
                                   ctypes.c_size_t(1)), "cuMemSetAccess")
    count = size // 4
    tensor = torch.as_tensor(CudaArray(pointer.value, count), device="cuda")
    tensor.fill_(1.5)
    torch.cuda.synchronize()

    context = cl.Context(devices=[device])
    queue = cl.CommandQueue(context, device)
    lib = opencl_library()
    create = lib.clCreateBufferWithProperties
    create.restype = ctypes.c_void_p
    props = (ctypes.c_ulonglong * 3)(CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, fd.value, 0)
    status = ctypes.c_int()
    mem = create(ctypes.c_void_p(context.int_ptr), props, ctypes.c_ulonglong(CL_MEM_READ_WRITE),
                 ctypes.c_size_t(size), None, ctypes.byref(status))
    if status.value != 0 or not mem:
        return {"status": "import failed", "cl_error": status.value, "bytes": size}
    buffer = cl.Buffer.from_int_ptr(mem, retain=False)
    function = lib.clGetExtensionFunctionAddressForPlatform
    function.restype = ctypes.c_void_p
    signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint,
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_void_p,
                                 ctypes.c_void_p)
    acquire_address = function(ctypes.c_void_p(platform.int_ptr),
                               b"clEnqueueAcquireExternalMemObjectsKHR")
    release_address = function(ctypes.c_void_p(platform.int_ptr),
                               b"clEnqueueReleaseExternalMemObjectsKHR")
    mems = (ctypes.c_void_p * 1)(mem)
    if acquire_address:
        cuda_check(signature(acquire_address)(ctypes.c_void_p(queue.int_ptr), 1, mems, 0, None,
                                              None), "clEnqueueAcquireExternalMemObjectsKHR")
    seen = np.empty(count, np.float32)
    cl.enqueue_copy(queue, seen, buffer)
    read_ok = bool(np.all(seen == 1.5))
    cl.enqueue_fill_buffer(queue, buffer, np.float32(2.25), 0, size)
    if release_address:
        cuda_check(signature(release_address)(ctypes.c_void_p(queue.int_ptr), 1, mems, 0, None,
                                              None), "clEnqueueReleaseExternalMemObjectsKHR")
    queue.finish()
    written_ok = bool(torch.all(tensor == 2.25).item())
    return {"status": "ok" if read_ok and written_ok else "wrong values", "bytes": size,
            "opencl_reads_cuda_writes": read_ok, "torch_reads_opencl_writes": written_ok,
            "acquire_release_found": bool(acquire_address and release_address)}


def median_ms(fn: Callable[[], Any], sync: Callable[[], Any], repeat: int = 10) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def staged_copy(mib: int) -> dict[str, Any]:
    """A CUDA tensor's way through fusec today (`fusec.runtime.interop`), timed."""
    import numpy as np
    import torch

    from fusec.runtime.device import select_device
    from fusec.runtime.device_array import device_queue, to_device

    if not torch.cuda.is_available():
        raise LookupError("torch has no CUDA device")
    device = select_device("gpu")
    queue = device_queue(device).queue
    count = (mib << 20) // 4
    tensor = torch.rand(count, device="cuda")
    array = to_device(device, np.zeros(count, np.float32))

    def into_opencl() -> None:
        host = tensor.cpu().numpy()
        import pyopencl as cl

        cl.enqueue_copy(queue, array.buffer, host, is_blocking=True)

    def out_of_opencl() -> None:
        torch.from_numpy(array.get()).to("cuda")

    def sync() -> None:
        torch.cuda.synchronize()
        queue.finish()

    other = torch.empty_like(tensor)
    return {
        "mib": mib, "device": device.description,
        "cuda_tensor_to_opencl_ms": median_ms(into_opencl, sync),
        "opencl_to_cuda_tensor_ms": median_ms(out_of_opencl, sync),
        "cuda_device_to_device_copy_ms": median_ms(lambda: other.copy_(tensor), sync),
    }


@click.command()
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None,
              help="Also write the report to this file.")
@click.option("--mib", type=click.IntRange(1), default=64, show_default=True,
              help="Size of the buffers imported and copied.")
def main(json_out: str | None, mib: int) -> None:
    """Probes CUDA/OpenCL memory sharing on this machine (see the module docstring)."""
    report: dict[str, Any] = {}
    step(report, "extensions", extensions)
    step(report, "handle_types", handle_types)
    step(report, "import", lambda: import_cuda_memory(mib))
    step(report, "staged_copy", lambda: staged_copy(mib))
    text = json.dumps(report, indent=1)
    click.echo(text)
    if json_out:
        atomic_write(json_out, text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
