"""Kernels of the column-statistics ops (``fused.centered_gram``, ``fused.power_step_normalize``,
``fused.explained_variance``): a column reduction, and 16 x 16 tiled GEMMs whose tiles fold in a
centering (Gram) or end in a column reduction of their tile (power step, explained variance).

    column_mean        x [n, d] -> mean [d]: one work-item per column, rows in order.
    centered_gram      x [n, d], mean [d] -> out [d, d] = (x - mean)^T (x - mean) * scale; the
                       tiles of x are centered as they are loaded into local memory.
    gemm_column_sums   a [m, k], b [k, c] -> y = a @ b; ``mode = "squares"`` stores y and the
                       sum of y^2 over each tile's 16 rows in partials [ceil(m / 16), c];
                       ``mode = "times_rhs"`` (m == k) stores only the sums of b[i, j] * y[i, j].
    column_finish      partials [t, c] -> ``mode = "sum"``: out [c] = sum over t;
                       ``mode = "normalize"``: out [m, c] = y / (sqrt(sum over t) + eps).

All work on f32; sizes are literals; a work-group is 16 x 16 work-items (get_local_id(0) the
column) but for column_mean (64 work-items, one per column). Out-of-range work-items of a
partial tile load zeros and store nothing.
"""

from __future__ import annotations

from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    ceil_div,
    check_positive,
    float_expression,
    kernel_signature,
    round_up,
)

TILE = 16
"""Rows and columns of a tile, and the work-group's side."""

MEAN_GROUP = 64
"""Work-items per work-group of column_mean."""

TILES = (2, 4, 8, 16)
"""Tile sides a kernel may be asked for (powers of two: the column sums are trees)."""

GEMM_MODES = ("squares", "times_rhs")
FINISH_MODES = ("sum", "normalize")


def check_tile(name: str, tile: int) -> None:
    if tile not in TILES:
        raise ValueError(f"kernel '{name}': tile must be one of {TILES}, got {tile}")


def tile_loop(k: int, load_a: str, load_b: str, tile: int) -> str:
    """The k-loop of a 16 x 16 tile: ``load_a`` fills ``As[kk][ty]`` for reduction index
    ``kk = t + ty``... given as C statements over ``t`` (the tile's first reduction index),
    ``tx``, ``ty``; then ``acc += As[p][ty] * Bs[p][tx]``. ``As`` holds the lhs transposed, so
    both tiles are read along a row of local memory."""
    return (
        f"    __local float As[{tile}][{tile + 1}];\n"
        f"    __local float Bs[{tile}][{tile + 1}];\n"
        "    float acc = 0.0f;\n"
        f"    for (int t = 0; t < {k}; t += {tile}) {{\n"
        f"{load_a}"
        f"{load_b}"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        f"        for (int p = 0; p < {tile}; ++p) acc += As[p][ty] * Bs[p][tx];\n"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    }\n"
    )


def group_header(tile: int) -> str:
    return (
        "    const int tx = get_local_id(0);\n"
        "    const int ty = get_local_id(1);\n"
        f"    const int col = get_group_id(0) * {tile} + tx;\n"
        f"    const int row = get_group_id(1) * {tile} + ty;\n"
    )


def attributes(tile: int) -> str:
    return f"__attribute__((reqd_work_group_size({tile}, {tile}, 1)))"


def column_mean(name: str, rows: int, cols: int) -> KernelSource:
    """``mean[j] = sum_r x[r, j] / rows``."""
    check_positive(name, rows=rows, cols=cols)
    args = (KernelArg("x", "in"), KernelArg("mean", "out"))
    source = (
        f"// {name}: column means of [{rows}x{cols}]\n"
        f"{kernel_signature(name, args)}\n{{\n"
        "    const int j = get_global_id(0);\n"
        f"    if (j >= {cols}) return;\n"
        "    float s = 0.0f;\n"
        f"    for (int r = 0; r < {rows}; ++r) s += x[(long)r * {cols} + j];\n"
        f"    mean[j] = s / {float_expression(float(rows))};\n"
        "}\n"
    )
    return KernelSource(name, source, args, (round_up(cols, MEAN_GROUP),), (MEAN_GROUP,))


def centered_gram(name: str, rows: int, cols: int, scale: float,
                  tile: int = TILE) -> KernelSource:
    """``out[i, j] = sum_r (x[r, i] - mean[i]) (x[r, j] - mean[j]) * scale``."""
    check_positive(name, rows=rows, cols=cols)
    check_tile(name, tile)
    args = (KernelArg("x", "in"), KernelArg("mean", "in"), KernelArg("out", "out"))
    d = cols
    load_a = (  # As[kk][ty] = xc[t + kk, i0 + ty], loaded by (tx, ty) as xc[t + ty, i0 + tx]
        f"        {{ const int r = t + ty; const int i = get_group_id(1) * {tile} + tx;\n"
        f"          As[ty][tx] = (r < {rows} && i < {d})\n"
        f"              ? x[(long)r * {d} + i] - mean[i] : 0.0f; }}\n"
    )
    load_b = (
        f"        {{ const int r = t + ty;\n"
        f"          Bs[ty][tx] = (r < {rows} && col < {d})\n"
        f"              ? x[(long)r * {d} + col] - mean[col] : 0.0f; }}\n"
    )
    source = (
        f"// {name}: centered Gram of [{rows}x{cols}], scale {scale!r}\n"
        f"{kernel_signature(name, args, attributes(tile))}\n{{\n"
        f"{group_header(tile)}"
        f"{tile_loop(rows, load_a, load_b, tile)}"
        f"    if (row < {d} && col < {d})\n"
        f"        out[(long)row * {d} + col] = acc * {float_expression(scale)};\n"
        "}\n"
    )
    side = round_up(d, tile)
    return KernelSource(name, source, args, (side, side), (tile, tile))


def gemm_column_sums(name: str, m: int, k: int, c: int, mode: str,
                     tile: int = TILE) -> KernelSource:
    """``y = a @ b`` by tiles, each tile's column sums of ``y^2`` (``squares``, y stored too)
    or of ``b[i, j] * y[i, j]`` (``times_rhs``) stored in ``partials[tile row, j]``."""
    check_positive(name, m=m, k=k, c=c)
    check_tile(name, tile)
    if mode not in GEMM_MODES:
        raise ValueError(f"kernel '{name}': mode must be one of {GEMM_MODES}, got '{mode}'")
    if mode == "times_rhs" and m != k:
        raise ValueError(f"kernel '{name}': times_rhs needs a square lhs, got m={m}, k={k}")
    outs = (KernelArg("y", "out"),) if mode == "squares" else ()
    args = (KernelArg("a", "in"), KernelArg("b", "in"), *outs, KernelArg("partials", "out"))
    load_a = (  # As[kk][ty] = a[i0 + ty, t + kk], loaded by (tx, ty) as a[i0 + ty, t + tx]
        f"        {{ const int kk = t + tx;\n"
        f"          As[tx][ty] = (row < {m} && kk < {k}) ? a[(long)row * {k} + kk] : 0.0f; }}\n"
    )
    load_b = (
        f"        {{ const int kk = t + ty;\n"
        f"          Bs[ty][tx] = (kk < {k} && col < {c}) ? b[(long)kk * {c} + col] : 0.0f; }}\n"
    )
    inside = f"row < {m} && col < {c}"
    if mode == "squares":
        store = (f"    if ({inside}) y[(long)row * {c} + col] = acc;\n"
                 f"    red[ty][tx] = ({inside}) ? acc * acc : 0.0f;\n")
    else:
        store = f"    red[ty][tx] = ({inside}) ? acc * b[(long)row * {c} + col] : 0.0f;\n"
    source = (
        f"// {name}: [{m}x{k}] @ [{k}x{c}], column sums per tile ({mode})\n"
        f"{kernel_signature(name, args, attributes(tile))}\n{{\n"
        f"{group_header(tile)}"
        f"{tile_loop(k, load_a, load_b, tile)}"
        f"    __local float red[{tile}][{tile + 1}];\n"
        f"{store}"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        f"    for (int s = {tile // 2}; s > 0; s >>= 1) {{\n"
        "        if (ty < s) red[ty][tx] += red[ty + s][tx];\n"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    }\n"
        f"    if (ty == 0 && col < {c}) partials[(long)get_group_id(1) * {c} + col] = red[0][tx];\n"
        "}\n"
    )
    return KernelSource(name, source, args, (round_up(c, tile), round_up(m, tile)), (tile, tile))


def partial_rows(m: int, tile: int = TILE) -> int:
    """Rows of the partials of a ``gemm_column_sums`` over ``m`` rows."""
    return ceil_div(m, tile)


def column_finish(name: str, parts: int, m: int, c: int, mode: str,
                  eps: float = 0.0, tile: int = TILE) -> KernelSource:
    """Adds the ``parts`` partial sums of each column: ``sum`` stores them (``out [c]``);
    ``normalize`` divides ``y [m, c]`` by the square root of them plus ``eps``."""
    check_positive(name, parts=parts, m=m, c=c)
    check_tile(name, tile)
    if mode not in FINISH_MODES:
        raise ValueError(f"kernel '{name}': mode must be one of {FINISH_MODES}, got '{mode}'")
    ins = (KernelArg("partials", "in"), *((KernelArg("y", "in"),) if mode == "normalize" else ()))
    args = (*ins, KernelArg("out", "out"))
    total = (  # the work-group's 16 columns' sums, in sums[tx]: rows of partials by ty, a tree
        f"    __local float red[{tile}][{tile + 1}];\n"
        "    float s = 0.0f;\n"
        f"    if (col < {c}) for (int t = ty; t < {parts}; t += {tile}) "
        f"s += partials[(long)t * {c} + col];\n"
        "    red[ty][tx] = s;\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        f"    for (int h = {tile // 2}; h > 0; h >>= 1) {{\n"
        "        if (ty < h) red[ty][tx] += red[ty + h][tx];\n"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    }\n"
    )
    if mode == "sum":
        body = f"    if (ty == 0 && col < {c}) out[col] = red[0][tx];\n"
        glob = (round_up(c, tile), tile)
    else:
        body = (
            f"    const float denom = sqrt(red[0][tx]) + {float_expression(eps)};\n"
            f"    if (row < {m} && col < {c}) "
            f"out[(long)row * {c} + col] = y[(long)row * {c} + col] / denom;\n"
        )
        glob = (round_up(c, tile), round_up(m, tile))
    source = (
        f"// {name}: column sums of [{parts}x{c}] partials ({mode})\n"
        f"{kernel_signature(name, args, attributes(tile))}\n{{\n"
        f"{group_header(tile)}"
        f"{total}"
        f"{body}"
        "}\n"
    )
    return KernelSource(name, source, args, glob, (tile, tile))
