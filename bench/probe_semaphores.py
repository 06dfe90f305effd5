"""Can OpenCL and CUDA (PyTorch) order their work on the GPU without the host waiting?

    python3 -m fusec.bench.probe_semaphores [--json OUT] [--rounds 20]

Today a call through ``backend="fusec"`` on CUDA tensors waits on the host twice: for
PyTorch's stream before OpenCL reads the inputs, and for the OpenCL queue before PyTorch reads
the outputs (`fusec.runtime.cuda_interop`), so a call's host work never overlaps the GPU's.
NVIDIA's OpenCL lists ``cl_khr_external_semaphore_opaque_fd``: an OpenCL semaphore exported as
a file descriptor and imported by the CUDA driver (``cuImportExternalSemaphore``) would let each
side wait for the other on the GPU. This probe reports, as JSON, one step at a time (a step's
failure is reported, never raised):

1. ``extensions``: the GPU's OpenCL extensions that bear on it (``*semaphore*``,
   ``*command_buffer*``, ``*external*``), and the whole list's length.
2. ``semaphores``: two binary semaphores made exportable by OpenCL
   (``clCreateSemaphoreWithPropertiesKHR``), their file descriptors
   (``clGetSemaphoreHandleForTypeKHR``) imported by CUDA.
3. ``ordering``: `--rounds` rounds, each: PyTorch sleeps on the GPU (``torch.cuda._sleep``) and
   then fills a shared buffer with the round's number and signals; OpenCL waits, adds one into
   a second shared buffer and signals; PyTorch waits and copies the result. No host wait until
   the end; every round's value must be right. The same rounds without the semaphores are run
   as the control, whose values should be wrong (so the check can fail).
4. ``cost``: the wall time per round of a trivial kernel crossing both ways, with semaphores
   and with the host waits used today.
"""

from __future__ import annotations

import ctypes
import json
import statistics
import sys
import time
from typing import Any

import click
import numpy as np

from fusec.files import atomic_write

CL_SEMAPHORE_TYPE_KHR = 0x203D
CL_SEMAPHORE_TYPE_BINARY_KHR = 1
CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR = 0x203F
CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR = 0
CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR = 0x2055
CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR = 0x2053
CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD = 1
HANDLE_DESC_BYTES = 96  # CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC: type, union {fd, ...}, flags, reserved
PARAMS_BYTES = 144  # CUDA_EXTERNAL_SEMAPHORE_{SIGNAL,WAIT}_PARAMS; zero for a binary semaphore

KERNEL = """__kernel void add_one(__global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = x[i] + 1.0f;
}"""


class Semaphores:
    """The OpenCL and CUDA entry points, and the semaphores made with them."""

    def __init__(self, device: Any) -> None:
        import pyopencl as cl

        from fusec.runtime.cuda_interop import opencl_library

        lib = opencl_library()
        lookup = lib.clGetExtensionFunctionAddressForPlatform
        lookup.restype = ctypes.c_void_p
        platform = ctypes.c_void_p(device.device.platform.int_ptr)

        def function(name: str, restype: Any, *argtypes: Any) -> Any:
            address = lookup(platform, name.encode())
            if not address:
                raise RuntimeError(f"{name} not found")
            return ctypes.CFUNCTYPE(restype, *argtypes)(address)

        self.create = function("clCreateSemaphoreWithPropertiesKHR", ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.POINTER(ctypes.c_ulonglong),
                               ctypes.POINTER(ctypes.c_int))
        self.handle = function("clGetSemaphoreHandleForTypeKHR", ctypes.c_int, ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p,
                               ctypes.c_void_p)
        enqueue = (ctypes.c_int, ctypes.c_void_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                   ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p)
        self.wait_cl = function("clEnqueueWaitSemaphoresKHR", *enqueue)
        self.signal_cl = function("clEnqueueSignalSemaphoresKHR", *enqueue)
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.device = device
        self.context = ctypes.c_void_p(device.context.int_ptr)
        self.cl = cl

    def handle_types(self) -> dict[str, Any]:
        """The semaphore types and handle types the platform and device list."""
        from fusec.runtime.cuda_interop import opencl_library

        lib = opencl_library()
        found: dict[str, Any] = {}
        queries = (("platform_import", lib.clGetPlatformInfo, self.device.device.platform, 0x2037),
                   ("platform_export", lib.clGetPlatformInfo, self.device.device.platform, 0x2038),
                   ("device_types", lib.clGetDeviceInfo, self.device.device, 0x204C),
                   ("device_import", lib.clGetDeviceInfo, self.device.device, 0x204D),
                   ("device_export", lib.clGetDeviceInfo, self.device.device, 0x204E))
        for name, query, obj, param in queries:
            size = ctypes.c_size_t()
            status = query(ctypes.c_void_p(obj.int_ptr), ctypes.c_uint(param), ctypes.c_size_t(0),
                           None, ctypes.byref(size))
            if status != 0:
                found[name] = f"CL error {status}"
                continue
            values = (ctypes.c_uint * max(1, size.value // 4))()
            query(ctypes.c_void_p(obj.int_ptr), ctypes.c_uint(param), size, values, None)
            found[name] = [hex(v) for v in values[:size.value // 4]]
        return found

    def variants(self) -> dict[str, str]:
        """Which property lists clCreateSemaphoreWithPropertiesKHR takes."""
        device = self.device.device.int_ptr
        lists = {
            "binary": [CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, 0],
            "binary+device": [CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                              CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, device, 0, 0],
            "binary+export": self.export_props(False),
            "binary+device+export": self.export_props(True),
        }
        result = {}
        for name, values in lists.items():
            status = ctypes.c_int()
            sema = self.create(self.context, (ctypes.c_ulonglong * len(values))(*values),
                               ctypes.byref(status))
            result[name] = "ok" if status.value == 0 and sema else f"CL error {status.value}"
        return result

    def export_props(self, with_device: bool) -> list[int]:
        device = ([CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR, self.device.device.int_ptr, 0]
                  if with_device else [])
        return [CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, *device,
                CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
                CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR, 0]

    def make(self) -> tuple[ctypes.c_void_p, ctypes.c_void_p]:
        """One binary semaphore: (OpenCL's handle, CUDA's external semaphore)."""
        status = ctypes.c_int()
        sema = None
        for with_device in (False, True):
            values = self.export_props(with_device)
            sema = self.create(self.context, (ctypes.c_ulonglong * len(values))(*values),
                               ctypes.byref(status))
            if status.value == 0 and sema:
                break
        if status.value != 0 or not sema:
            raise RuntimeError(f"clCreateSemaphoreWithPropertiesKHR: CL error {status.value}")
        fd = ctypes.c_int(-1)
        check_cl(self.handle(ctypes.c_void_p(sema), ctypes.c_void_p(self.device.device.int_ptr),
                             CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, ctypes.sizeof(fd),
                             ctypes.byref(fd), None), "clGetSemaphoreHandleForTypeKHR")
        desc = (ctypes.c_ubyte * HANDLE_DESC_BYTES)()
        ctypes.c_int.from_buffer(desc, 0).value = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD
        ctypes.c_int.from_buffer(desc, 8).value = fd.value
        external = ctypes.c_void_p()
        check_cu(self.cuda.cuImportExternalSemaphore(ctypes.byref(external), ctypes.byref(desc)),
                 "cuImportExternalSemaphore")
        return ctypes.c_void_p(sema), external

    def cl_wait(self, queue: Any, sema: ctypes.c_void_p) -> None:
        semas = (ctypes.c_void_p * 1)(sema.value)
        check_cl(self.wait_cl(ctypes.c_void_p(queue.int_ptr), 1, semas, None, 0, None, None),
                 "clEnqueueWaitSemaphoresKHR")

    def cl_signal(self, queue: Any, sema: ctypes.c_void_p) -> None:
        semas = (ctypes.c_void_p * 1)(sema.value)
        check_cl(self.signal_cl(ctypes.c_void_p(queue.int_ptr), 1, semas, None, 0, None, None),
                 "clEnqueueSignalSemaphoresKHR")

    def cuda_signal(self, external: ctypes.c_void_p, stream: int) -> None:
        params = (ctypes.c_ubyte * PARAMS_BYTES)()
        semas = (ctypes.c_void_p * 1)(external.value)
        check_cu(self.cuda.cuSignalExternalSemaphoresAsync(semas, ctypes.byref(params), 1,
                                                            ctypes.c_void_p(stream)),
                 "cuSignalExternalSemaphoresAsync")

    def cuda_wait(self, external: ctypes.c_void_p, stream: int) -> None:
        params = (ctypes.c_ubyte * PARAMS_BYTES)()
        semas = (ctypes.c_void_p * 1)(external.value)
        check_cu(self.cuda.cuWaitExternalSemaphoresAsync(semas, ctypes.byref(params), 1,
                                                          ctypes.c_void_p(stream)),
                 "cuWaitExternalSemaphoresAsync")


def check_cl(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what}: CL error {status}")


def check_cu(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what}: CUDA error {status}")


def step(report: dict, name: str, fn: Any) -> Any:
    try:
        result = fn()
    except Exception as e:  # a probe reports each failure and goes on
        report[name] = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
        return None
    report[name] = result
    return result


@click.command()
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None,
              help="also write the report to this file")
@click.option("--rounds", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="rounds of the ordering check")
def main(json_out: str | None, rounds: int) -> None:
    """Probe OpenCL/CUDA semaphores on the GPU machine (see the module docstring)."""
    import pyopencl as cl
    import torch

    from fusec.runtime.cuda_interop import enable_cuda_sharing, to_torch
    from fusec.runtime.device import select_device
    from fusec.runtime.device_array import device_queue, empty

    report: dict[str, Any] = {}
    device = select_device("gpu")
    extensions = device.device.extensions.split()
    report["device"] = device.description
    report["extensions"] = {
        "count": len(extensions),
        "relevant": sorted(e for e in extensions
                           if any(w in e for w in ("semaphore", "command_buffer", "external")))}
    enable_cuda_sharing(device)
    queue = device_queue(device).queue
    api = step(report, "entry_points", lambda: Semaphores(device))
    if api is None:
        finish(report, json_out)
        return
    step(report, "handle_types", api.handle_types)
    step(report, "property_lists", api.variants)
    made = step(report, "semaphores", lambda: {"status": "ok", "pairs": [api.make(), api.make()]})
    if made is None:
        finish(report, json_out)
        return
    (in_cl, in_cu), (out_cl, out_cu) = made.pop("pairs")
    n = 1 << 20
    x, y = empty(device, (n,), np.float32), empty(device, (n,), np.float32)
    xt, yt = to_torch(x), to_torch(y)
    kernel = cl.Program(device.context, KERNEL).build().add_one
    stream = torch.cuda.current_stream().cuda_stream

    def rounds_of(with_semaphores: bool) -> dict:
        torch.cuda.synchronize()
        queue.finish()
        results = []
        for r in range(rounds):
            torch.cuda._sleep(20_000_000)  # about 10 ms of GPU time before the fill
            xt.fill_(float(r))
            if with_semaphores:
                api.cuda_signal(in_cu, stream)
                api.cl_wait(queue, in_cl)
            kernel(queue, (n,), None, x.buffer, y.buffer)
            if with_semaphores:
                api.cl_signal(queue, out_cl)
                queue.flush()
                api.cuda_wait(out_cu, stream)
            results.append(yt[n - 1:].clone())
        torch.cuda.synchronize()
        queue.finish()
        got = [float(t.item()) for t in results]
        wrong = [r for r, v in enumerate(got) if v != r + 1.0]
        return {"rounds": rounds, "wrong_rounds": len(wrong), "first_values": got[:5]}

    step(report, "ordering", lambda: {"with_semaphores": rounds_of(True),
                                      "control_without": rounds_of(False)})

    def cost() -> dict:
        small = 1024

        def timed(crossing: Any) -> float:
            samples = []
            for _ in range(5):
                torch.cuda.synchronize()
                queue.finish()
                start = time.perf_counter()
                for _ in range(100):
                    crossing()
                torch.cuda.synchronize()
                queue.finish()
                samples.append((time.perf_counter() - start) / 100 * 1e3)
            return round(statistics.median(samples), 4)

        def with_semaphores() -> None:
            xt[:small].add_(1.0)
            api.cuda_signal(in_cu, stream)
            api.cl_wait(queue, in_cl)
            kernel(queue, (small,), None, x.buffer, y.buffer)
            api.cl_signal(queue, out_cl)
            queue.flush()
            api.cuda_wait(out_cu, stream)

        def host_waits() -> None:
            xt[:small].add_(1.0)
            torch.cuda.current_stream().synchronize()
            kernel(queue, (small,), None, x.buffer, y.buffer)
            queue.finish()

        return {"ms_per_round_semaphores": timed(with_semaphores),
                "ms_per_round_host_waits": timed(host_waits)}

    step(report, "cost", cost)
    finish(report, json_out)


def finish(report: dict, json_out: str | None) -> None:
    text = json.dumps(report, indent=1, default=str)
    print(text)
    if json_out:
        atomic_write(json_out, text + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
