"""Work-group shapes of the skinny product (``codegen/kernels/gemm_skinny.py``, a decode step's
projections on a GPU), each checked and timed on the best OpenCL device, in one process, with
cuBLAS (``torch.matmul`` on CUDA) on the same shapes where PyTorch sees a GPU.

    python3 -m fusec.bench.skinny_sweep [--rows 1,8] [--dtype f16] [--repeat 20]

Per product (the projections of GPT-2 small and of a Llama-style model of width 2048, by default)
and shape ``group_n x group_k x columns``: built, run once and checked against numpy in float64
(max error relative to max |C|), then timed by OpenCL profiling events (median of ``--repeat``
launches after 3 warm-up ones). Prints one line per product with each shape's time and the
bandwidth of reading B once (GB/s), and cuBLAS's time by CUDA events.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from fusec.bench.tensor_core_sweep import torch_matmul_ms

PRODUCTS = {  # name: (K, N)
    "gpt2.qkv": (768, 2304), "gpt2.out": (768, 768), "gpt2.fc1": (768, 3072),
    "gpt2.fc2": (3072, 768), "gpt2.head": (768, 50257),
    "llama.qkv": (2048, 2560), "llama.out": (2048, 2048), "llama.up": (2048, 11264),
    "llama.down": (5632, 2048), "llama.head": (2048, 32000),
}

SHAPES = [(32, 32, 1), (32, 8, 2), (32, 8, 4), (32, 16, 2), (32, 32, 2), (16, 16, 2),
          (32, 32, 1, 4), (32, 16, 1, 4), (32, 16, 2, 4), (32, 8, 2, 4), (32, 8, 4, 4),
          (16, 32, 2, 4)]
"""(group_n, group_k, columns[, depth]) tried (`gemm_skinny.skinny_shape` chooses among
them)."""

K_MAJOR_SHAPES = [(8, 1), (8, 2), (4, 1), (4, 2), (8, 4), (16, 1), (4, 4), (2, 1)]
"""(warps, columns) of `gemm_skinny_k_major` tried, B stored ``[N, K]`` (`k_major_shape`
chooses among them)."""


def cublas_ms(rows: int, k: int, n: int, dtype: str, repeat: int) -> float | None:
    """torch.matmul's median time on CUDA by CUDA events, or None without a CUDA PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    kind = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dtype]
    a = torch.randn(rows, k, device="cuda", dtype=kind)
    b = torch.randn(k, n, device="cuda", dtype=kind)
    return torch_matmul_ms(torch, a, b, repeat)


def main() -> None:
    import pyopencl as cl

    from fusec.codegen.kernels.common import IDENTITY_EPILOGUE
    from fusec.codegen.kernels.gemm_skinny import gemm_skinny, gemm_skinny_k_major
    from fusec.dtypes import bf16_bits, bf16_to_f32
    from fusec.runtime.device import select_device

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1,8")
    parser.add_argument("--dtype", choices=("f16", "bf16", "f32"), default="f16")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--product", action="append", choices=tuple(PRODUCTS))
    parser.add_argument("--layout", choices=("both", "as-is", "k-major"), default="both",
                        help="B as it is ([K, N], gemm_skinny) or K-major ([N, K], "
                        "gemm_skinny_k_major)")
    options = parser.parse_args()
    opened = select_device("auto")
    context = opened.context
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    print(f"device: {opened.description}; {options.dtype}; shapes group_n x group_k x columns "
          "[x depth]",
          flush=True)
    flags = cl.mem_flags
    rng = np.random.default_rng(0)
    for rows in map(int, options.rows.split(",")):
        for name in options.product or PRODUCTS:
            k, n = PRODUCTS[name]
            a32 = rng.standard_normal((rows, k), dtype=np.float32)
            b32 = rng.standard_normal((k, n), dtype=np.float32)
            if options.dtype == "bf16":
                a, b = bf16_bits(a32), bf16_bits(b32)
                want = bf16_to_f32(a).astype(np.float64) @ bf16_to_f32(b).astype(np.float64)
            else:
                host = np.float16 if options.dtype == "f16" else np.float32
                a, b = a32.astype(host), b32.astype(host)
                want = a.astype(np.float64) @ b.astype(np.float64)
            buf_a = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=a)
            buf_b = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=b)
            out = np.empty((rows, n), np.float32)
            buf_c = cl.Buffer(context, flags.READ_WRITE, out.nbytes)
            buf_bt = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                               hostbuf=np.ascontiguousarray(b.T))
            variants = []
            if options.layout != "k-major":
                variants += [(shape, gemm_skinny, buf_b) for shape in SHAPES]
            if options.layout != "as-is":
                variants += [(shape, gemm_skinny_k_major, buf_bt) for shape in K_MAJOR_SHAPES]
            cells = []
            for shape, make, rhs in variants:
                try:
                    source = make("skinny", rows, n, k, IDENTITY_EPILOGUE, options.dtype, "f32",
                                  shape)
                except ValueError:  # more local memory than the kernel takes
                    continue
                kernel = cl.Program(context, source.source).build().skinny
                kernel.set_args(buf_a, rhs, buf_c)
                launch = (queue, kernel, source.global_size, source.local_size)
                cl.enqueue_nd_range_kernel(*launch)
                cl.enqueue_copy(queue, out, buf_c)
                error = float(np.abs(out - want).max() / max(np.abs(want).max(), 1.0))
                for _ in range(3):
                    cl.enqueue_nd_range_kernel(*launch)
                events = [cl.enqueue_nd_range_kernel(*launch) for _ in range(options.repeat)]
                queue.finish()
                ms = statistics.median((e.profile.end - e.profile.start) * 1e-6 for e in events)
                gbs = b.nbytes / ms * 1e-6
                flag = "" if error < 1e-2 else f" WRONG({error:.1e})"
                kind = "T" if make is gemm_skinny_k_major else ""
                cells.append(f"{kind}{'x'.join(map(str, shape))} {ms:.4f}ms {gbs:5.0f}GB/s{flag}")
            peer = cublas_ms(rows, k, n, options.dtype, options.repeat)
            cublas = f" | cuBLAS {peer:.4f}ms" if peer is not None else ""
            print(f"{rows} x {name} [{k}x{n}]: " + "; ".join(cells) + cublas, flush=True)


if __name__ == "__main__":
    main()
