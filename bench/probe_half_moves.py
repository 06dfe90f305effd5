"""Does a 16-bit move cost more through ``vload_halfN`` / ``vstore_halfN_rte`` (converted to
float and back) than as raw bits? One kernel of each kind copies GPT-2 small's keys and values
at batch 16 out of its packed q/k/v rows into ``[B, H, S, D]`` (the kernel fusec's fused
elementwise writes for the model's ``present`` outputs, `main_elementwise_1_fused2`), and a plain
contiguous copy of the same bytes; each kernel's median time by OpenCL's events, its PTX's
global loads and stores counted (on NVIDIA), and the outputs compared bit for bit.

On the H200 (session 26, bench/results/h200-2026-12-04-s26-half_moves.log) NVIDIA's OpenCL
compiles ``vload_halfN`` and ``vloadN`` of a 2-byte pointer into N 2-byte loads, so a vector
of halves moves no more bytes an instruction than a scalar (why `choose_vector_width` kept GPU
16-bit kernels scalar); read and written through ``uint4`` pointers and converted in
registers (no local memory) the move takes the copy's time: 0.0070 ms against 0.0091 scalar and
0.0069 for ``clEnqueueCopyBuffer``. fusec's GPU lowering has taken that form since (the knob
``gpu_half_vectors``, `fusec.lowering.kernel_builder.aligned_by`).

    python3 -m fusec.bench.probe_half_moves [--device gpu] [--repeat 50] [--batch 16]
"""

from __future__ import annotations

import argparse
import re
import statistics

import numpy as np
import pyopencl as cl

from fusec.runtime.device import select_device
from fusec.runtime.errors import DeviceError

HEADS, DIM, SEQ = 12, 64, 128

MOVE = """{helpers}__kernel void move(__global const {t} *restrict a0, __global {t} *restrict a1,
                   __global {t} *restrict a2) {{
  const int v0 = (int)get_global_id(0);
  if (v0 < TOTAL) {{
    const int v2 = v0 % {chunks}, v3 = v0 / {chunks}, v4 = v3 % SEQ, v5 = v3 / SEQ,
              v6 = v5 % HEADS, v7 = v5 / HEADS, v8 = v2 * {lanes};
    const int k = v7 * ROWS + v4 * WIDTH + (v6 + HEADS) * 64 + v8;
    const int v = k + HEADS * 64, to = v7 * OUT + v6 * SEQ * 64 + v4 * 64 + v8;
    {move_k};
    {move_v};
  }}
}}"""
"""One work-item moves `lanes` elements of a key row and of a value row (``chunks`` work-items
a 64-element head row): the source at ``k`` and ``v`` of ``a0``, the destination at ``to`` of
``a1`` and ``a2``, each move spelled by its variant (`VARIANTS`)."""

WIDE_HELPERS = """inline float8 wide_load(__global const half *p) {
    const uint4 bits = *(__global const uint4 *)p;
    return vload_half8(0, (__private const half *)&bits);
}
inline void wide_store(const float8 v, __global half *p) {
    uint4 bits;
    vstore_half8_rte(v, 0, (__private half *)&bits);
    *(__global uint4 *)p = bits;
}
"""

VARIANTS = {  # label: (buffer type, lanes, helpers, one move from a0 + {src} to {out} + to)
    "scalar (fusec's GPU)": (  # one half a work-item, as fusec's GPU lowering wrote it
        "half", 1, "", "vstore_half_rte(vload_half({src}, a0), to, {out})"),
    "converted (vload_half16)": (  # 16 halves through float16
        "half", 16, "", "vstore_half16_rte(vload_half16(0, a0 + {src}), 0, {out} + to)"),
    "raw ushort16": ("ushort", 16, "", "vstore16(vload16(0, a0 + {src}), 0, {out} + to)"),
    "raw uint4": (  # the same 32 bytes as two uint4s
        "ushort", 16, "", "__global const uint4 *p_{src} = (__global const uint4 *)(a0 + {src}); "
        "((__global uint4 *)({out} + to))[0] = p_{src}[0]; "
        "((__global uint4 *)({out} + to))[1] = p_{src}[1]"),
    "converted, uint4 pieces": (  # 8 halves read as one uint4, converted in registers
        "half", 8, WIDE_HELPERS, "wide_store(wide_load(a0 + {src}), {out} + to)"),
}
"""Each way of spelling the move, by its label."""


def source(label: str) -> tuple[str, int]:
    """The kernel of `VARIANTS`' `label` (its sizes still named) and its work-items a row."""
    t, lanes, helpers, move = VARIANTS[label]
    chunks = 64 // lanes
    return MOVE.format(helpers=helpers, t=t, chunks=chunks, lanes=lanes,
                       move_k=move.format(src="k", out="a1"),
                       move_v=move.format(src="v", out="a2")), chunks


def build(ctx: cl.Context, source: str, batch: int, chunks: int) -> cl.Program:
    defines = {"TOTAL": batch * HEADS * SEQ * chunks, "SEQ": SEQ, "HEADS": HEADS,
               "ROWS": SEQ * 3 * HEADS * DIM, "WIDTH": 3 * HEADS * DIM, "OUT": HEADS * SEQ * DIM}
    text = source
    for name, value in defines.items():
        text = re.sub(rf"\b{name}\b", str(value), text)
    return cl.Program(ctx, text).build()


def ptx_counts(program: cl.Program) -> str:
    """Global loads and stores in the program's PTX (NVIDIA), or '' elsewhere."""
    binary = program.get_info(cl.program_info.BINARIES)[0]
    if b".entry" not in binary:
        return ""
    text = binary.decode(errors="replace")
    loads = re.findall(r"ld\.global\S*", text)
    stores = re.findall(r"st\.global\S*", text)
    local = len(re.findall(r"(?:ld|st)\.local", text))
    return f"PTX: {local} local accesses, {len(loads)} global loads ({sorted(set(loads))}), {len(stores)} stores ({sorted(set(stores))})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    try:
        device = select_device(args.device)
    except DeviceError as e:
        parser.exit(1, f"probe_half_moves: {e}\n")
    ctx = device.context
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 1 << 16, (args.batch, SEQ, 3 * HEADS * DIM), dtype=np.uint16)
    mf = cl.mem_flags
    a0 = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=rows)
    out_bytes = args.batch * HEADS * SEQ * DIM * 2
    want_k = rows[:, :, HEADS * DIM:2 * HEADS * DIM].reshape(args.batch, SEQ, HEADS, DIM)
    want_k = want_k.transpose(0, 2, 1, 3).copy()
    for label in VARIANTS:
        text, chunks = source(label)
        program = build(ctx, text, args.batch, chunks)
        kernel = program.move
        a1, a2 = cl.Buffer(ctx, mf.WRITE_ONLY, out_bytes), cl.Buffer(ctx, mf.WRITE_ONLY, out_bytes)
        total = args.batch * HEADS * SEQ * chunks
        size = -(-total // 256) * 256
        times = []
        for _ in range(args.repeat + 3):
            event = kernel(queue, (size,), (256,), a0, a1, a2)
            event.wait()
            times.append((event.profile.end - event.profile.start) * 1e-6)
        got = np.empty_like(want_k)
        cl.enqueue_copy(queue, got, a1).wait()
        # a NaN's payload may change through float and back (a signalling one is quietened):
        # compare the other values bit for bit, and count the NaNs whose bits changed
        nan = (want_k & 0x7C00) == 0x7C00
        nan &= (want_k & 0x03FF) != 0
        same = np.array_equal(got[~nan], want_k[~nan])
        changed = int((got[nan] != want_k[nan]).sum())
        print(f"{label:26} {statistics.median(times[3:]):.4f} ms  others' bits equal {same}, NaNs changed {changed}  "
              f"{ptx_counts(program)}", flush=True)
    buf = cl.Buffer(ctx, mf.READ_WRITE, 2 * out_bytes)
    times = []
    for _ in range(args.repeat + 3):
        event = cl.enqueue_copy(queue, buf, a0, byte_count=2 * out_bytes)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-6)
    print(f"{'clEnqueueCopyBuffer':26} {statistics.median(times[3:]):.4f} ms (the same bytes, "
          "contiguous)")


if __name__ == "__main__":
    main()
