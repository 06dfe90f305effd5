"""The ``wgmma`` GEMM's block widths on the GPU: each product of the whole-model benchmarks
(`SHAPES`: rows x N x K of GPT-2 small, BERT-base and the Llama-style model at their benchmark
batches, and at batch 1) timed in 128 x 256, 128 x 192 (where N allows), 128 x 128 and 128 x 64 blocks
(the width forced in place of `block_n_for`'s choice), and in the width `block_n_for` picks
under the knobs as set (192 among them with `wgmma_192_blocks`, on since session 22; 64 with
`wgmma_64_blocks`; several blocks a unit counted as one wave with `wgmma_resident_waves`), so that
`BLOCK_COSTS` and the rule can be set from what the device does. Each row: median kernel
time of `--repeat` profiled calls of a ``nn.matmul`` with B bound (as a model's weight),
checked against numpy first.

    python3 -m fusec.bench.wgmma_blocks --dtype f16 [--models gpt2_b1,...] [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
    "llama_b1": [(128, 2560, 2048), (128, 2048, 2048), (128, 11264, 2048), (128, 2048, 5632)],
    "gpt2_b1": [(128, 2304, 768), (128, 768, 768), (128, 3072, 768), (128, 768, 3072)],
    "bert_b1_s512": [(512, 768, 768), (512, 3072, 768), (512, 768, 3072)],
}

MATMUL = """func.func @f(%a: tensor<MxKxT>, %b: tensor<KxNxT>) -> tensor<MxNxT> {
  %y = nn.matmul %a, %b : tensor<MxKxT>, tensor<KxNxT> -> tensor<MxNxT>
  func.return %y : tensor<MxNxT>
}"""


def time_product(m: int, n: int, k: int, dtype: str, width: int | None,
                 repeat: int, device: str = "gpu", report: bool = False,
                 ptx_dir: str | None = None) -> tuple[float, str, float]:
    """(median ms of the product's kernels, the block width its source names, max error of
    max |C|) with `width` forced (None: as `block_n_for` picks under the knobs as set); with
    `report`, the kernels' `resources` printed; with `ptx_dir`, the program's PTX as the
    driver runs it (patched) written there as ``MxNxK_<blocks>.ptx``, for ``ptxas -v
    -arch=sm_90a`` elsewhere."""
    text = (MATMUL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
            .replace("T", dtype))
    rng = np.random.default_rng(0)
    np_type = np.float16 if dtype == "f16" else np.float32
    a = rng.uniform(-1, 1, (m, k)).astype(np_type)
    b = rng.uniform(-1, 1, (k, n)).astype(np_type)
    pick = gemm_wgmma.block_n_for
    try:
        if width is None:
            exe = fusec.compile(text, device=device, params={"b": b}, allow_tf32=dtype == "f32")
        else:  # every width allowed, and `width` the one picked
            gemm_wgmma.block_n_for = lambda rows, cols, units: width
            with knobs.overridden(wgmma_narrow_blocks=True, wgmma_192_blocks=True,
                                  wgmma_64_blocks=True):
                exe = fusec.compile(text, device=device, params={"b": b},
                                    allow_tf32=dtype == "f32")
    finally:
        gemm_wgmma.block_n_for = pick
    found = re.search(r"(\d+x\d+) blocks", exe.plan.source)
    named = found.group(1) if found and "FUSEC_WGMMA" in exe.plan.source else "mma.sync"
    if report:
        print(f"  {m}x{n}x{k} in {named}: {resources(exe)}", flush=True)
    if ptx_dir:
        from fusec.runtime.cuda_driver import module_ptx

        os.makedirs(ptx_dir, exist_ok=True)
        with open(os.path.join(ptx_dir, f"{m}x{n}x{k}_{named}.ptx"), "wb") as f:
            f.write(module_ptx(exe.program.binaries[0]).rstrip(b"\0"))
    ms, error = checked_kernel_ms(exe, a, b, repeat)
    return ms, named, error


CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE = 3, 4, 12
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_NUM_REGS = 3, 4


def resources(exe: Executable) -> str:
    """What ptxas made of `exe`'s product kernel (its program's PTX loaded through the CUDA
    driver in PyTorch's context, the JIT's log verbose): registers a thread, local (spilled)
    bytes a thread, and the log's warnings (``C75..``: ``wgmma`` serialized, say)."""
    import ctypes

    import torch

    from fusec.runtime.cuda_driver import CudaDriver, module_ptx

    torch.zeros(1, device="cuda")  # PyTorch's context, current
    driver = CudaDriver()
    ptx = module_ptx(exe.program.binaries[0])
    log = ctypes.create_string_buffer(1 << 16)
    options = (ctypes.c_int * 3)(CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                 CU_JIT_LOG_VERBOSE)
    values = (ctypes.c_void_p * 3)(ctypes.cast(log, ctypes.c_void_p).value, 1 << 16, 1)
    module = ctypes.c_void_p()
    driver.check(driver.lib.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(ptx), 3,
                                               options, values), "cuModuleLoadDataEx")
    names = re.findall(r"^__kernel .*? void (\w+)\(", exe.plan.source, re.M)
    found = []
    for name in names:
        handle = ctypes.c_void_p()
        if driver.lib.cuModuleGetFunction(ctypes.byref(handle), module, name.encode()):
            continue
        found.append(f"{name}: {driver.attribute(handle, CU_FUNC_ATTRIBUTE_NUM_REGS)} registers, "
                     f"{driver.attribute(handle, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)} local bytes")
    warnings = sorted({line.strip() for line in log.value.decode(errors="replace").splitlines()
                       if "warning" in line.lower() or "C75" in line})
    driver.unload(module)
    return "; ".join(found + warnings)


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
    parser.add_argument("--models", default=",".join(SHAPES),
                        help=f"comma-separated, of {', '.join(SHAPES)} (default: all)")
    parser.add_argument("--json-out")
    parser.add_argument("--ptx-dir", default=None,
                        help="write each timed program's patched PTX into this folder")
    parser.add_argument("--resources", action="store_true",
                        help="print each timed kernel's registers, spills and ptxas warnings "
                             "(CUDA, through PyTorch)")
    args = parser.parse_args()
    if args.resources:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is None or not torch.cuda.is_available():
            parser.error("--resources loads the kernels through CUDA: it needs PyTorch with a "
                         "CUDA device")
    unknown = sorted(set(args.models.split(",")) - set(SHAPES))
    if unknown:
        parser.error(f"unknown models {', '.join(unknown)} (known: {', '.join(SHAPES)})")
    rows = []
    print(f"{'model':14} {'M x N x K':>18} {'256 ms':>8} {'192 ms':>8} {'128 ms':>8} "
          f"{'64 ms':>8} {'192/256':>8} {'128/256':>8} {'64/256':>8} {'picked':>8} "
          f"{'picked ms':>9} {'error':>8}")
    for model in args.models.split(","):
        shapes = SHAPES[model]
        for m, n, k in shapes:
            timed = {w: time_product(m, n, k, args.dtype, w, args.repeat,
                                     report=args.resources, ptx_dir=args.ptx_dir)
                     for w in (256, 192, 128, 64) if n % w == 0}
            picked, picked_named, picked_error = time_product(m, n, k, args.dtype, None,
                                                              args.repeat)
            error = max([picked_error, *(e for _, _, e in timed.values())])
            ms = {w: t[0] for w, t in timed.items()}
            row = {"model": model, "m": m, "n": n, "k": k, "dtype": args.dtype,
                   **{f"ms_{w}": round(t, 4) for w, t in ms.items()},
                   **{f"kernel_{w}": t[1] for w, t in timed.items()},
                   "picked_ms": round(picked, 4), "picked_kernel": picked_named,
                   "max_error": error}
            rows.append(row)

            def cell(w: int, ratio: bool = False) -> str:
                if w not in ms or 256 not in ms:
                    return f"{'-':>8}"
                return f"{ms[w] / ms[256]:8.2f}" if ratio else f"{ms[w]:8.4f}"

            print(f"{model:14} {f'{m}x{n}x{k}':>18} {cell(256)} {cell(192)} {cell(128)} "
                  f"{cell(64)} {cell(192, True)} {cell(128, True)} {cell(64, True)} "
                  f"{picked_named:>8} {picked:9.4f} {error:8.1e}", flush=True)
            if args.json_out:
                with open(args.json_out, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
