"""The ``wgmma`` GEMM split along K at batch 1: each product of the batch-1 models (`SHAPES`:
rows x N x K) timed whole and in each number of parts that divides K into whole 64-deep steps,
against cuBLAS through ``torch.nn.functional.linear`` (B ``[N, K]``, as ``nn.Linear`` holds
it) in the same process. Each figure is the median over `--repeat` calls of the kernels' device
time: fusec's from OpenCL profiling events, torch's from ``torch.profiler``. Every fusec result
is checked against numpy first. The variants (``--variants``, each a column ``<variant><N>_ms``
for N parts):

- ``split``: two launches, the parts' float32 products then their sum
  (`template_ops.whole_tile_split` forced, the knob `wgmma_sum_parts` off);
- ``short``: the same in 64-row blocks (the knob `wgmma_short_blocks`: `gemm_wgmma.block_m_for`);
- ``sum``: one launch, the parts summed in the kernel (`gemm_wgmma.parts_for` forced);
- ``ssum``: the same in 64-row blocks.

    python3 -m fusec.bench.split_k_sweep [--variants split,sum,ssum] [--repeat N] [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

import fusec
from fusec import knobs
from fusec.bench.wgmma_blocks import MATMUL, checked_kernel_ms
from fusec.bench.wgmma_blocks import SHAPES as BLOCK_SHAPES
from fusec.codegen.kernels import gemm_wgmma
from fusec.lowering import template_ops

SHAPES = {
    "gpt2_b1": BLOCK_SHAPES["gpt2_b1"],
    "llama_b1": [(128, 2560, 2048), (128, 2048, 2048), (128, 11264, 2048), (128, 2048, 5632)],
    "bert_b1_s512": BLOCK_SHAPES["bert_b1_s512"],
}
"""Rows x N x K of the batch-1 products (the Llama-style model's gate and up as one)."""


VARIANTS = {"split": (False, False), "short": (False, True), "sum": (True, False),
            "ssum": (True, True)}
"""Each variant: (the parts summed in the kernel, 64-row blocks)."""


def fusec_ms(m: int, n: int, k: int, dtype: str, parts: int, repeat: int,
             short: bool = False, in_kernel: bool = False) -> tuple[float, float]:
    """(median ms of the product's kernels in `parts` parts along K, max error / max |C|);
    `short`: with the knob `wgmma_short_blocks` on; `in_kernel`: the parts summed in the
    kernel (else by a second launch)."""
    text = (MATMUL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
            .replace("T", dtype))
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    split, summed = template_ops.whole_tile_split, gemm_wgmma.parts_for
    template_ops.whole_tile_split = lambda options, outputs, depth: 1 if in_kernel else parts
    gemm_wgmma.parts_for = lambda *shape: parts if in_kernel else 1
    try:
        with knobs.overridden(wgmma_split_k=True, wgmma_short_blocks=short,
                              wgmma_sum_parts=in_kernel):
            exe = fusec.compile(text, device="gpu", params={"b": b})
    finally:
        template_ops.whole_tile_split, gemm_wgmma.parts_for = split, summed
    return checked_kernel_ms(exe, a, b, repeat)


def torch_ms(m: int, n: int, k: int, dtype: str, repeat: int) -> float:
    """The median device time of ``F.linear(x [M, K], w [N, K])`` (cuBLAS)."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    t = torch.float16 if dtype == "f16" else torch.bfloat16
    x = torch.randn(m, k, device="cuda", dtype=t)
    w = torch.randn(n, k, device="cuda", dtype=t)
    for _ in range(3):
        torch.nn.functional.linear(x, w)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            torch.nn.functional.linear(x, w)
            torch.cuda.synchronize()
        times.append(sum(e.device_time for e in prof.events()
                         if e.device_type == DeviceType.CUDA) / 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="f16", choices=["f16"],
                        help="the operands' type (f16: the check reads C as float16)")
    parser.add_argument("--variants", default="split,sum,ssum",
                        help=f"comma-separated, of {', '.join(VARIANTS)} (the module's doc)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    rows = []
    for model, shapes in SHAPES.items():
        for m, n, k in shapes:
            row = {"model": model, "m": m, "n": n, "k": k, "dtype": args.dtype,
                   "cublas_ms": round(torch_ms(m, n, k, args.dtype, args.repeat), 4)}
            steps = k // 64
            for label in variants:
                in_kernel, short = VARIANTS[label]
                counts = (1, 2, 3, 4, 6, 8) if in_kernel else (1, 2, 3, 4, 6, 8, 12)
                for parts in (p for p in counts if steps % p == 0
                              and (p == 1 or steps // p >= (2 if in_kernel else 1))):
                    if in_kernel and parts == 1:
                        continue  # the same kernel as split1 (short1)
                    ms, error = fusec_ms(m, n, k, args.dtype, parts, args.repeat, short,
                                         in_kernel)
                    row[f"{label}{parts}_ms"] = round(ms, 4)
                    row[f"{label}{parts}_error"] = error
            timed = {key: v for key, v in row.items()
                     if key.startswith(tuple(VARIANTS)) and key.endswith("_ms")}
            best = min((v, key) for key, v in timed.items())
            row["best"] = best[1]
            rows.append(row)
            cells = "  ".join(f"{key[:-3]}:{v:.4f}" for key, v in timed.items())
            print(f"{model:13} {m}x{n}x{k:<6} cuBLAS {row['cublas_ms']:.4f}  {cells}  "
                  f"best/cuBLAS {best[0] / row['cublas_ms']:.2f}", flush=True)
            if args.json_out:
                with open(args.json_out, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
