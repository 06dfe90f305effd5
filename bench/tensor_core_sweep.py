"""Blockings of the tensor-core GEMM on the GPU, against torch, in one process.

    python3 -m fusec.bench.tensor_core_sweep [--size 4096] [--repeat 20] VARIANT...

A VARIANT is ``DTYPE:BM,BN,WM,WN,STAGES[,late][,gG]`` (the pipelined kernel,
`gemm_mma_pipelined`, with those `PipelineTiles`; ``late``: no fragment prefetch; ``gG``:
``group_m=G``), ``DTYPE:default`` (its default tiles) or ``DTYPE:staged`` (the
register-staged kernel, `gemm_mma.gemm_mma`); DTYPE is f16, bf16 or f32 (TF32 products;
torch with ``allow_tf32``). Each variant is built, checked once against torch's float32
product of the same inputs (max error relative to max |C|), then timed by OpenCL profiling
events (median of ``--repeat`` launches after 3 warm-up launches); torch's matmul of the same
dtype is timed by CUDA events in the same process. Prints one
table row per variant: kernel ms, TFLOP/s, ratio to torch. A variant that fails to build prints
the start of the build log and the sweep goes on.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np


def torch_matmul_ms(torch, a, b, repeat: int) -> float:
    """Median CUDA-event milliseconds of ``torch.matmul(a, b)`` over `repeat` runs, after 3."""
    for _ in range(3):
        torch.matmul(a, b)
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--ptx-dir", help="write each variant's program binary (PTX) here")
    options = parser.parse_args()

    import pyopencl as cl
    import torch

    from fusec.codegen.kernels.gemm_mma import gemm_mma
    from fusec.codegen.kernels.gemm_mma_pipelined import (
        DEFAULT_TILES,
        PipelineTiles,
        gemm_mma_pipelined,
    )
    from fusec.runtime.device import select_device

    device = select_device("gpu")
    context, queue = device.context, device.queue
    size = options.size
    flops = 2.0 * size ** 3
    rng = np.random.default_rng(0)
    inputs: dict[str, tuple] = {}
    rows = []
    print(f"device: {device.description}; torch {torch.__version__} "
          f"{torch.cuda.get_device_name(0)}; {size}^3", flush=True)
    for variant in options.variants:
        dtype, _, blocking = variant.partition(":")
        torch_dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dtype]
        elem = 4 if dtype == "f32" else 2
        if dtype not in inputs:
            a32 = rng.standard_normal((size, size), dtype=np.float32)
            b32 = rng.standard_normal((size, size), dtype=np.float32)
            ta = torch.from_numpy(a32).cuda().to(torch_dtype)
            tb = torch.from_numpy(b32).cuda().to(torch_dtype)
            bits = torch.int32 if dtype == "f32" else torch.int16
            host_a = ta.view(bits).cpu().numpy()
            host_b = tb.view(bits).cpu().numpy()
            torch.backends.cuda.matmul.allow_tf32 = False
            ref = torch.matmul(ta.float(), tb.float())
            flags = cl.mem_flags
            buf_a = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=host_a)
            buf_b = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=host_b)
            buf_c = cl.Buffer(context, flags.READ_WRITE, size * size * elem)
            torch.backends.cuda.matmul.allow_tf32 = dtype == "f32"
            torch_ms = torch_matmul_ms(torch, ta, tb, options.repeat)
            torch.backends.cuda.matmul.allow_tf32 = False
            inputs[dtype] = (buf_a, buf_b, buf_c, ref, torch_ms)
            label = f"torch {dtype}{' (tf32)' if elem == 4 else ''}"
            rows.append((label, torch_ms, flops / torch_ms / 1e9, 1.0, 0.0))
        buf_a, buf_b, buf_c, ref, torch_ms = inputs[dtype]
        if blocking == "staged":
            kernel = gemm_mma("gemm", 1, size, size, size, False, dtype=dtype)
        else:
            fields = blocking.split(",")
            groups = [int(f[1:]) for f in fields[5:] if f.startswith("g")]
            tiles = DEFAULT_TILES if blocking == "default" else PipelineTiles(
                *map(int, fields[:5]), fragment_prefetch="late" not in fields,
                group_m=groups[0] if groups else 0)
            kernel = gemm_mma_pipelined("gemm", 1, size, size, size, False, dtype=dtype,
                                        tiles=tiles)
        try:
            program = cl.Program(context, kernel.source).build()
        except cl.Error as error:
            print(f"{variant}: build failed: {str(error)[:3000]}", flush=True)
            continue
        if options.ptx_dir:
            import pathlib
            name = variant.replace(":", "_").replace(",", "_")
            pathlib.Path(options.ptx_dir, f"{name}.ptx").write_bytes(program.binaries[0])
        knl = program.gemm
        knl.set_args(buf_a, buf_b, buf_c)
        nan = np.uint32(0x7FC00000) if elem == 4 else np.uint16(0x7E00)
        cl.enqueue_fill_buffer(queue, buf_c, nan, 0, size * size * elem)
        cl.enqueue_nd_range_kernel(queue, knl, kernel.global_size, kernel.local_size).wait()
        out = np.empty((size, size), dtype=np.int32 if elem == 4 else np.int16)
        cl.enqueue_copy(queue, out, buf_c).wait()
        got = torch.from_numpy(out).cuda().view(torch_dtype).float()
        error = float((got - ref).abs().max() / ref.abs().max())  # NaN if any is unwritten
        for _ in range(3):
            cl.enqueue_nd_range_kernel(queue, knl, kernel.global_size, kernel.local_size)
        queue.finish()
        times = []
        for _ in range(options.repeat):
            event = cl.enqueue_nd_range_kernel(queue, knl, kernel.global_size, kernel.local_size)
            event.wait()
            times.append((event.profile.end - event.profile.start) * 1e-6)
        ms = statistics.median(times)
        rows.append((variant, ms, flops / ms / 1e9, ms / torch_ms, error))
        print(f"{variant}: {ms:.3f} ms, error {error:.2e}", flush=True)
    print("\n| variant | kernel ms | TFLOP/s | / torch | max err / max|C| |")
    print("|---|---|---|---|---|")
    for name, ms, tflops, ratio, error in rows:
        print(f"| {name} | {ms:.3f} | {tflops:.0f} | {ratio:.2f}x | {error:.1e} |")


if __name__ == "__main__":
    main()
