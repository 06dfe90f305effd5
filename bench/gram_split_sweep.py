"""Slice lengths of the GPU centered Gram (``codegen/kernels/centered_gram_split.py``), each
checked and timed on the best OpenCL device (``select_device``: a GPU if there is one), in one
process.

    python3 -m fusec.bench.gram_split_sweep [--shape NxD ...] [--repeat 20] [SLICE_ROWS ...]

Per shape (default 4096x256) and slice length (default: the lowering's choice,
``gram_slice_rows``, and a few around it), both launches are built, run once on x with a mean
of 1e4 and a spread of 1, checked against numpy in float64 (max error relative to max |G|) and
timed by OpenCL profiling events (median over ``--repeat`` runs of the two launches, after 3
warm-up runs). Prints one line per shape and slice length.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np


def main() -> None:
    import pyopencl as cl

    from fusec.codegen.kernels.centered_gram_split import GramSlices, gram_combine, gram_slices
    from fusec.lowering.column_stats_ops import gram_slice_rows

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slice_rows", nargs="*", type=int)
    parser.add_argument("--shape", action="append", help="NxD (repeatable)")
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    from fusec.runtime.device import select_device

    opened = select_device("auto")
    context, queue = opened.context, opened.queue
    print(f"device: {opened.description}", flush=True)
    flags = cl.mem_flags
    for shape in options.shape or ["4096x256"]:
        n, d = map(int, shape.split("x"))
        auto = gram_slice_rows(n, d)
        choices = options.slice_rows or sorted({auto, 64, 128, 256, 512})
        x = (np.random.default_rng(0).standard_normal((n, d)) + 1e4).astype(np.float32)
        xc = x.astype(np.float64) - x.astype(np.float64).mean(axis=0)
        ref = xc.T @ xc
        buf_x = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
        buf_out = cl.Buffer(context, flags.READ_WRITE, d * d * 4)
        for rows in choices:
            g = GramSlices(n, d, rows)
            kernels = [gram_slices("gram_slices", n, d, rows),
                       gram_combine("gram_combine", n, d, rows, 1.0)]
            program = cl.Program(context, "\n".join(k.source for k in kernels)).build()
            parts = cl.Buffer(context, flags.READ_WRITE, g.slices * d * d * 4)
            means = cl.Buffer(context, flags.READ_WRITE, g.slices * d * 4)
            resid = cl.Buffer(context, flags.READ_WRITE, g.slices * d * 4)
            first, second = program.gram_slices, program.gram_combine
            first.set_args(buf_x, parts, means, resid)
            second.set_args(parts, means, resid, buf_out)

            pairs = ((first, kernels[0]), (second, kernels[1]))

            def launch(pairs=pairs):
                return [cl.enqueue_nd_range_kernel(queue, k, s.global_size, s.local_size)
                        for k, s in pairs]

            cl.enqueue_fill_buffer(queue, buf_out, np.uint32(0x7FC00000), 0, d * d * 4)
            launch()
            out = np.empty((d, d), dtype=np.float32)
            cl.enqueue_copy(queue, out, buf_out).wait()
            error = float(np.abs(out - ref).max() / np.abs(ref).max())
            for _ in range(3):
                launch()
            queue.finish()
            times = []
            for _ in range(options.repeat):
                events = launch()
                events[-1].wait()
                times.append(sum((e.profile.end - e.profile.start) * 1e-6 for e in events))
            label = f"{rows} rows{' (auto)' if rows == auto else ''}"
            print(f"{shape} {label}: {g.slices} slices x {g.pairs} tiles = "
                  f"{g.slices * g.pairs} groups, {statistics.median(times):.4f} ms "
                  f"(min {min(times):.4f}), error {error:.1e}", flush=True)


if __name__ == "__main__":
    main()
