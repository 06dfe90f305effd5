"""Micro-benchmark of the kernel templates on one OpenCL device (the CPU by default).

Prints, per kernel, the median kernel time over several launches measured with OpenCL profiling
events, the achieved GFLOP/s (GEMM, attention) or GB/s (norms, softmax: bytes read and written
once), and the same operation in numpy, timed in the same run, for a ratio on a noisy machine.

    python bench/kernels_cpu.py [--device cpu|gpu|auto] [--repeats 7] [--gemm-size 1024]
                                     [--autotune]

Figures seen (2026-11-20). CPU: Intel's OpenCL CPU runtime 2026.2 on 2 vCPUs of an AMD EPYC
(AVX2), shared with other engineers (load average about 7, so absolute rates are low and
noisy; numpy's SGEMM ran at 16-27 GFLOP/s in the same runs against 233 on a quiet machine):

| kernel | median | rate | numpy in the same run |
| --- | --- | --- | --- |
| sgemm 1024^3, 6x16v8_g16x1_rhs256 | 103-136 ms | 16-21 GFLOP/s | 0.8-1.3x our time |
| residual + layer_norm [512, 768] | 0.22 ms | 22 GB/s | 4.9x slower |
| residual + rms_norm [512, 768] | 0.15 ms | 31 GB/s | 4.0x slower |
| softmax [6144, 128] | 0.84 ms | 7.5 GB/s | 7.8x slower |
| attention B1 S128 H12 D64 | 2.1-9 ms | 6-24 GFLOP/s | 12x slower |

Per CPU-second (rusage around the launch) the SGEMM did 50-62 GFLOP, numpy 46-49.

GPU: one H200 through NVIDIA's OpenCL (driver 580): sgemm 4096^3 4.42 ms, 31.1 TFLOP/s
(autotuned 8x8v4_g16x16_both16; PyTorch float32 with TF32 off: 2.69 ms, 51.1 TFLOP/s, so 61%);
attention B32 S128 H12 D64 0.168 ms (9.6 TFLOP/s); the norm and softmax sizes above take
6-8 us there (launch-bound).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pyopencl as cl

from fusec.codegen.kernels.attention import attention
from fusec.codegen.kernels.common import DeviceInfo, KernelSource
from fusec.codegen.kernels.gemm import GemmTiles, default_gemm_tiles, gemm
from fusec.codegen.kernels.norm import layer_norm
from fusec.codegen.kernels.softmax import softmax
from fusec.codegen.kernels.tuning import autotune_gemm
from fusec.runtime.device import OpenCLDevice, select_device
from fusec.runtime.program_cache import get_program

Timing = tuple[float, float]
"""(median, minimum) of several runs, in seconds."""


def time_kernel(device: OpenCLDevice, kernel: KernelSource, arrays: dict[str, np.ndarray],
                repeats: int) -> Timing:
    """Kernel time in seconds (median, minimum) from profiling events after one warm-up."""
    program = get_program(device, kernel.source, kernel.build_options)
    flags = cl.mem_flags
    buffers = [
        cl.Buffer(device.context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=arrays[arg.name])
        for arg in kernel.args
    ]
    cl_kernel = cl.Kernel(program, kernel.name)
    cl_kernel.set_args(*buffers)
    times = []
    for _ in range(repeats + 1):
        event = cl.enqueue_nd_range_kernel(device.queue, cl_kernel, kernel.global_size,
                                           kernel.local_size)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-9)
    return float(np.median(times[1:])), min(times[1:])


def time_numpy(function: Callable[[], object], repeats: int) -> Timing:
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), min(times)


def report(label: str, timing: Timing, numpy_timing: Timing, amount: float, unit: str) -> None:
    """One line: median and best time and rate of the kernel, then numpy's, and the ratio."""
    (median, best), (numpy_median, numpy_best) = timing, numpy_timing
    print(f"{label:40s} median {median * 1e3:8.3f} ms {amount / median / 1e9:8.1f} {unit}"
          f" (best {best * 1e3:.3f} ms {amount / best / 1e9:.1f})   numpy median"
          f" {numpy_median * 1e3:.3f} ms (best {numpy_best * 1e3:.3f})"
          f"   numpy/fusec x{numpy_median / median:.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu", "auto"])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--gemm-size", type=int, default=1024)
    parser.add_argument("--autotune", action="store_true",
                        help="choose the GEMM tiles with the autotuner (cached per device)")
    options = parser.parse_args()
    device = select_device(options.device)
    info = DeviceInfo.from_device(device.device)
    print(f"device: {device.description}")
    rng = np.random.default_rng(0)
    repeats = options.repeats

    size = options.gemm_size
    tiles: GemmTiles = default_gemm_tiles(info, size, size)
    if options.autotune:
        tiles = autotune_gemm(device.context, device.queue, [(1, size, size, size, False)])
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    kernel = gemm("bench_gemm", 1, size, size, size, False, tiles=tiles, device_info=info)
    timing = time_kernel(device, kernel, {"lhs": a, "rhs": b, "out": np.empty_like(a)}, repeats)
    report(f"sgemm {size}^3 ({tiles.key()})", timing, time_numpy(lambda: a @ b, repeats),
           2.0 * size**3, "GFLOP/s")

    rows, cols = 512, 768
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    r = rng.standard_normal((rows, cols), dtype=np.float32)
    gamma = rng.standard_normal(cols, dtype=np.float32)
    beta = rng.standard_normal(cols, dtype=np.float32)

    def numpy_layer_norm() -> np.ndarray:
        v = x + r
        centred = v - v.mean(axis=-1, keepdims=True)
        return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + 1e-5) \
            * gamma + beta

    def numpy_rms_norm() -> np.ndarray:
        v = x + r
        return v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + 1e-6) * gamma

    arrays = {"x": x, "residual": r, "gamma": gamma, "beta": beta, "out": np.empty_like(x)}
    traffic = 3.0 * x.nbytes  # x and residual read, out written
    kernel = layer_norm("bench_layer_norm", rows, cols, 1e-5, residual=True, device_info=info)
    report(f"residual + layer_norm [{rows}, {cols}]", time_kernel(device, kernel, arrays, repeats),
           time_numpy(numpy_layer_norm, repeats), traffic, "GB/s")
    kernel = layer_norm("bench_rms_norm", rows, cols, 1e-6, residual=True, rms=True,
                        has_beta=False, device_info=info)
    report(f"residual + rms_norm [{rows}, {cols}]", time_kernel(device, kernel, arrays, repeats),
           time_numpy(numpy_rms_norm, repeats), traffic, "GB/s")

    rows, cols = 6144, 128
    logits = rng.standard_normal((rows, cols), dtype=np.float32)

    def numpy_softmax() -> np.ndarray:
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    kernel = softmax("bench_softmax", rows, cols, device_info=info)
    timing = time_kernel(device, kernel, {"x": logits, "out": np.empty_like(logits)}, repeats)
    report(f"softmax [{rows}, {cols}]", timing, time_numpy(numpy_softmax, repeats),
           2.0 * logits.nbytes, "GB/s")

    batch, seq, heads, dim = 1, 128, 12, 64
    q, k, v = (rng.standard_normal((batch, seq, heads * dim), dtype=np.float32)
               for _ in range(3))

    def numpy_attention() -> np.ndarray:
        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, seq, heads, dim).transpose(0, 2, 1, 3)

        scores = split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(dim)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        return (weights @ split(v)).transpose(0, 2, 1, 3).reshape(batch, seq, heads * dim)

    kernel = attention("bench_attention", batch, seq, seq, heads, dim, 1.0 / np.sqrt(dim))
    timing = time_kernel(device, kernel, {"q": q, "k": k, "v": v, "out": np.empty_like(q)},
                         repeats)
    report(f"attention B{batch} S{seq} H{heads} D{dim}", timing,
           time_numpy(numpy_attention, repeats), 4.0 * batch * heads * seq * seq * dim,
           "GFLOP/s")


if __name__ == "__main__":
    main()
