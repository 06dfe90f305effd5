"""Blockings of the pipelined FFMA (float32, no TF32) GEMM on the GPU, against cuBLAS through
torch, in one process.

    python3 -m fusec.bench.ffma_sweep [--shape MxNxK ...] [--repeat 20] VARIANT...

A VARIANT is ``BM,BN,BK,WM,WN,LM,STAGES[,gG][,rR][,SCHEDULE]`` (`gemm_ffma_pipelined` with
those `FfmaTiles`; ``gG``: ``group_m=G``; ``rR``: built with ``-cl-nv-maxrregcount=R``;
SCHEDULE: ``a``, ``b`` or ``b_carry``, `FfmaTiles.schedule`, default ``b``; ``k``: B read
``[N, K]``, the kernel's ``b_k_major``), ``default`` or ``default,k`` (its default tiles), ``tf32``,
``tf32x3`` or ``tf32x3r`` (`gemm_wgmma` on TF32 in 128-wide blocks, B ``[N, K]``: plain, or
split into high and low parts for float32 accuracy, its ``split_tf32``; ``tf32x3r`` B
``[K, N]`` as stored, written K-major by the kernel's pass, its ``b_rows``; Hopper),
``portable`` (the local-memory kernel `gemm` used before, with its GPU tiles for that size) or
``auto`` (what `gemm` now picks on this device). Per shape (default 4096x4096x4096), torch's
float32 matmul with TF32 off is timed by CUDA events; each variant is built
(``-cl-nv-verbose``: ptxas's register and spill counts are printed), checked once against
torch's product of the same inputs (max error relative to max |C|; NaN if an element is left
unwritten) and timed by OpenCL profiling events (median of ``--repeat`` launches after 3
warm-up launches). Prints one table row per shape and variant.
"""

from __future__ import annotations

import argparse
import re
import statistics

import numpy as np

from fusec.bench.tensor_core_sweep import torch_matmul_ms


def _reads_b_k_major(variant: str) -> bool:
    """Whether the variant's kernel reads B ``[N, K]`` (its flag ``k``; the ``wgmma``
    variants)."""
    return variant in ("tf32", "tf32x3") or "k" in variant.split(",")[1:]


WGMMA_VARIANTS = ("tf32", "tf32x3", "tf32x3r")


def _kernel(variant: str, m: int, n: int, k: int, info):
    from fusec.codegen.kernels.gemm import GPU_LARGE_TILES, GPU_TILES, gemm
    from fusec.codegen.kernels.gemm_ffma_pipelined import (
        DEFAULT_TILES,
        SCHEDULES,
        FfmaTiles,
        gemm_ffma_pipelined,
    )

    if variant == "portable":
        tiles = GPU_LARGE_TILES if m * n >= 2048 * 2048 else GPU_TILES
        return gemm("gemm", 1, m, n, k, False, tiles=tiles)
    if variant == "auto":
        return gemm("gemm", 1, m, n, k, False, device_info=info)
    if variant in WGMMA_VARIANTS:
        from fusec.codegen.kernels.gemm_wgmma import gemm_wgmma

        return gemm_wgmma("gemm", m, n, k, "f32", block_n=128, out_dtype="f32",
                          split_tf32=variant != "tf32", b_rows=variant == "tf32x3r")
    if variant.split(",")[0] == "default":
        tiles = DEFAULT_TILES
    else:
        fields = variant.split(",")
        groups = [int(f[1:]) for f in fields[7:] if f.startswith("g")]
        schedules = [f for f in fields[7:] if f in SCHEDULES]
        tiles = FfmaTiles(*map(int, fields[:7]), group_m=groups[0] if groups else 0,
                          **({"schedule": schedules[0]} if schedules else {}))
    return gemm_ffma_pipelined("gemm", 1, m, n, k, False, tiles=tiles,
                               b_k_major=_reads_b_k_major(variant))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--shape", action="append", help="MxNxK (repeatable)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--end-to-end", action="store_true",
                        help="first compile matmuls (and matmul+bias+GELU) with fusec.compile on "
                             "the GPU at ragged and whole shapes and check them against numpy")
    options = parser.parse_args()
    if options.end_to_end:
        end_to_end()

    import pyopencl as cl
    import torch

    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.runtime.device import select_device
    from fusec.runtime.errors import BuildError
    from fusec.runtime.program_cache import build_program

    torch.backends.cuda.matmul.allow_tf32 = False
    device = select_device("gpu")
    context, queue = device.context, device.queue
    info = DeviceInfo.from_device(device.device, tuned=False)
    rng = np.random.default_rng(0)
    rows = []
    print(f"device: {device.description}; torch {torch.__version__} "
          f"{torch.cuda.get_device_name(0)}; tensor cores probed: {info.tensor_cores}", flush=True)
    for shape in options.shape or ["4096x4096x4096"]:
        m, n, k = map(int, shape.split("x"))
        flops = 2.0 * m * n * k
        a32 = rng.standard_normal((m, k), dtype=np.float32)
        b32 = rng.standard_normal((k, n), dtype=np.float32)
        ta, tb = torch.from_numpy(a32).cuda(), torch.from_numpy(b32).cuda()
        ref = torch.matmul(ta.double(), tb.double())
        torch_out = torch.matmul(ta, tb)
        torch_error = float((torch_out.double() - ref).abs().max() / ref.abs().max())
        torch_ms = torch_matmul_ms(torch, ta, tb, options.repeat)
        rows.append((shape, "torch (cuBLAS, no TF32)", torch_ms, flops / torch_ms / 1e9, 1.0,
                     torch_error, ""))
        flags = cl.mem_flags
        buf_a = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a32)
        buf_b = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=b32)
        buf_bt = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                           hostbuf=np.ascontiguousarray(b32.T))
        buf_c = cl.Buffer(context, flags.READ_WRITE, m * n * 4)
        for variant in options.variants:
            try:
                kernel = _kernel(variant, m, n, k, info)
                limit = [f"-cl-nv-maxrregcount={f[1:]}" for f in variant.split(",")[7:]
                         if f.startswith("r")]
                if variant in WGMMA_VARIANTS:  # its wgmma comments patched into the PTX
                    program = build_program(context, device.device, kernel.source,
                                            kernel.build_options, disk_cache=False)
                else:
                    program = cl.Program(context, kernel.source).build(
                        options=["-cl-nv-verbose", *limit, *kernel.build_options])
            except (cl.Error, ValueError, BuildError) as error:
                print(f"{shape} {variant}: not built: {str(error)[:2000]}", flush=True)
                continue
            log = program.get_build_info(device.device, cl.program_build_info.LOG)
            regs = re.findall(r"Used (\d+) registers", log)
            spills = re.findall(r"(\d+) bytes spill stores", log)
            regs_text = f"{'/'.join(regs)} regs" + (
                f", spills {'/'.join(spills)} B" if any(s != "0" for s in spills) else "")
            knl = getattr(program, kernel.name)
            knl.set_args(buf_a, buf_bt if _reads_b_k_major(variant) else buf_b, buf_c)
            cl.enqueue_fill_buffer(queue, buf_c, np.uint32(0x7FC00000), 0, m * n * 4)
            cl.enqueue_nd_range_kernel(queue, knl, kernel.global_size, kernel.local_size).wait()
            out = np.empty((m, n), dtype=np.float32)
            cl.enqueue_copy(queue, out, buf_c).wait()
            got = torch.from_numpy(out).cuda().double()
            error = float((got - ref).abs().max() / ref.abs().max())
            for _ in range(3):
                cl.enqueue_nd_range_kernel(queue, knl, kernel.global_size, kernel.local_size)
            queue.finish()
            times = []
            for _ in range(options.repeat):
                event = cl.enqueue_nd_range_kernel(queue, knl, kernel.global_size,
                                                   kernel.local_size)
                event.wait()
                times.append((event.profile.end - event.profile.start) * 1e-6)
            ms = statistics.median(times)
            label = variant
            if variant == "auto":
                label += " = " + kernel.source.splitlines()[0].split(", ", 2)[-1][:60]
            rows.append((shape, label, ms, flops / ms / 1e9, ms / torch_ms, error, regs_text))
            print(f"{shape} {label}: {ms:.3f} ms ({ms / torch_ms:.2f}x torch), error "
                  f"{error:.1e}, {regs_text}", flush=True)
    print("\n| shape MxNxK | variant | kernel ms | TFLOP/s | / cuBLAS | max err / max|C| "
          "| ptxas |")
    print("|---|---|---|---|---|---|---|")
    for shape, name, ms, tflops, ratio, error, regs_text in rows:
        print(f"| {shape} | {name} | {ms:.3f} | {tflops:.1f} | {ratio:.2f}x | {error:.1e} "
              f"| {regs_text} |")


END_TO_END = [  # (m, k, n, epilogue): 1, 17, 1000, 4097 and K or N not multiples of 4
    (1, 4096, 8, False), (17, 1000, 4096, False), (4097, 16, 1000, False),
    (1000, 4096, 4100, False), (1000, 4097, 1, False), (17, 17, 17, False),
    (4097, 1000, 4097, False), (4096, 4096, 4096, False), (33, 100, 36, True),
    (4097, 3072, 768, True), (1000, 768, 3072, True), (4096, 768, 2304, True),
]


def end_to_end(device: str = "gpu", shapes=END_TO_END) -> None:
    """fusec.compile(device="gpu") of ``a @ b`` (or ``gelu(a @ b + bias)``) at `END_TO_END`
    against float64 numpy; prints which GEMM kernel each got and fails loudly (exit 1) if one
    is off by more than 1e-5 of max |C|."""
    import fusec
    from fusec.bench.workloads import matmul_bias_gelu, sgemm
    from fusec.reference.ops import gelu

    rng = np.random.default_rng(1)
    bad = 0
    for m, k, n, epilogue in shapes:
        program = matmul_bias_gelu(m, k, n) if epilogue else sgemm(m, k, n)
        exe = fusec.compile(program.text(), device=device)
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = (rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
        args = [a, b]
        expected = a.astype(np.float64) @ b.astype(np.float64)
        if epilogue:
            bias = rng.standard_normal(n, dtype=np.float32)
            args.append(bias)
            expected = gelu(expected + bias)
        got = exe(*args)
        got = np.asarray(got[0] if isinstance(got, (tuple, list)) else got)
        error = float(np.abs(got - expected).max() / np.abs(expected).max())
        kernels = [line[line.index("@"):][:100] for line in exe.plan.source.splitlines()
                   if line.startswith("// ") and "@" in line]
        ok = error <= 1e-5
        bad += not ok
        print(f"e2e M={m} K={k} N={n}{' +bias+gelu' if epilogue else ''}: error {error:.1e} "
              f"{'ok' if ok else 'FAILED'}; {'; '.join(kernels)}", flush=True)
    if bad:
        raise SystemExit(f"{bad} end-to-end checks failed")


if __name__ == "__main__":
    main()
