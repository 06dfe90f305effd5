"""The GPU LayerNorm kernel (`fusec.codegen.kernels.norm.layer_norm`) at whole-model row shapes,
by work-items per row and rows per work-group (each size also with the rows a work-group the
default gives, `default_rows_per_group`), and by how a row's work-items combine their sums
(``--combine``: ``tree`` in local memory, ``ptx`` warp shuffles, `common.RowCombine`): which
launch layout and combine the defaults should pick. Kernel time,
the median of `--repeats` profiled launches (`kernels_cpu.time_kernel`), and the bytes moved
per second (the row read once, with its residual, and written once).

    python3 -m fusec.bench.norm_sweep --device gpu [--dtype f16] [--combine tree,ptx]
"""

from __future__ import annotations

import argparse

import numpy as np

from fusec.bench.kernels_cpu import time_kernel
from fusec.codegen.kernels.common import (
    DeviceInfo,
    default_row_local_size,
    default_rows_per_group,
)
from fusec.codegen.kernels.norm import layer_norm
from fusec.runtime.device import select_device

SHAPES = [(2048, 768), (4096, 768), (128, 768), (4096, 2048)]
"""(rows, cols): GPT-2 small at B=16 S=128, BERT-base at B=32, either at B=1, the Llama-style
model's RMSNorm width at B=32."""
LAYOUTS = [(32, 8), (64, 4), (128, 2), (256, 1)]
"""(work-items per row, rows per work-group); each size also runs with the default rows."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu", choices=["cpu", "gpu"])
    parser.add_argument("--dtype", default="f16", choices=["f32", "f16"])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--combine", default="tree",
                        help="comma-separated: tree, ptx (warp shuffles), emulated")
    args = parser.parse_args()
    device = select_device(args.device)
    info = DeviceInfo.from_device(device.device)
    np_type = np.float16 if args.dtype == "f16" else np.float32
    rng = np.random.default_rng(0)
    for residual in (False, True):
        for rows, cols in SHAPES:
            arrays = {"x": rng.standard_normal((rows, cols)).astype(np_type),
                      "residual": rng.standard_normal((rows, cols)).astype(np_type),
                      "gamma": rng.standard_normal(cols).astype(np_type),
                      "beta": rng.standard_normal(cols).astype(np_type),
                      "out": np.zeros((rows, cols), np_type)}
            moved = rows * cols * np.dtype(np_type).itemsize * (3 if residual else 2)
            default = default_row_local_size(cols, info)
            layouts = dict.fromkeys(LAYOUTS + [(size, default_rows_per_group(size, info, rows))
                                               for size, _ in LAYOUTS])
            for (size, per_group), combine in ((layout, combine) for layout in layouts
                                               for combine in args.combine.split(",")):
                kernel = layer_norm("ln", rows, cols, 1e-5, residual=residual, local_size=size,
                                    device_info=info, rows_per_group=per_group,
                                    dtype=args.dtype, combine=combine)
                median, best = time_kernel(device, kernel, arrays, args.repeats)
                mark = " (default size)" if size == default else ""
                print(f"layer_norm{' + residual' if residual else ''} [{rows}x{cols}] "
                      f"{args.dtype} {size:3d} per row x {per_group} rows, {combine:4}: median "
                      f"{median * 1e6:7.1f} us  best {best * 1e6:7.1f} us  "
                      f"{moved / median / 1e9:7.1f} GB/s{mark}", flush=True)


if __name__ == "__main__":
    main()
