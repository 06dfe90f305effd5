"""Times the attention kernels alone on one device: the one-query-per-work-item kernel and the
register-tiled one (each `attention_tiled.CONFIGS` entry, K and V staged or prefetched) on the
BERT and Llama shapes of ``fusec-bench`` (B=1 and 32, S=128, H=12, D=64; q/k/v read from one
packed [B, S, 2304] buffer, as the fused program does), with PyTorch's SDPA on the same inputs
when torch has a GPU. Prints one line per kernel: median of `--repeat` profiled launches, and the
largest difference from a float64 numpy reference; on NVIDIA also ptxas's registers and spills.
With ``--dtype f16`` or ``bf16`` the inputs and output are of that type, and on a device with
tensor cores the tensor-core kernel (`attention_mma`) runs too, in each `MMA_VARIANTS` entry
(SDPA then runs in that type).

    python3 -m fusec.bench.attention_sweep --device gpu --repeat 20 [--dtype f16]
"""

from __future__ import annotations

import argparse
import math
import statistics

import numpy as np
import pyopencl as cl

from fusec.codegen.kernels.attention import HeadsLayout, attention
from fusec.codegen.kernels.attention_mma import attention_mma
from fusec.codegen.kernels.attention_tiled import CONFIGS, attention_tiled
from fusec.codegen.kernels.common import DeviceInfo
from fusec.dtypes import bf16_bits, bf16_to_f32
from fusec.runtime.device import select_device
from fusec.runtime.program_cache import get_program

HEADS, DIM = 12, 64
MMA_VARIANTS = ((4, 64), (4, 32), (4, 128), (8, 64), (2, 64))
"""(warps, block_k) of the tensor-core kernel timed with a 16-bit --dtype."""
SHAPES = (  # name, batch, seq, causal, masked
    ("llama_b32", 32, 128, True, False),
    ("bert_b32", 32, 128, False, True),
    ("llama_b1", 1, 128, True, False),
    ("bert_b1", 1, 128, False, True),
)


def _reference(qkv: np.ndarray, mask: np.ndarray | None, causal: bool) -> np.ndarray:
    batch, seq, _ = qkv.shape
    width = HEADS * DIM
    q, k, v = (qkv[..., i * width:(i + 1) * width].astype(np.float64)
               .reshape(batch, seq, HEADS, DIM).transpose(0, 2, 1, 3) for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(DIM)
    visible = np.ones((batch, 1, seq, seq), dtype=bool)
    if mask is not None:
        visible &= (mask != 0)[:, None, None, :]
    if causal:
        visible &= np.tril(np.ones((seq, seq), dtype=bool))
    scores = np.where(visible, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True)) * visible
    weights /= weights.sum(axis=-1, keepdims=True)
    return (weights @ v).transpose(0, 2, 1, 3).reshape(batch, seq, width)


def _time_kernel(device, kernel, buffers, repeat: int) -> list[float]:
    program = get_program(device, kernel.source, kernel.build_options)
    cl_kernel = cl.Kernel(program, kernel.name)
    cl_kernel.set_args(*buffers)
    times = []
    if device.device.platform.name.startswith("NVIDIA"):  # registers, spills, local memory
        build = cl.Program(device.context, kernel.source).build(["-cl-nv-verbose"])
        log = build.get_build_info(device.device, cl.program_build_info.LOG)
        print("   ", " ".join(line.strip() for line in log.splitlines() if "ptxas info" in line
                              and ("Used" in line or "spill" in line)))
    for _ in range(repeat + 2):
        event = cl.enqueue_nd_range_kernel(device.queue, cl_kernel, kernel.global_size,
                                           kernel.local_size)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-6)
    return times[2:]


def _torch_sdpa(qkv: np.ndarray, mask: np.ndarray | None, causal: bool, repeat: int,
                dtype: str = "f32"):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    batch, seq, _ = qkv.shape
    x = torch.from_numpy(qkv).cuda()
    if dtype != "f32":
        x = x.to(torch.float16 if dtype == "f16" else torch.bfloat16)
    q, k, v = (t.reshape(batch, seq, HEADS, DIM).transpose(1, 2) for t in x.split(HEADS * DIM, -1))
    attn_mask = None if mask is None else torch.from_numpy(mask != 0).cuda()[:, None, None, :]
    f = torch.nn.functional.scaled_dot_product_attention
    for _ in range(3):
        f(q, k, v, attn_mask=attn_mask, is_causal=causal)
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f(q, k, v, attn_mask=attn_mask, is_causal=causal)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--config", action="append", default=[],
                        help="more tiled configurations to time, QxK work-items (e.g. 16x4)")
    parser.add_argument("--dtype", default="f32", choices=("f32", "f16", "bf16"))
    args = parser.parse_args()
    device = select_device(args.device)
    print(f"# {device.description}")
    width = HEADS * DIM
    layouts = {f"{w}_layout": HeadsLayout(row_stride=3 * width, column_offset=i * width)
               for i, w in enumerate("qkv")}
    for name, batch, seq, causal, masked in SHAPES:
        rng = np.random.default_rng(0)
        qkv = rng.standard_normal((batch, seq, 3 * width), dtype=np.float32)
        host = qkv
        if args.dtype == "f16":
            host = qkv.astype(np.float16)
            qkv = host.astype(np.float32)
        elif args.dtype == "bf16":
            host = bf16_bits(qkv)
            qkv = bf16_to_f32(host)
        mask = (rng.random((batch, seq)) > 0.2).astype(np.float32) if masked else None
        if mask is not None:
            mask[:, 0] = 1
        expected = _reference(qkv, mask, causal)
        flags = cl.mem_flags
        qkv_buffer = cl.Buffer(device.context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=host)
        mask_buffer = (cl.Buffer(device.context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                                 hostbuf=mask) if masked else None)
        out = np.empty((batch, seq, width), dtype=host.dtype)
        out_buffer = cl.Buffer(device.context, flags.READ_WRITE, out.nbytes)
        buffers = [qkv_buffer, qkv_buffer, qkv_buffer,
                   *([mask_buffer] if masked else []), out_buffer]
        common = (batch, seq, seq, HEADS, DIM, 1.0 / math.sqrt(DIM))
        flags = {"causal": causal, "has_mask": masked, "dtype": args.dtype, **layouts}
        kernels = [("simple", attention("att_simple", *common, **flags))]
        extra = [tuple(int(x) for x in c.split("x")) for c in args.config]
        kernels += [(f"tiled {tq}x{tk}{' pf' if pf else ''}", attention_tiled(
            f"att_tiled_{tq}_{tk}_{int(pf)}", *common, **flags,
            query_threads=tq, key_threads=tk, prefetch=pf))
            for tq, tk in (*CONFIGS, *extra) for pf in (False, True)]
        info = DeviceInfo.from_device(device.device, tuned=False)
        if args.dtype in info.tensor_cores:
            kernels += [(f"mma {w}w {bk}k", attention_mma(f"att_mma_{w}_{bk}", *common, **flags,
                                                          warps=w, block_k=bk))
                         for w, bk in MMA_VARIANTS]
        for label, kernel in kernels:
            times = _time_kernel(device, kernel, buffers, args.repeat)
            cl.enqueue_copy(device.queue, out, out_buffer)
            device.queue.finish()
            value = bf16_to_f32(out) if args.dtype == "bf16" else out.astype(np.float32)
            error = float(np.max(np.abs(value - expected)))
            print(f"{name:10s} {label:12s} {statistics.median(times):.4f} ms"
                  f"  (min {min(times):.4f})  maxerr {error:.1e}", flush=True)
        torch_times = _torch_sdpa(qkv, mask, causal, args.repeat, args.dtype)
        if torch_times is not None:
            print(f"{name:10s} {'torch sdpa':12s} {statistics.median(torch_times):.4f} ms",
                  flush=True)


if __name__ == "__main__":
    main()
