"""CPU shapes of the column-statistics kernels (``column_stats.py`` has the GPU ones, and the
meaning of each kernel): register tiles, no local memory and no barriers.

A work-item keeps ``R`` output rows by ``C = V * W`` columns in ``V`` ``floatW`` registers per
row (``W`` the device's float vector: 16 with AVX-512, else 8; ``V`` 2 where the matrix is wide
enough, for 16 accumulators) and streams over the reduction, broadcasting one element of the
left operand against the ``V`` ``W``-wide slices of the right one per step, as the CPU GEMM
does. A run of columns at the right edge is shifted back inside the matrix, so every vector
load is in bounds, and stores only the columns no other work-item owns.

Against the earlier float8, one-vector tiles (kernel times, interleaved in one process, Intel's
CPU runtime on 2 Zen 4 cores shared with other work, load 4.8): the 1024 x 1024 x 16 GEMM of the
power step 0.46 -> 0.30 ms, of the explained variance 0.45 -> 0.29 ms, the Gram of 4096 x 256
9-13 -> 3.1-3.8 ms. Each kernel names its work-group size, so that its geometry does not depend
on the runtime's choice (which, probed, was one work-item a group: no faster or slower).
"""

from __future__ import annotations

from dataclasses import dataclass

from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    ceil_div,
    check_positive,
    float_expression,
    kernel_signature,
    largest_power_of_two_at_most,
    round_up,
)

FINISH_ROWS = 64
"""Rows one work-item of the normalize kernel divides."""

GROUP_ROWS = 8
"""Work-items (row tiles) per work-group of the GEMM-like kernels."""

FINISH_GROUP = 16
"""Work-items per work-group of the finishing kernels."""

LANES = "0123456789abcdef"


@dataclass(frozen=True)
class Tile:
    """A work-item's register tile: ``rows`` x ``vectors * width`` outputs."""

    rows: int
    width: int
    vectors: int

    @property
    def cols(self) -> int:
        return self.width * self.vectors

    @property
    def vtype(self) -> str:
        return vtype(self.width)


def vtype(w: int) -> str:
    return "float" if w == 1 else f"float{w}"


def vload(w: int, offset: str, pointer: str) -> str:
    """A ``w``-wide load of the ``offset``-th vector at ``pointer``."""
    return f"({pointer})[{offset}]" if w == 1 else f"vload{w}({offset}, {pointer})"


def lane(w: int, value: str, index: int) -> str:
    return value if w == 1 else f"{value}.s{LANES[index]}"


def tile_for(cols: int, rows: int, vector_width: int) -> Tile:
    """The widest tile that fits ``cols`` columns: ``W`` the largest power of two at most
    ``min(cols, vector_width)``, two vectors per row where ``cols >= 2 W``."""
    w = largest_power_of_two_at_most(min(cols, vector_width))
    return Tile(rows, w, 2 if cols >= 2 * w else 1)


def store_run(w: int, value: str, target: str, first: str) -> str:
    """Stores lanes ``first`` on of vector ``value`` at ``target`` (``LANE`` in it is replaced
    by the lane's index expression ``l``)."""
    return (
        f"        {{ float lanes[{w}]; "
        + (f"lanes[0] = {value}; " if w == 1 else f"vstore{w}({value}, 0, lanes); ")
        + f"for (int l = {first}; l < {w}; ++l) {target.replace('LANE', 'l')} = lanes[l]; }}\n"
    )


def accumulators(tile: Tile) -> str:
    return "".join(
        f"    {tile.vtype} " + ", ".join(f"c{i}_{v} = 0.0f" for v in range(tile.vectors)) + ";\n"
        for i in range(tile.rows))


def local_size(groups: int, per_group: int) -> tuple[int, int]:
    """``(global rows, local rows)``: `groups` work-items rounded up to a work-group of up to
    `per_group`."""
    local = min(per_group, groups)
    return round_up(groups, local), local


MEAN_GROUP = 4
"""Work-items (runs of columns) per work-group of `column_mean_cpu`."""


def column_mean_cpu(name: str, rows: int, cols: int, vector_width: int = 8) -> KernelSource:
    """See ``column_stats.column_mean``: a work-item per ``W`` columns, each lane adding its
    column's rows in order, read as one vector per row instead of a column per work-item (4096
    x 256, AVX-512, medians of 21 launches: 0.38-0.50 -> 0.054-0.061 ms).

    The sum is of each row's difference from the first row, ``mean = x_0 + sum (x_r - x_0) /
    n``: the differences are exact and small next to a large common offset, whose own sum
    loses ``n`` roundings (4096 x 256 with a mean of 1e4 and a spread of 1: the means' error
    0.031 -> 0.00049, the Gram's 9e-4 -> 6e-6 of max |G|; the same kernel time, 0.107-0.207
    against 0.114-0.240 ms, medians of 55 interleaved launches, Intel's CPU runtime, 2 shared
    cores). The GPU kernel still adds the raw values (not re-timed on a GPU)."""
    check_positive(name, rows=rows, cols=cols)
    w = largest_power_of_two_at_most(min(cols, vector_width))
    t = vtype(w)
    args = (KernelArg("x", "in"), KernelArg("mean", "out"))
    runs = ceil_div(cols, w)
    group = min(MEAN_GROUP, runs)
    source = (
        f"// {name}: column means of [{rows}x{cols}] (CPU, float{w} runs of columns)\n"
        f"{kernel_signature(name, args)}\n{{\n"
        f"    const int jo = get_global_id(0) * {w};\n"
        f"    if (jo >= {cols}) return;\n"
        f"    const int js = min(jo, {cols - w});\n"
        f"    {t} s = 0.0f;\n"
        f"    __global const float *row = x + js;\n"
        f"    const {t} x0 = {vload(w, '0', 'row')};\n"
        f"    for (int r = 0; r < {rows}; ++r, row += {cols}) s += {vload(w, '0', 'row')} - x0;\n"
        f"{store_run(w, f'x0 + s / {float_expression(float(rows))}', 'mean[js + LANE]', 'jo - js')}"
        "}\n"
    )
    return KernelSource(name, source, args, (round_up(runs, group),), (group,))


def centered_gram_cpu(name: str, n: int, d: int, scale: str, rows: int,
                      vector_width: int = 8) -> KernelSource:
    """See ``column_stats.centered_gram``; ``scale`` is a C float expression.

    A work-item's ``R`` rows of the Gram are ``R`` adjacent columns of ``x``: per row of ``x``
    it loads them as one ``floatR`` vector (minus their means) and broadcasts each lane against
    the ``V`` centered vectors of its ``C`` columns (scalar loads and subtractions per lane cost
    10% more, AVX-512). ``R`` is at most ``C``, both powers of two.

    The Gram is symmetric: where ``d`` is a multiple of ``C`` (so no tile is shifted), a tile
    wholly below the diagonal returns at once and a tile wholly above it stores its transpose
    too. As ``R`` divides ``C``, the mirror of a skipped tile lies in a tile wholly above the
    diagonal, so every element is stored once: half the work."""
    check_positive(name, rows=n, cols=d, tile=rows)
    tile = tile_for(d, rows, vector_width)
    r = min(largest_power_of_two_at_most(rows), tile.cols)
    tile = Tile(r, tile.width, tile.vectors)
    w, cols, t = tile.width, tile.cols, tile.vtype
    symmetric = d % cols == 0
    args = (KernelArg("x", "in"), KernelArg("mean", "in"), KernelArg("out", "out"))
    row_tiles = ceil_div(d, r)
    global_rows, group = local_size(row_tiles, 1)
    head = (
        f"    const int jo = get_global_id(0) * {cols};\n"
        f"    const int js = min(jo, {d - cols});\n"
        f"    const int io = get_global_id(1) * {r};\n"
        f"    const int is = min(io, {d - r});\n"
        f"    if (io >= {d}) return;\n"
    )
    if symmetric:
        head += (f"    if (io >= jo + {cols}) return;  "
                 "// below the diagonal: the mirror tile stores it\n")
    means = "".join(f"    const {t} mb{v} = {vload(w, str(v), 'mean + js')};\n"
                    for v in range(tile.vectors))
    means += f"    const {vtype(r)} ma = {vload(r, '0', 'mean + is')};\n"
    loop = ["    __global const float *row = x;\n",
            f"    for (int kk = 0; kk < {n}; ++kk, row += {d}) {{\n"]
    loop += [f"        const {t} b{v} = {vload(w, str(v), 'row + js')} - mb{v};\n"
             for v in range(tile.vectors)]
    loop.append(f"        const {vtype(r)} av = {vload(r, '0', 'row + is')} - ma;\n")
    for i in range(r):
        for v in range(tile.vectors):
            loop.append(f"        c{i}_{v} = mad(({t})({lane(r, 'av', i)}), b{v}, c{i}_{v});\n")
    loop.append("    }\n")
    stores = []
    for i in range(r):
        stores.append(f"    if (is + {i} >= io) {{\n")
        for v in range(tile.vectors):
            target = f"out[(long)(is + {i}) * {d} + js + {v * w} + LANE]"
            stores.append(store_run(w, f"c{i}_{v} * {scale}", target, f"max(0, jo - js - {v * w})"))
        stores.append("    }\n")
    if symmetric:
        stores.append(f"    if (io + {r} <= jo) {{  // above the diagonal: the mirror too\n")
        for i in range(r):
            for v in range(tile.vectors):
                target = f"out[(long)(jo + {v * w} + LANE) * {d} + io + {i}]"
                stores.append(store_run(w, f"c{i}_{v} * {scale}", target, "0"))
        stores.append("    }\n")
    source = (
        f"// {name}: centered Gram of [{n}x{d}] (CPU register tiles {r}x{cols}, "
        f"float{w}{', symmetric' if symmetric else ''})\n"
        f"{kernel_signature(name, args)}\n{{\n"
        f"{head}{means}{accumulators(tile)}{''.join(loop)}{''.join(stores)}}}\n"
    )
    return KernelSource(name, source, args, (ceil_div(d, cols), global_rows), (1, group))


def gemm_column_sums_cpu(name: str, m: int, k: int, c: int, mode: str, rows: int,
                         vector_width: int = 8) -> KernelSource:
    """See ``column_stats.gemm_column_sums``: one row of partials per ``rows`` rows (rows past
    ``m`` are clamped to the last: computed, never stored or summed)."""
    check_positive(name, m=m, k=k, c=c, tile=rows)
    tile = tile_for(c, rows, vector_width)
    w, cols, t = tile.width, tile.cols, tile.vtype
    outs = (KernelArg("y", "out"),) if mode == "squares" else ()
    args = (KernelArg("a", "in"), KernelArg("b", "in"), *outs, KernelArg("partials", "out"))
    row_tiles = ceil_div(m, rows)
    global_rows, group = local_size(row_tiles, GROUP_ROWS)
    head = (
        f"    const int jo = get_global_id(0) * {cols};\n"
        f"    const int js = min(jo, {c - cols});\n"
        f"    const int i0 = get_global_id(1) * {rows};\n"
        f"    if (i0 >= {m}) return;\n"
    )
    head += "".join(f"    __global const float *a{i} = a + (long)min(i0 + {i}, {m - 1}) * {k};\n"
                    for i in range(rows))
    loop = ["    __global const float *brow = b + js;\n",
            f"    for (int kk = 0; kk < {k}; ++kk, brow += {c}) {{\n"]
    loop += [f"        const {t} b{v} = {vload(w, str(v), 'brow')};\n" for v in range(tile.vectors)]
    for i in range(rows):
        loop.append(f"        const {t} a{i}k = ({t})(a{i}[kk]);\n")
        for v in range(tile.vectors):
            loop.append(f"        c{i}_{v} = mad(a{i}k, b{v}, c{i}_{v});\n")
    loop.append("    }\n")
    tail = [f"    {t} p{v} = 0.0f;\n" for v in range(tile.vectors)]
    for i in range(rows):
        tail.append(f"    if (i0 + {i} < {m}) {{\n")
        for v in range(tile.vectors):
            if mode == "squares":
                target = f"y[(long)(i0 + {i}) * {c} + js + {v * w} + LANE]"
                tail.append(store_run(w, f"c{i}_{v}", target, f"max(0, jo - js - {v * w})"))
                tail.append(f"        p{v} = mad(c{i}_{v}, c{i}_{v}, p{v});\n")
            else:
                weight = vload(w, str(v), f"b + (long)(i0 + {i}) * {c} + js")
                tail.append(f"        p{v} = mad(c{i}_{v}, {weight}, p{v});\n")
        tail.append("    }\n")
    for v in range(tile.vectors):
        target = f"partials[(long)get_global_id(1) * {c} + js + {v * w} + LANE]"
        tail.append(store_run(w, f"p{v}", target, f"max(0, jo - js - {v * w})"))
    source = (
        f"// {name}: [{m}x{k}] @ [{k}x{c}], column sums per {rows} rows ({mode}, CPU register "
        f"tiles {rows}x{cols}, float{w})\n"
        f"{kernel_signature(name, args)}\n{{\n"
        f"{head}{accumulators(tile)}{''.join(loop)}{''.join(tail)}}}\n"
    )
    return KernelSource(name, source, args, (ceil_div(c, cols), global_rows), (1, group))


def column_finish_cpu(name: str, parts: int, m: int, c: int, mode: str, eps: str) -> KernelSource:
    """See ``column_stats.column_finish``: a work-item per column (``sum``), or per column and
    `FINISH_ROWS` rows (``normalize``); ``eps`` is a C float expression."""
    check_positive(name, parts=parts, m=m, c=c)
    ins = (KernelArg("partials", "in"), *((KernelArg("y", "in"),) if mode == "normalize" else ()))
    args = (*ins, KernelArg("out", "out"))
    total = (
        "    const int j = get_global_id(0);\n"
        f"    if (j >= {c}) return;\n"
        "    float s = 0.0f;\n"
        f"    for (int t = 0; t < {parts}; ++t) s += partials[(long)t * {c} + j];\n"
    )
    group = min(FINISH_GROUP, c)
    if mode == "sum":
        body = "    out[j] = s;\n"
        glob: tuple[int, ...] = (round_up(c, group),)
        local: tuple[int, ...] = (group,)
    else:
        body = (
            f"    const float denom = sqrt(s) + {eps};\n"
            f"    const int r0 = get_global_id(1) * {FINISH_ROWS};\n"
            f"    const int r1 = min(r0 + {FINISH_ROWS}, {m});\n"
            f"    for (int r = r0; r < r1; ++r)\n"
            f"        out[(long)r * {c} + j] = y[(long)r * {c} + j] / denom;\n"
        )
        glob = (round_up(c, group), ceil_div(m, FINISH_ROWS))
        local = (group, 1)
    source = (
        f"// {name}: column sums of [{parts}x{c}] partials ({mode}, CPU)\n"
        f"{kernel_signature(name, args)}\n{{\n{total}{body}}}\n"
    )
    return KernelSource(name, source, args, glob, local)
