"""The ``wgmma`` GEMM's block widths on the GPU: each product of the whole-model benchmarks
(`SHAPES`: rows x N x K of GPT-2 small, BERT-base and the Llama-style model at their benchmark
batches, and at batch 1) timed in 128 x 256 blocks and in 128 x 128 blocks (the knob
`wgmma_narrow_blocks` off and on, the width forced through `block_n_for`'s weight), with the
width `block_n_for` picks, so that `NARROW_BLOCK_COST` and the rule can be set from what the
device does. Each row: median kernel time of `--repeat` profiled calls of a ``nn.matmul`` with
B bound (as a model's weight), checked against numpy first.

    python3 -m fusec.bench.wgmma_blocks --dtype f16 [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

import fusec
from fusec import knobs
from fusec.codegen.kernels import gemm_wgmma
from fusec.runtime.executable import Executable

SHAPES = {
    "gpt2_b16": [(2048, 2304, 768), (2048, 768, 768), (2048, 3072, 768), (2048, 768, 3072)],
    "bert_b32": [(4096, 768, 768), (4096, 3072, 768), (4096, 768, 3072)],
    "llama_b32": [(4096, 2560, 2048), (4096, 2048, 2048), (4096, 2048, 5632)],
    "gpt2_b1": [(128, 2304, 768), (128, 768, 768), (128, 3072, 768), (128, 768, 3072)],
    "bert_b1_s512": [(512, 768, 768), (512, 3072, 768), (512, 768, 3072)],
}

MATMUL = """func.func @f(%a: tensor<MxKxT>, %b: tensor<KxNxT>) -> tensor<MxNxT> {
  %y = nn.matmul %a, %b : tensor<MxKxT>, tensor<KxNxT> -> tensor<MxNxT>
  func.return %y : tensor<MxNxT>
}"""


def time_product(m: int, n: int, k: int, dtype: str, width: int | None,
                 repeat: int, device: str = "gpu") -> tuple[float, str, float]:
    """(median ms of the product's kernels, the block width its source names, max error of
    max |C|) with `width` forced (None: as `block_n_for` picks)."""
    text = (MATMUL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
            .replace("T", dtype))
    rng = np.random.default_rng(0)
    np_type = np.float16 if dtype == "f16" else np.float32
    a = rng.uniform(-1, 1, (m, k)).astype(np_type)
    b = rng.uniform(-1, 1, (k, n)).astype(np_type)
    cost = gemm_wgmma.NARROW_BLOCK_COST
    try:
        if width == 256:
            settings = {"wgmma_narrow_blocks": False}
        else:
            settings = {"wgmma_narrow_blocks": True}
            if width == 128:
                gemm_wgmma.NARROW_BLOCK_COST = 0.0  # the narrow block always wins
        with knobs.overridden(**settings):
            exe = fusec.compile(text, device=device, params={"b": b}, allow_tf32=dtype == "f32")
    finally:
        gemm_wgmma.NARROW_BLOCK_COST = cost
    source = exe.plan.source
    named = "128x128" if "128x128 blocks" in source else (
        "128x256" if "128x256 blocks" in source else "mma.sync")
    ms, error = checked_kernel_ms(exe, a, b, repeat)
    return ms, named, error


def checked_kernel_ms(exe: Executable, a: np.ndarray, b: np.ndarray, repeat: int
                      ) -> tuple[float, float]:
    """(median ms of the kernels of `repeat` profiled calls of `exe` on `a`, its product's max
    error over max |C| against ``a @ b`` in float32), after 3 calls to warm up."""
    x = exe.to_device(a)
    out = exe(x)
    c = (out[0] if isinstance(out, list | tuple) else out)
    c = np.asarray(c.get() if hasattr(c, "get") else c, np.float32)
    want = a.astype(np.float32) @ b.astype(np.float32)
    error = float(np.abs(c - want).max() / np.abs(want).max())
    for _ in range(3):
        exe(x)
    exe.synchronize()
    times = [sum(kt.seconds for kt in exe.profile(x)[1].kernels) * 1e3
             for _ in range(repeat)]
    return statistics.median(times), error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="f16", choices=["f16", "bf16", "f32"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    rows = []
    print(f"{'model':14} {'M x N x K':>18} {'256 ms':>8} {'128 ms':>8} {'128/256':>8} "
          f"{'picked':>8} {'picked ms':>9} {'error':>8}")
    for model, shapes in SHAPES.items():
        for m, n, k in shapes:
            wide, wide_named, e1 = time_product(m, n, k, args.dtype, 256, args.repeat)
            narrow, narrow_named, e2 = time_product(m, n, k, args.dtype, 128, args.repeat)
            picked, picked_named, e3 = time_product(m, n, k, args.dtype, None, args.repeat)
            error = max(e1, e2, e3)
            row = {"model": model, "m": m, "n": n, "k": k, "dtype": args.dtype,
                   "wide_ms": round(wide, 4), "wide_kernel": wide_named,
                   "narrow_ms": round(narrow, 4), "narrow_kernel": narrow_named,
                   "picked_ms": round(picked, 4), "picked_kernel": picked_named,
                   "max_error": error}
            rows.append(row)
            print(f"{model:14} {f'{m}x{n}x{k}':>18} {wide:8.4f} {narrow:8.4f} "
                  f"{narrow / wide:8.2f} {picked_named:>8} {picked:9.4f} {error:8.1e}",
                  flush=True)
            if args.json_out:
                with open(args.json_out, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
