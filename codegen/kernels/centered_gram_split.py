"""The GPU centered Gram ``out = (x - mean)^T (x - mean) * scale`` (x ``[n, d]`` f32) in two
launches, its reduction over the rows split across work-groups and combined exactly.

    gram_slices    x [n, d] -> partials [S, d, d], slice_mean [S, d], slice_resid [S, d]
    gram_combine   partials, slice_mean, slice_resid -> out [d, d]

The rows are cut into ``S`` slices of ``slice_rows`` rows (the last one shorter). A work-group
of ``gram_slices`` owns one 64 x 64 tile ``(ti, tj)``, ``ti <= tj``, of the upper triangle of
tiles, and one slice ``s``: it first takes the slice's means ``m_s`` of its 64 + 64 columns
(the diagonal tile's one set of 64 once), then forms ``C_s = sum_r c_r c_r^T`` over the slice's
rows, ``c_r = x_r - m_s`` centered as the rows are loaded, 16 rows at a time through local
memory, 16 x 16 work-items each holding a 4 x 4 register tile. The diagonal tile's work-groups
also store ``m_s`` and ``e_s = sum_r c_r`` (zero but for the rounding of ``m_s``).

``gram_combine`` adds the slices exactly (Chan's parallel update, extended by the residual sums
so that the rounding of a slice mean enters only to second order): with ``m = sum_s n_s m_s /
n`` and ``d_s = m_s - m``,

    sum_r (x_r - m)(x_r - m)^T = sum_s C_s + d_s e_s^T + e_s d_s^T + n_s d_s d_s^T,

an identity for any ``m``; it differs from the centered Gram by ``n (mean - m)(mean - m)^T``,
second order in the rounding of ``m``, which is summed as ``m_0 + sum_s n_s (m_s - m_0) / n``
(differences, small next to a large common offset). Nothing is ``X^T X - n mu mu^T`` on the
raw data: every product is of centered values, so a large common offset cancels before any
product is formed.
The combine mirrors the tiles below the diagonal (transposed through local memory) and scales.

Every sum is in a fixed order (no atomics): the result is the same bits on every run. Edges
(``d`` not a multiple of 64, ``n`` not a multiple of the slice) are guarded: columns past ``d``
and rows past the slice load zero and store nothing. Portable OpenCL C, run on the CPU device
in CI (``tests/passes/numeric/test_column_stats_numerics.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fusec.codegen.kernels.column_stats import attributes
from fusec.codegen.kernels.common import (
    KernelArg,
    KernelSource,
    ceil_div,
    check_positive,
    float_expression,
    kernel_signature,
    round_up,
)

TILE = 64
"""Rows and columns of a work-group's tile of the Gram."""

SIDE = 16
"""Work-items along each side of a work-group (each owns TILE / SIDE = 4 rows and columns)."""

CHUNK = 16
"""Rows of a slice loaded into local memory at a time (``slice_rows`` is a multiple of it)."""

PARTS = SIDE * SIDE // TILE
"""Work-items that share one column when loading (each takes every PARTS-th row)."""


@dataclass(frozen=True)
class GramSlices:
    """The split of a centered Gram of ``[n, d]`` into slices of ``slice_rows`` rows."""

    n: int
    d: int
    slice_rows: int

    @property
    def slices(self) -> int:
        return ceil_div(self.n, self.slice_rows)

    @property
    def tiles(self) -> int:
        """Tiles along one side of the Gram."""
        return ceil_div(self.d, TILE)

    @property
    def pairs(self) -> int:
        """Tiles ``(ti, tj)`` with ``ti <= tj``."""
        return self.tiles * (self.tiles + 1) // 2

    def check(self, name: str) -> None:
        check_positive(name, n=self.n, d=self.d, slice_rows=self.slice_rows)
        if self.slice_rows % CHUNK:
            raise ValueError(f"kernel '{name}': slice_rows must be a multiple of {CHUNK}, "
                             f"got {self.slice_rows}")


def gram_slices(name: str, n: int, d: int, slice_rows: int) -> KernelSource:
    """Per slice and upper tile: the slice's column means, its centered Gram tile, and (the
    diagonal tiles) the means and the sums of the centered values. See the module docstring."""
    g = GramSlices(n, d, slice_rows)
    g.check(name)
    args = (KernelArg("x", "in"), KernelArg("partials", "out"), KernelArg("slice_mean", "out"),
            KernelArg("slice_resid", "out"))
    full = d % TILE == 0
    rows_left = f"min({slice_rows}, {n} - r0)"
    store = (
        "        vstore4(acc[a], 0, dst + (long)(i0 + ty * 4 + a) * "
        f"{d} + j0 + tx * 4);\n" if full else
        "        { const int i = i0 + ty * 4 + a; float v[4]; vstore4(acc[a], 0, v);\n"
        "          for (int b = 0; b < 4; ++b) { const int j = j0 + tx * 4 + b;\n"
        f"            if (i < {d} && j < {d}) dst[(long)i * {d} + j] = v[b]; }} }}\n"
    )
    source = (
        f"// {name}: centered Gram of [{n}x{d}], {g.slices} slices of {slice_rows} rows, "
        f"{g.pairs} upper {TILE}x{TILE} tiles\n"
        f"{kernel_signature(name, args, attributes(SIDE))}\n{{\n"
        "    const int tx = get_local_id(0), ty = get_local_id(1);\n"
        f"    const int tid = ty * {SIDE} + tx;\n"
        f"    const int c = tid % {TILE}, part = tid / {TILE};\n"
        "    int ti = 0, rest = get_group_id(0);\n"
        f"    while (rest >= {g.tiles} - ti) {{ rest -= {g.tiles} - ti; ++ti; }}\n"
        "    const int tj = ti + rest;\n"
        "    const int diag = ti == tj;\n"
        f"    const int i0 = ti * {TILE}, j0 = tj * {TILE};\n"
        "    const int s = get_group_id(1);\n"
        f"    const int r0 = s * {slice_rows};\n"
        f"    const int rows = {rows_left};\n"
        f"    const int ia = i0 + c, jb = j0 + c;\n"
        f"    const int in_a = ia < {d}, in_b = jb < {d};\n"
        f"    __local float red[2][{PARTS}][{TILE}];\n"
        f"    __local float mean[2][{TILE}];\n"
        "    // The slice's column means: PARTS work-items per column, each every PARTS-th row.\n"
        "    {\n"
        "        float sa = 0.0f, sb = 0.0f;\n"
        f"        for (int r = part; r < rows; r += {PARTS}) {{\n"
        f"            __global const float *row = x + (long)(r0 + r) * {d};\n"
        "            if (in_a) sa += row[ia];\n"
        "            if (!diag && in_b) sb += row[jb];\n"
        "        }\n"
        "        red[0][part][c] = sa;\n"
        "        red[1][part][c] = sb;\n"
        "    }\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        f"    if (tid < {2 * TILE}) {{\n"
        f"        const int set = tid / {TILE};\n"
        "        float t = red[set][0][c];\n"
        f"        for (int p = 1; p < {PARTS}; ++p) t += red[set][p][c];\n"
        "        mean[set][c] = t / (float)rows;\n"
        "    }\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    const float ma = mean[0][c], mb = diag ? ma : mean[1][c];\n"
        f"    __local float4 As[{CHUNK}][{TILE // 4}];\n"
        f"    __local float4 Bs[{CHUNK}][{TILE // 4}];\n"
        "    __local float *as = (__local float *)As, *bs = (__local float *)Bs;\n"
        f"    float ra[{CHUNK // PARTS}], rb[{CHUNK // PARTS}];\n"
        "    float resid = 0.0f;\n"
        "    float4 acc[4] = {(float4)(0.0f), (float4)(0.0f), (float4)(0.0f), (float4)(0.0f)};\n"
        "    // Rows k0 .. k0 + CHUNK - 1 of the slice, centered, into ra and rb (0 past edges).\n"
        "#define LOAD_CHUNK(k0) \\\n"
        f"    for (int m = 0; m < {CHUNK // PARTS}; ++m) {{ \\\n"
        f"        const int r = (k0) + part + {PARTS} * m; \\\n"
        f"        __global const float *row = x + (long)(r0 + r) * {d}; \\\n"
        "        ra[m] = (r < rows && in_a) ? row[ia] - ma : 0.0f; \\\n"
        "        rb[m] = diag ? ra[m] : (r < rows && in_b) ? row[jb] - mb : 0.0f; \\\n"
        "    }\n"
        "    LOAD_CHUNK(0)\n"
        f"    for (int k0 = 0; k0 < rows; k0 += {CHUNK}) {{\n"
        f"        for (int m = 0; m < {CHUNK // PARTS}; ++m) {{\n"
        f"            as[(part + {PARTS} * m) * {TILE} + c] = ra[m];\n"
        f"            bs[(part + {PARTS} * m) * {TILE} + c] = rb[m];\n"
        "            resid += ra[m];\n"
        "        }\n"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        f"        if (k0 + {CHUNK} < rows) {{ LOAD_CHUNK(k0 + {CHUNK}) }}\n"
        f"        for (int k = 0; k < {CHUNK}; ++k) {{\n"
        "            const float4 a = As[k][ty], b = Bs[k][tx];\n"
        "            acc[0] = fma((float4)(a.x), b, acc[0]);\n"
        "            acc[1] = fma((float4)(a.y), b, acc[1]);\n"
        "            acc[2] = fma((float4)(a.z), b, acc[2]);\n"
        "            acc[3] = fma((float4)(a.w), b, acc[3]);\n"
        "        }\n"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    }\n"
        "#undef LOAD_CHUNK\n"
        f"    __global float *dst = partials + (long)s * {d * d};\n"
        "    for (int a = 0; a < 4; ++a)\n"
        f"{store}"
        "    // The diagonal tile's work-groups store the slice's means and residual sums.\n"
        "    if (diag) {\n"
        "        red[0][part][c] = resid;\n"
        "        barrier(CLK_LOCAL_MEM_FENCE);\n"
        f"        if (tid < {TILE} && in_a) {{\n"
        "            float t = red[0][0][c];\n"
        f"            for (int p = 1; p < {PARTS}; ++p) t += red[0][p][c];\n"
        f"            slice_mean[(long)s * {d} + ia] = ma;\n"
        f"            slice_resid[(long)s * {d} + ia] = t;\n"
        "        }\n"
        "    }\n"
        "}\n"
    )
    return KernelSource(name, source, args, (SIDE * g.pairs, SIDE * g.slices), (SIDE, SIDE))


def gram_combine(name: str, n: int, d: int, slice_rows: int, scale: float) -> KernelSource:
    """``out[i, j] = scale * sum_s (C_s + d_s e_s^T + e_s d_s^T + n_s d_s d_s^T)[i, j]``, the
    tiles below the diagonal read from their mirror. See the module docstring."""
    g = GramSlices(n, d, slice_rows)
    g.check(name)
    args = (KernelArg("partials", "in"), KernelArg("slice_mean", "in"),
            KernelArg("slice_resid", "in"), KernelArg("out", "out"))
    source = (
        f"// {name}: the {g.slices} slices of a centered Gram of [{n}x{d}] added, "
        f"scale {scale!r}\n"
        f"{kernel_signature(name, args, attributes(SIDE))}\n{{\n"
        "    const int tx = get_local_id(0), ty = get_local_id(1);\n"
        f"    const int i0 = get_group_id(1) * {SIDE}, j0 = get_group_id(0) * {SIDE};\n"
        f"    const int lower = i0 / {TILE} > j0 / {TILE};\n"
        "    // A work-item adds up element (r, c) of an upper tile: (i0 + ty, j0 + tx), or in a\n"
        "    // lower block its mirror (j0 + ty, i0 + tx), then transposed below.\n"
        "    const int r_base = lower ? j0 : i0, c_base = lower ? i0 : j0;\n"
        "    const int r = r_base + ty, c = c_base + tx;\n"
        "    // mu[0][t], mu[1][t]: the mean m of column r_base + t, c_base + t.\n"
        f"    __local float mu[2][{SIDE}];\n"
        "    if (ty < 2) {\n"
        "        const int j = (ty == 0 ? r_base : c_base) + tx;\n"
        "        // m = m_0 + sum_s n_s (m_s - m_0) / n: the sum of small differences, not of the\n"
        "        // means, whose rounding (n (mean - m)^2 in the result) grows with the offset.\n"
        f"        const float m0 = j < {d} ? slice_mean[j] : 0.0f;\n"
        "        float t = 0.0f;\n"
        f"        if (j < {d}) for (int s = 1; s < {g.slices}; ++s)\n"
        f"            t += (float)min({slice_rows}, {n} - s * {slice_rows}) * "
        f"(slice_mean[(long)s * {d} + j] - m0);\n"
        f"        mu[ty][tx] = m0 + t / {float_expression(float(n))};\n"
        "    }\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    float acc = 0.0f;\n"
        f"    if (r < {d} && c < {d}) {{\n"
        "        const float mr = mu[0][ty], mc = mu[1][tx];\n"
        f"        for (int s = 0; s < {g.slices}; ++s) {{\n"
        f"            const float ns = (float)min({slice_rows}, {n} - s * {slice_rows});\n"
        f"            const float dr = slice_mean[(long)s * {d} + r] - mr;\n"
        f"            const float dc = slice_mean[(long)s * {d} + c] - mc;\n"
        f"            const float er = slice_resid[(long)s * {d} + r];\n"
        f"            const float ec = slice_resid[(long)s * {d} + c];\n"
        f"            acc += partials[(long)s * {d * d} + (long)r * {d} + c]\n"
        "                 + (dr * ec + er * dc + ns * dr * dc);\n"
        "        }\n"
        "    }\n"
        f"    __local float flip[{SIDE}][{SIDE + 1}];\n"
        "    flip[ty][tx] = acc;\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    if (lower) acc = flip[tx][ty];\n"
        f"    const int i = i0 + ty, j = j0 + tx;\n"
        f"    if (i < {d} && j < {d}) out[(long)i * {d} + j] = acc * {float_expression(scale)};\n"
        "}\n"
    )
    side = round_up(d, SIDE)
    return KernelSource(name, source, args, (side, side), (SIDE, SIDE))
