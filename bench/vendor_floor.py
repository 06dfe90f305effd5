"""How much of a whole model's time the vendor libraries' kernels take: the floor under a target
such as "at most 0.8x `torch.compile`".

Reads the rows `fusec.bench.torch_models` writes with ``--kernel-time --kernel-table N`` (JSON
lines, or its ``--json-out`` list) and sorts each runner's kernels into products (cuBLAS's
``nvjet``/``cutlass``/``gemm`` kernels and their split-K reductions, the products of
Inductor's Triton templates in ``max-autotune``; fusec's ``gemm`` kernels), attention (cuDNN's
and the flash kernels; fusec's ``attention``) and the rest. In Inductor's default mode the
products and attention come from NVIDIA's libraries (Inductor calls them; it generates the
rest), so

    floor = Inductor's products + its attention

is what fusec's products and attention would take if they were exactly as fast as cuBLAS's and
cuDNN's; a target of ``ratio`` times Inductor's kernel time then leaves fusec
``ratio * inductor_kernel_ms - floor`` for everything else (norms, activations, embeddings,
the copies), and below zero nothing: the target asks for products or attention faster than the
vendor's own. Each row also gives fusec's products and attention against the vendor's.

    python -m fusec.bench.vendor_floor RESULTS.json [...] [--ratio 0.8]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

PRODUCT = re.compile(r"nvjet|cutlass|cublas|splitKreduce|sm\d+_xmma|^main_gemm|gemm", re.I)
"""A kernel that computes (or sums the parts of) a matrix product."""
ATTENTION = re.compile(r"^main_attention|fmha|flash|sdpa", re.I)
"""A kernel that computes attention: fusec's, cuDNN's, the flash kernels. Inductor's Triton
kernels that build an attention's inputs (``triton_poi_fused__scaled_dot_product_...``) are
not: they are matched first as generated code (`GENERATED`)."""
GENERATED = re.compile(r"^triton_")
"""Inductor's own kernels: a product only where one of its templates (`TEMPLATE_PRODUCT`),
else never a product or an attention, whatever their names hold."""
TEMPLATE_PRODUCT = re.compile(r"^triton_tem_fused_\w*mm")
"""A product of Inductor's Triton templates (``max-autotune``: ``triton_tem_fused_addmm_0``)."""


def kind_of(kernel: str) -> str:
    """``product``, ``attention`` or ``other`` (see the module docstring)."""
    if TEMPLATE_PRODUCT.search(kernel):
        return "product"
    if GENERATED.search(kernel):
        return "other"
    if ATTENTION.search(kernel):
        return "attention"
    if PRODUCT.search(kernel):
        return "product"
    return "other"


def split(table: Iterable[Sequence[Any]], total_ms: float) -> dict[str, float]:
    """A runner's kernel time a call by kind: `table` its ``[name, ms, launches]`` rows, the
    rest of `total_ms` (kernels the table left out) counted as ``other``."""
    parts = {"product": 0.0, "attention": 0.0}
    for name, ms, _ in table:
        kind = kind_of(name)
        if kind in parts:
            parts[kind] += ms
    parts["other"] = max(0.0, total_ms - parts["product"] - parts["attention"])
    return parts


def floor_row(row: dict[str, Any], ratio: float) -> dict[str, Any] | None:
    """One model's floor (see the module docstring), or None where the row lacks Inductor's or
    fusec's kernel table."""
    need = ("inductor_kernels", "inductor_kernel_ms", "fusec_kernels", "fusec_kernel_ms")
    if not all(k in row for k in need):
        return None
    inductor = split(row["inductor_kernels"], row["inductor_kernel_ms"])
    fusec = split(row["fusec_kernels"], row["fusec_kernel_ms"])
    floor = inductor["product"] + inductor["attention"]
    total = row["inductor_kernel_ms"]
    return {
        "model": row.get("summary", row.get("model")), "dtype": row.get("dtype"),
        "inductor_ms": total, "floor_ms": round(floor, 4),
        "floor_share": round(floor / total, 3),
        "room_ms": round(ratio * total - floor, 4),
        "inductor_other_ms": round(inductor["other"], 4),
        "fusec_ms": row["fusec_kernel_ms"],
        "fusec_products_ratio": round(fusec["product"] / inductor["product"], 3)
        if inductor["product"] else None,
        "fusec_attention_ratio": round(fusec["attention"] / inductor["attention"], 3)
        if inductor["attention"] else None,
        "fusec_other_ms": round(fusec["other"], 4),
    }


def rows_of(path: str) -> list[dict[str, Any]]:
    """The rows of a `torch_models` result: a JSON list, or one JSON object a line (its log)."""
    with open(path) as f:
        text = f.read()
    try:
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    except ValueError:
        rows = []
        for line in text.splitlines():
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    continue
        return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusec.bench.vendor_floor",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="torch_models results (--json-out or its log)")
    parser.add_argument("--ratio", type=float, default=0.8,
                        help="the target, a ratio of Inductor's kernel time (default 0.8)")
    args = parser.parse_args(argv)
    found = []
    for path in args.results:
        try:
            rows = rows_of(path)
        except OSError as e:
            print(f"vendor_floor: {path}: {e.strerror}", file=sys.stderr)
            return 1
        found += [r for r in (floor_row(row, args.ratio) for row in rows) if r]
    if not found:
        print("vendor_floor: no row has Inductor's and fusec's kernel tables "
              "(torch_models --kernel-time --kernel-table N)", file=sys.stderr)
        return 1
    print(f"{'model':52} {'dtype':5} {'inductor':>8} {'floor':>7} {'share':>6} "
          f"{'room@' + str(args.ratio):>9} {'other':>7} {'fusec':>7} {'prod':>6} {'attn':>6} "
          f"{'f.other':>7}")
    for r in found:
        print(f"{str(r['model'])[:52]:52} {str(r['dtype']):5} {r['inductor_ms']:8.4f} "
              f"{r['floor_ms']:7.4f} {r['floor_share']:6.3f} {r['room_ms']:9.4f} "
              f"{r['inductor_other_ms']:7.4f} {r['fusec_ms']:7.4f} "
              f"{r['fusec_products_ratio'] or 0:6.3f} {r['fusec_attention_ratio'] or 0:6.3f} "
              f"{r['fusec_other_ms']:7.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
