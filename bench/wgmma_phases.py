"""Where a ``wgmma`` product's work-groups spend their time, by the GPU's own clocks: a probe
for the GPU machine.

    python -m fusec.bench.wgmma_phases [--shape 4096x2048x5632] [--width 256] [--persistent]

Builds the `gemm_wgmma` kernel of an f16 product (blocks of 128 rows, `--width` columns; with
`--persistent`, as many persistent work-groups as the units hold, `persistent_groups_for`) with
clock reads added to its text (`instrumented`): thread 0 of each work-group writes, for each
block it computes, the SM's ``%clock64`` where the block starts, where its first stages'
copies have been issued (``FUSEC_WGMMA_INIT``), where its K loop is done (after
``FUSEC_WGMMA_DONE``) and where its C has been stored, and ``%globaltimer`` (ns) where the
work-group starts and ends. Prints, over the blocks, the median and 90th percentile of each
phase in cycles and the work-groups' spread in time (how the waves fall), so that a kernel
form that loses (session 25: persistent work-groups in 256-wide blocks) can be taken apart in
one run.
"""

from __future__ import annotations

import argparse
import re
import statistics
import numpy as np

PHASES = ("start", "issued", "looped", "stored")
"""The clock reads of each block, in order: `MARKS` says where each goes."""
MARKS = {
    "issued": '    asm volatile("// FUSEC_WGMMA_INIT',
    "looped": "    const int lane = tid & 31",
}
"""The text of the kernel body a clock read goes before (besides the block's start and the end
of its store, which `instrumented` places by the body's shape)."""
SLOTS = 64
"""Clock words a work-group may write: 2 for its start and end times, 4 for each block, so at
most 15 blocks a work-group."""


def clock(slot: str) -> str:
    """Thread 0's write of the SM's cycle counter into word `slot` of its work-group's row."""
    return ("    if (get_local_id(0) == 0) { ulong c_; asm volatile(\"mov.u64 %0, %%clock64;\" "
            f": \"=l\"(c_)); clocks[get_group_id(0) * {SLOTS} + {slot}] = c_; }}\n")


def timer(slot: str) -> str:
    """Thread 0's write of ``%globaltimer`` (ns, the same on every SM) into word `slot`."""
    return ("    if (get_local_id(0) == 0) { ulong t_; asm volatile(\"mov.u64 %0, %%globaltimer;\" "
            f": \"=l\"(t_)); clocks[get_group_id(0) * {SLOTS} + {slot}] = t_; }}\n")


def instrumented(source: str, persistent: bool) -> str:
    """`source` (a `gemm_wgmma` kernel) with a ``clocks`` buffer after its last parameter and
    the clock reads of `PHASES` (the block's index among its work-group's is the steps before
    it over ``ktiles`` in persistent work-groups, 0 in a work-group a block), and the
    work-group's start and end times."""

    def word(phase: str) -> str:
        # `before` counts the block's own steps from its K loop's end on
        block = ("0" if not persistent else "(before / ktiles)" if phase in ("start", "issued")
                 else "(before / ktiles - 1)")
        return f"2 + 4 * {block} + {PHASES.index(phase)}"

    signature_end = source.index(")\n{", source.index("__kernel"))
    source = (source[:signature_end] + ",\n    __global ulong *restrict clocks"
              + source[signature_end:])
    for phase, at in MARKS.items():
        if at not in source:
            raise ValueError(f"the kernel has no '{at.strip()}' to time '{phase}' at")
        source = source.replace(at, clock(word(phase)) + at, 1)
    # a block starts where its B tile's address is known
    start = source.index("\n", source.index("    const ulong b_glob = ")) + 1
    source = source[:start] + clock(word("start")) + source[start:]
    # its C is stored at the copy-out loop's closing brace: the body's last "    }" (in
    # persistent work-groups the one before, the block loop's closing the body)
    end = source.rindex("\n}\n")
    stored = source.rindex("    }\n", 0, end - 5 if persistent else end + 1) + 6
    source = source[:stored] + clock(word("stored")) + source[stored:]
    first = source.index("\n", source.index("__attribute__((aligned(1024)));")) + 1
    source = source[:first] + timer("0") + source[first:]
    end = source.rindex("\n}\n") + 1
    return source[:end] + timer("1") + source[end:]


def phases(words: np.ndarray, blocks_of: list[int]) -> dict[str, list[int]]:
    """Cycles of each phase of each block: ``issued - start`` (the first copies issued),
    ``looped - issued`` (the K loop), ``stored - looped`` (C staged and stored) and, within a
    work-group, ``start - stored`` of the block before (the turn between blocks)."""
    out: dict[str, list[int]] = {"first copies": [], "K loop": [], "store": [], "between": []}
    for group, count in enumerate(blocks_of):
        row = words[group]
        for b in range(count):
            start, issued, looped, stored = (int(row[2 + 4 * b + i]) for i in range(4))
            out["first copies"].append(issued - start)
            out["K loop"].append(looped - issued)
            out["store"].append(stored - looped)
            if b:
                out["between"].append(start - int(row[2 + 4 * (b - 1) + 3]))
    return out


def main() -> None:
    import pyopencl as cl

    from fusec import knobs
    from fusec.codegen.kernels import gemm_wgmma as wg
    from fusec.runtime.device import select_device
    from fusec.runtime.errors import DeviceError
    from fusec.runtime.program_cache import get_program

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="4096x2048x5632", help="MxNxK of the f16 product")
    parser.add_argument("--width", type=int, default=256, choices=wg.BLOCK_NS)
    parser.add_argument("--persistent", action="store_true")
    args = parser.parse_args()
    found = re.fullmatch(r"(\d+)x(\d+)x(\d+)", args.shape)
    if found is None:
        parser.error(f"--shape takes MxNxK, not '{args.shape}'")
    m, n, k = map(int, found.groups())
    if not wg.fits("f16", 1, m, n, k, args.width):
        parser.error(f"{args.shape} is not whole 128x{args.width}x64 tiles")
    try:
        device = select_device("gpu")
    except DeviceError as e:
        parser.exit(1, f"wgmma_phases: {e}\n")
    units = device.capabilities.compute_units
    with knobs.overridden(wgmma_persistent=True):
        groups = (wg.persistent_groups_for(m, n, 128, args.width, units, "f16", False)
                  if args.persistent else 0)
    kernel = wg.gemm_wgmma("g", m, n, k, "f16", block_n=args.width, persistent_groups=groups)
    blocks = (m // 128) * (n // args.width)
    launched = kernel.global_size[0] // kernel.local_size[0]
    blocks_of = [len(range(g, blocks, launched)) for g in range(launched)]
    if max(blocks_of) * 4 + 2 > SLOTS:
        parser.error(f"{max(blocks_of)} blocks a work-group: more than the clocks hold")
    built = getattr(get_program(device, instrumented(kernel.source, bool(groups))), "g")
    flags = cl.mem_flags
    rng = np.random.default_rng(0)
    a = cl.Buffer(device.context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                  hostbuf=rng.uniform(-1, 1, (m, k)).astype(np.float16))
    b = cl.Buffer(device.context, flags.READ_ONLY | flags.COPY_HOST_PTR,
                  hostbuf=rng.uniform(-1, 1, (n, k)).astype(np.float16))
    c = cl.Buffer(device.context, flags.READ_WRITE, m * n * 2)
    words = np.zeros((launched, SLOTS), np.uint64)
    clocks = cl.Buffer(device.context, flags.READ_WRITE, words.nbytes)
    built.set_args(a, b, c, clocks)
    times = []
    for _ in range(6):  # the first warms up; the last one's clocks are read
        event = cl.enqueue_nd_range_kernel(device.queue, built, kernel.global_size,
                                           kernel.local_size)
        event.wait()
        times.append((event.profile.end - event.profile.start) / 1e6)
    cl.enqueue_copy(device.queue, words, clocks)
    device.queue.finish()
    print(f"{args.shape} f16, 128x{args.width} blocks, {blocks} blocks in {launched} "
          f"work-groups{' (persistent)' if groups else ''}: {statistics.median(times[1:]):.4f} "
          "ms a launch (OpenCL's events)")
    for phase, cycles in phases(words, blocks_of).items():
        if cycles:
            ordered = sorted(cycles)
            print(f"  {phase:13} median {statistics.median(ordered):9.0f} cycles   "
                  f"90th {ordered[int(0.9 * (len(ordered) - 1))]:9.0f}   blocks {len(ordered)}")
    starts, ends = words[:, 0].astype(np.int64), words[:, 1].astype(np.int64)
    origin = int(starts.min())
    print(f"  work-groups start {np.percentile(starts - origin, [0, 50, 90, 100]) / 1e3} us, "
          f"end {np.percentile(ends - origin, [0, 50, 90, 100]) / 1e3} us after the first")


if __name__ == "__main__":
    main()
