"""Can fusec's kernels run in PyTorch's own CUDA context? A probe for the GPU machine.

    python -m fusec.bench.probe_cuda_launch [--model bert] [--batch 32] [--dtype f16]

NVIDIA's OpenCL compiles a program to PTX (its program binary). This probe compiles a model's
partition through the backend as usual, takes that PTX, loads it with the CUDA driver
(``cuModuleLoadDataEx``) into the context PyTorch uses, mirrors every buffer of the
executable in memory PyTorch allocates (bound weights and intermediates; the inputs of one
call), and launches the plan's kernels with ``cuLaunchKernel`` on PyTorch's current stream:
then the outputs are compared with the OpenCL run's, and the launches are timed as they are
and captured into a CUDA graph (``torch.cuda.CUDAGraph``) and replayed. Each kernel that does
not load or launch is reported with the driver's message. It measured what a CUDA launch path
would give (issue 29: one context, no hand-over between two APIs, graph replay at batch 1).

On the H200 (2026-12-02, bench/results/h200-2026-12-02-s14-probe-cuda-launch.log, BERT-base
f16 at batch 1): the PTX (``.target sm_90a``) loaded into PyTorch's context; each entry's
parameters are the plan's buffers, one ``.u64`` global pointer each, nothing hidden; the first
GEMM (``main_gemm_4``, a ``wgmma`` kernel) met an illegal address, with and without the
dynamic shared memory OpenCL gives the kernel beyond its static declarations. The cause was
the ``%envreg`` registers the PTX reads, which NVIDIA's OpenCL driver fills before a launch
and a CUDA launch leaves undefined: read as 0, every kernel of BERT-base (B=1 and 32), GPT-2
small and the Llama-style model ran, outputs equal to OpenCL's bit for bit
(bench/results/h200-2026-12-02-s15-probe-cuda-launch.log). The backend launches so since
(`fusec.runtime.cuda_launch`); this probe stays as the check of a new driver.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import statistics
import sys
import time
from typing import Any

import numpy as np

def main(argv: list[str] | None = None) -> int:
    import torch

    from fusec.bench.torch_models import DTYPES, build
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime.cuda_driver import CudaDriver, block_for, module_ptx
    from fusec.runtime.errors import DeviceError

    parser = argparse.ArgumentParser(prog="python -m fusec.bench.probe_cuda_launch",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bert", choices=["bert", "gpt2", "llama"])
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--dtype", default="f16", choices=sorted(DTYPES))
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("probe_cuda_launch: error: PyTorch has no CUDA device here (this probe is for "
              "the GPU machine: sh bench/gpu.sh cuda-launch)", file=sys.stderr)
        return 2
    report: dict[str, Any] = {"model": args.model, "dtype": args.dtype}
    model, kwargs, text = build(args.model, None, getattr(torch, DTYPES[args.dtype]), "cuda",
                                args.batch, None)
    report["summary"] = text
    fn = torch.compile(model, backend="fusec", options={"device": "gpu"})
    with torch.inference_mode(), recorded_partitions() as calls:
        fn(**kwargs)
    part, part_args = max(calls, key=lambda c: len(c[0].exe.plan.launches))
    exe = part.exe
    host = [a.get() for a in part.bridge.to_fusec(
        [part_args[i] for i in range(len(part_args)) if i not in part.bound])]
    expected = [np.array(o) for o in exe(*host)]  # a call with host arrays: its buffers made
    exe.synchronize()
    binaries = exe.program.binaries
    ptx = binaries[0]
    report["ptx_bytes"] = len(ptx)
    text_ptx = ptx.decode(errors="replace")
    report["ptx_head"] = text_ptx[:600]
    report["envreg_lines"] = sorted(set(re.findall(r"%envreg\d+", text_ptx)))
    report["shared_decls"] = sorted(set(re.findall(r"\.(?:extern )?\.?shared \.align[^;\n]*",
                                                   text_ptx)))[:12]
    entries = re.findall(r"\.entry\s+(\w+)\s*\((.*?)\)", text_ptx, re.S)
    report["entries"] = {name: " ".join(params.split())[:400] for name, params in entries[:4]}
    report["launch_buffers"] = [(launch.kernel, len(launch.buffers), launch.global_size,
                                 launch.local_size) for launch in exe.plan.launches[:4]]
    print(json.dumps(report, indent=1), flush=True)
    cuda = CudaDriver()
    torch.cuda.synchronize()
    try:
        module = cuda.load(module_ptx(ptx))  # every %envreg read as 0 (cuda_driver)
    except DeviceError as e:
        report["load_error"] = str(e)
        print(json.dumps(report, indent=1))
        return 1
    import pyopencl as cl

    mirrors: dict[int, Any] = {}
    for index, spec in enumerate(exe.plan.buffers):
        buffer = exe.buffers[index]
        nbytes = max(1, buffer.size if buffer is not None else spec.nbytes)
        data = np.zeros(nbytes, np.uint8)
        if buffer is not None:
            cl.enqueue_copy(exe.queue, data, buffer, is_blocking=True)
        mirrors[index] = torch.from_numpy(data).cuda()
    launches = []
    errors = []
    for index, launch in enumerate(exe.plan.launches):
        local = exe.kernels[index].get_work_group_info(
            cl.kernel_work_group_info.LOCAL_MEM_SIZE, exe.device.device)
        try:  # the __local memory beyond the PTX's static declarations: dynamic shared
            function = cuda.function(module, launch.kernel, local)
        except DeviceError as e:
            errors.append(str(e))
            continue
        grid, block = block_for(launch.global_size, launch.local_size, function.max_threads)
        pointers = [ctypes.c_uint64(mirrors[b].data_ptr()) for b in launch.buffers]
        params = (ctypes.c_void_p * max(1, len(pointers)))(
            *[ctypes.cast(ctypes.byref(p), ctypes.c_void_p) for p in pointers])
        launches.append((launch.kernel, function.handle, (grid, block), params, pointers,
                         function.dynamic_shared))
    report["kernels"] = len(exe.plan.launches)
    report["function_errors"] = errors[:5]
    if errors:
        print(json.dumps(report, indent=1))
        return 1
    stream = torch.cuda.current_stream()

    def run() -> list[str]:
        failed = []
        for name, function, (grid, block), params, _, dynamic in launches:
            status = cuda.lib.cuLaunchKernel(function, *grid, *block, dynamic,
                                             ctypes.c_void_p(stream.cuda_stream), params, None)
            if status:
                failed.append(f"{name}: {cuda.message(status)}")
        return failed

    for name, function, (grid, block), params, _, dynamic in launches:  # one by one, to name it
        status = cuda.lib.cuLaunchKernel(function, *grid, *block, dynamic,
                                         ctypes.c_void_p(stream.cuda_stream), params, None)
        status = status or cuda.lib.cuStreamSynchronize(ctypes.c_void_p(stream.cuda_stream))
        if status:
            report["first_failing_kernel"] = (f"{name}: {cuda.message(status)}; grid {grid}, "
                                              f"block {block}, dynamic shared {dynamic} B")
            print(json.dumps(report, indent=1), flush=True)
            return 1
    failed = run()
    torch.cuda.synchronize()
    report["launch_errors"] = failed[:5]
    outputs = []
    for port, want in zip(exe.outputs, expected, strict=True):
        got = mirrors[port.spec.buffer][:want.nbytes].cpu().numpy().view(want.dtype)
        got = got.reshape(want.shape)
        outputs.append(float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
    report["max_abs_diff_vs_opencl"] = outputs
    report["dynamic_shared_bytes"] = sorted({s for *_, s in launches})[-3:]

    def timed(call: Any, sync: Any = torch.cuda.synchronize) -> float:
        samples = []
        for _ in range(5):
            sync()
            start = time.perf_counter()
            for _ in range(args.repeat):
                call()
            sync()
            samples.append((time.perf_counter() - start) / args.repeat * 1e3)
        return round(statistics.median(samples), 4)

    report["cuda_launch_ms"] = timed(run)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            stream = torch.cuda.current_stream()
            run()
        report["graph_replay_ms"] = timed(graph.replay)
    except Exception as e:  # noqa: BLE001 - reported
        report["graph_error"] = f"{type(e).__name__}: {e}"[:300]
    device_arrays = part.bridge.to_fusec(
        [part_args[i] for i in range(len(part_args)) if i not in part.bound])
    report["opencl_executable_ms"] = timed(lambda: exe(*device_arrays), exe.synchronize)
    with torch.inference_mode():
        report["backend_call_ms"] = timed(lambda: fn(**kwargs))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
