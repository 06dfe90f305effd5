"""CPU shapes of the column-statistics kernels (``column_stats.py`` has the GPU ones, and the
meaning of each kernel): register tiles, no local memory and no barriers.

A work-item keeps ``rows`` output rows by a ``W``-wide run of columns in ``floatW`` registers
and streams over the reduction, broadcasting one element of the left operand against a
``W``-wide slice of the right one per step (as the CPU GEMM does). Out-of-range rows are
clamped to the last row (computed, never stored or summed); a run of columns at the right edge
is shifted back inside the matrix, so every vector load is in bounds, and stores only the
columns no other work-item owns. The partial column sums are per work-item: one row of
partials per ``rows`` output rows.
"""

from __future__ import annotations

from collections.abc import Callable

from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    ceil_div,
    check_positive,
    kernel_signature,
)

FINISH_ROWS = 64
"""Rows one work-item of the normalize kernel divides."""


def width_for(c: int) -> int:
    """Floats per vector of a run of columns: 8 (AVX2), or the largest power of 2 <= c."""
    w = 1
    while w * 2 <= min(c, 8):
        w *= 2
    return w


def vtype(w: int) -> str:
    return "float" if w == 1 else f"float{w}"


def vload(w: int, pointer: str) -> str:
    """A ``W``-wide load at ``pointer``."""
    return f"(*({pointer}))" if w == 1 else f"vload{w}(0, {pointer})"


def header(rows: int, m: int, c: int, w: int) -> str:
    """Tile indices: ``j0`` (owned first column), ``js`` (shifted first column), ``i0`` and
    the clamped rows ``r<ii>``."""
    lines = [
        f"    const int j0 = get_global_id(0) * {w};",
        f"    const int js = min(j0, {c - w});",
        f"    const int i0 = get_global_id(1) * {rows};",
    ]
    lines += [f"    const int r{ii} = min(i0 + {ii}, {m - 1});" for ii in range(rows)]
    return "\n".join(lines) + "\n"


def store_run(w: int, value: str, target: str) -> str:
    """Stores the owned lanes (``j0 - js`` on) of vector ``value`` at ``target[js + lane]``."""
    return (
        f"        {{ float lanes[{w}]; "
        + (f"lanes[0] = {value}; " if w == 1 else f"vstore{w}({value}, 0, lanes); ")
        + f"for (int l = j0 - js; l < {w}; ++l) {target.replace('LANE', 'js + l')} = lanes[l]; }}\n"
    )


def stream(rows: int, k: int, w: int, a: Callable[[int], str], b: str) -> str:
    """Accumulators ``acc<ii>`` of ``sum_kk a(ii) * b``: ``a(ii)`` is the C expression of the
    left operand's element for tile row ``ii`` at step ``kk``, ``b`` the right operand's
    ``W``-wide slice at ``kk``."""
    t = vtype(w)
    lines = [f"    {t} acc{ii} = ({t})(0.0f);" for ii in range(rows)]
    lines.append(f"    for (int kk = 0; kk < {k}; ++kk) {{")
    lines.append(f"        const {t} bv = {b};")
    lines += [f"        acc{ii} += ({a(ii)}) * bv;" for ii in range(rows)]
    lines.append("    }")
    return "\n".join(lines) + "\n"


def geometry(c: int, m: int, w: int, rows: int) -> tuple[int, int]:
    return ceil_div(c, w), ceil_div(m, rows)


def centered_gram_cpu(name: str, n: int, d: int, scale: str, rows: int) -> KernelSource:
    """See ``column_stats.centered_gram``; ``scale`` is a C float expression.

    The Gram is symmetric: where the tiles are square and aligned (``W == rows`` and ``d`` a
    multiple of it, so no run is shifted and no row clamped), a tile wholly below the diagonal
    returns at once and the mirror tile above it stores its transpose too: half the work."""
    check_positive(name, rows=n, cols=d, tile=rows)
    w = width_for(d)
    t = vtype(w)
    symmetric = w == rows and d % w == 0
    args = (KernelArg("x", "in"), KernelArg("mean", "in"), KernelArg("out", "out"))
    skip = f"    if (i0 >= j0 + {w}) return;  // below the diagonal: the mirror tile stores it\n"
    means = "".join(f"    const float m{ii} = mean[r{ii}];\n" for ii in range(rows))
    body = stream(rows, n, w, lambda ii: f"x[(long)kk * {d} + r{ii}] - m{ii}",
                  f"{vload(w, f'x + (long)kk * {d} + js')} - mv")
    stores = "".join(
        f"    if (i0 + {ii} < {d})\n"
        + store_run(w, f"acc{ii} * {scale}", f"out[(long)(i0 + {ii}) * {d} + LANE]")
        for ii in range(rows))
    if symmetric:
        stores += f"    if (i0 + {rows} <= j0) {{  // above the diagonal: the mirror too\n"
        for ii in range(rows):
            stores += (f"        {{ float lanes[{w}]; vstore{w}(acc{ii} * {scale}, 0, lanes);\n"
                       f"          for (int l = 0; l < {w}; ++l) "
                       f"out[(long)(j0 + l) * {d} + i0 + {ii}] = lanes[l]; }}\n")
        stores += "    }\n"
    source = (
        f"// {name}: centered Gram of [{n}x{d}] (CPU register tiles {rows}x{w}"
        f"{', symmetric' if symmetric else ''})\n"
        f"{kernel_signature(name, args)}\n{{\n"
        f"{header(rows, d, d, w)}{skip if symmetric else ''}{means}"
        f"    const {t} mv = {vload(w, 'mean + js')};\n"
        f"{body}{stores}}}\n"
    )
    return KernelSource(name, source, args, geometry(d, d, w, rows), None)


def gemm_column_sums_cpu(name: str, m: int, k: int, c: int, mode: str,
                         rows: int) -> KernelSource:
    """See ``column_stats.gemm_column_sums``: one row of partials per ``rows`` rows."""
    check_positive(name, m=m, k=k, c=c, tile=rows)
    w = width_for(c)
    t = vtype(w)
    outs = (KernelArg("y", "out"),) if mode == "squares" else ()
    args = (KernelArg("a", "in"), KernelArg("b", "in"), *outs, KernelArg("partials", "out"))
    body = stream(rows, k, w, lambda ii: f"a[(long)r{ii} * {k} + kk]",
                  vload(w, f"b + (long)kk * {c} + js"))
    tail = f"    {t} psum = ({t})(0.0f);\n"
    for ii in range(rows):
        own = f"i0 + {ii} < {m}"
        if mode == "squares":
            tail += f"    if ({own}) {{\n"
            tail += store_run(w, f"acc{ii}", f"y[(long)(i0 + {ii}) * {c} + LANE]")
            tail += f"        psum += acc{ii} * acc{ii};\n    }}\n"
        else:
            weight = vload(w, f"b + (long)r{ii} * {c} + js")
            tail += f"    if ({own}) psum += acc{ii} * {weight};\n"
    tail += store_run(w, "psum", f"partials[(long)get_global_id(1) * {c} + LANE]")
    source = (
        f"// {name}: [{m}x{k}] @ [{k}x{c}], column sums per {rows} rows ({mode}, CPU)\n"
        f"{kernel_signature(name, args)}\n{{\n"
        f"{header(rows, m, c, w)}{body}{tail}}}\n"
    )
    return KernelSource(name, source, args, geometry(c, m, w, rows), None)


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
    if mode == "sum":
        body = "    out[j] = s;\n"
        glob: tuple[int, ...] = (c,)
    else:
        body = (
            f"    const float denom = sqrt(s) + {eps};\n"
            f"    const int r0 = get_global_id(1) * {FINISH_ROWS};\n"
            f"    const int r1 = min(r0 + {FINISH_ROWS}, {m});\n"
            f"    for (int r = r0; r < r1; ++r)\n"
            f"        out[(long)r * {c} + j] = y[(long)r * {c} + j] / denom;\n"
        )
        glob = (c, ceil_div(m, FINISH_ROWS))
    source = (
        f"// {name}: column sums of [{parts}x{c}] partials ({mode}, CPU)\n"
        f"{kernel_signature(name, args)}\n{{\n{total}{body}}}\n"
    )
    return KernelSource(name, source, args, glob, None)
