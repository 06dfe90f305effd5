"""A product of a few rows on a GPU (a decode step's projections): ``C = epilogue(A @ B)``,
``A: [rows, K]`` with ``rows <= MAX_ROWS``, ``B: [K, N]`` shared, ``C: [rows, N]``. The
lowering chooses it (the ``gemm`` template's ``skinny`` parameter, `lowering.template_ops.gemm`).

With one to eight rows every element of B is used once or a few times: the product is a read of
B, and its speed is the memory bandwidth. The tiled kernels of `gemm` spend a 64-row tile of
work (or a tensor-core tile) on each row and leave most of a GPU idle; splitting them along K
adds a second launch. Here a work-group of ``group_n x group_k`` work-items owns
``group_n * columns`` columns of C: each work-item reads ``columns`` adjacent elements of
every ``group_k``-th row of B (a warp reads contiguous bytes of one row), multiplies them with
the rows' elements of A (the same address across a warp: one broadcast read) and keeps
``rows x columns`` float accumulators; the ``group_k`` partial sums of each output are then
added in local memory and stored through the epilogue, one work-item per output. The shape
is `skinny_shape`'s, measured.

The accumulation is float32 whatever the operands' type, and each result is rounded once when
stored, as in `gemm`.
"""

from __future__ import annotations

from fusec.codegen.kernels import gemm_wgmma, half
from fusec.codegen.kernels.common import (
    IDENTITY_EPILOGUE,
    Epilogue,
    KernelArg,
    KernelSource,
    ceil_div,
    check_epilogue_names,
    check_positive,
    kernel_signature,
)

MAX_ROWS = 16
"""Most rows (``batch * M``) the kernel takes."""

LOCAL_BYTES = 32 << 10
"""Most local memory the partial sums (``group_k x rows x group_n * columns`` floats) take."""

WIDE = 16384
"""Columns from which a product (a vocabulary's logits) has work-groups enough to fill a GPU
without sharing K among many work-items (`skinny_shape`)."""


def skinny_shape(rows: int, n: int) -> tuple[int, ...]:
    """The work-group shape ``(group_n, group_k, columns[, depth])`` for `rows` x `n`
    outputs: 32 columns of one work-item each and K shared by 32 lanes (16 above 8 rows) in
    runs of depth 4; for a `WIDE` product 64 columns and 8 lanes of K at 1-2 rows, 128 columns
    beyond.

    On an H200 (2026-12-02, f16, bench/results/h200-2026-12-02-s9-decode.log (c) and (e), 12
    shapes tried) 32x32x1x4 was the fastest or within 10% of it on the projections of GPT-2
    small and of a Llama-style model of width 2048 at 1 and 8 rows but Llama's up projection
    at 1 row (0.0203 ms, 16x32x2x4 0.0157) and the vocabulary heads; at 8 rows the runs of
    depth 4 took 0.65-0.85x the time of every 32nd row one at a time (GPT-2's fc2 0.0217 ms
    against 0.0307, cuBLAS 0.0455). The heads: 1 row of GPT-2's 0.0278 ms with 32x8x2 (cuBLAS
    0.0445), 8 rows 0.0447 with 32x8x4 (cuBLAS 0.0784)."""
    if n >= WIDE:
        return (32, 8, 2) if rows <= 2 else (32, 8, 4)
    return (32, 32, 1, 4) if rows <= 8 else (32, 16, 1, 4)


RESERVED_NAMES = frozenset({"tx", "ky", "t", "col0", "col", "kk", "o", "r", "s", "w", "x",
                            "part", "total", "end"})
"""Identifiers the kernel body declares besides ``acc<r>_<j>`` and ``w<j>``; epilogue
parameters must not use them."""


def gemm_skinny(name: str, rows: int, n: int, k: int, epilogue: Epilogue, dtype: str = "f32",
                out_dtype: str | None = None, shape: tuple[int, ...] | None = None,
                swiglu: bool = False) -> KernelSource:
    """``out = epilogue(lhs @ rhs)`` for ``lhs [rows, k]``, ``rhs [k, n]`` of element type
    `dtype`, ``out [rows, n]`` of `out_dtype` (default `dtype`); see the module docstring. The
    epilogue sees the row and the column of each output. `shape` ``(group_n, group_k,
    columns[, depth])`` replaces `skinny_shape`'s (bench/skinny_sweep.py tries others); with
    ``depth`` 4 each lane of K takes one contiguous run of rows of B, 4 at a time, reading
    its 4 elements of each row of A as one vector (`_runs_of_depth`), instead of every
    ``group_k``-th row. With `swiglu`, ``out [rows, n / 2]`` holds the SwiGLU of B's
    interleaved gate and up columns, as `gemm_skinny_k_major`'s (`_swiglu_pairs`)."""
    group_n, group_k, columns, *rest = shape or skinny_shape(rows, n)
    depth = rest[0] if rest else 1
    if depth not in (1, 4):
        raise ValueError(f"kernel '{name}': depth {depth} is not 1 or 4")
    _check_swiglu(name, swiglu, n, group_n * columns, epilogue)
    check_positive(name, rows=rows, n=n, k=k, group_n=group_n, group_k=group_k,
                   columns=columns)
    _check_rows(name, rows)
    if group_k * rows * group_n * columns * 4 > LOCAL_BYTES:
        raise ValueError(f"kernel '{name}': work-groups of {group_n}x{group_k}x{columns} at "
                         f"{rows} rows need more than {LOCAL_BYTES} bytes of local memory")
    check_epilogue_names(name, epilogue, RESERVED_NAMES, r"(acc\d+_\d+|w\d+(_\d+)?)",
                         "the registers acc<r>_<j>, w<j>, w<j>_<t>")
    result, args = _arguments(name, dtype, out_dtype, epilogue)
    width = group_n * columns
    lanes, adjacent = range(rows), range(columns)
    accumulators = "".join(f"    float acc{r}_{j} = 0.0f;\n" for r in lanes for j in adjacent)
    weights = "".join(
        f"            const float w{j} = col0 + {j} < {n} ? "
        f"{half.load(dtype, 'rhs', f'kk * {n} + col0 + {j}')} : 0.0f;\n" for j in adjacent)
    products = "".join(
        f"            {{ const float x = {half.load(dtype, 'lhs', f'{r} * {k} + kk')};"
        + "".join(f" acc{r}_{j} = mad(x, w{j}, acc{r}_{j});" for j in adjacent) + " }\n"
        for r in lanes)
    partials = "".join(f"    part[ky][{r}][tx * {columns} + {j}] = acc{r}_{j};\n"
                       for r in lanes for j in adjacent)
    if depth == 1:
        loop = (f"        #pragma unroll 4\n"
                f"        for (int kk = ky; kk < {k}; kk += {group_k}) {{\n"
                f"{weights}{products}        }}\n")
    else:
        loop = _runs_of_depth(rows, n, k, group_k, columns, dtype, weights, products)
    first = f"get_group_id(0) * {width}"
    if swiglu:
        reduce = _swiglu_pairs(rows, width, (f"ky * {group_n} + tx", group_n * group_k), n,
                               first, [f"part[{i}][r][{{}}]" for i in range(group_k)], result)
    else:
        total = " + ".join(f"part[{i}][r][o % {width}]" for i in range(group_k))
        value = epilogue.call("total", "r", "col")
        reduce = f"""\
    for (int o = ky * {group_n} + tx; o < {rows * width}; o += {group_n * group_k}) {{
        const int r = o / {width};
        const int col = {first} + o % {width};
        if (col < {n}) {{
            const float total = {total};
            {half.store(result, "out", f"r * {n} + col", value)};
        }}
    }}
"""
    body = f"""\
    const int tx = get_local_id(0), ky = get_local_id(1);
    const int col0 = get_group_id(0) * {width} + tx * {columns};
{accumulators}    if (col0 < {n}) {{
{loop}    }}
    __local float part[{group_k}][{rows}][{width}];
{partials}    barrier(CLK_LOCAL_MEM_FENCE);
{reduce}"""
    attribute = f"__attribute__((reqd_work_group_size({group_n}, {group_k}, 1)))"
    helpers = half.HELPERS if half.is_half(dtype) or half.is_half(result) else ""
    source = (
        f"// {name}: [{rows}x{k}] @ [{k}x{n}], skinny ({group_n}x{group_k} work-items, "
        f"{width} columns per work-group), {dtype}"
        f"{', SwiGLU of column pairs' if swiglu else ''}\n"
        f"{helpers}{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (ceil_div(n, width) * group_n, group_k),
                        (group_n, group_k))


def _check_rows(name: str, rows: int) -> None:
    if rows > MAX_ROWS:
        raise ValueError(f"kernel '{name}': {rows} rows; the skinny product takes at most "
                         f"{MAX_ROWS}")


def _arguments(name: str, dtype: str, out_dtype: str | None,
               epilogue: Epilogue) -> tuple[str, tuple[KernelArg, ...]]:
    """The result's element type (`out_dtype`, default `dtype`) and the kernel's arguments:
    ``lhs``, ``rhs`` of `dtype`, ``out``, the epilogue's."""
    storage = half.check_dtype(name, dtype)
    result = out_dtype or dtype
    if result not in half.BUFFER_TYPES:
        raise ValueError(f"kernel '{name}': unknown result element type '{result}'")
    return result, (KernelArg("lhs", "in", storage), KernelArg("rhs", "in", storage),
                    KernelArg("out", "out", half.BUFFER_TYPES[result]), *epilogue.params)


def _runs_of_depth(rows: int, n: int, k: int, group_k: int, columns: int, dtype: str,
                   weights: str, products: str) -> str:
    """The K loop of ``depth`` 4: lane ``ky`` takes rows ``[ky * run, (ky + 1) * run)`` of B
    (``run`` a multiple of 4), 4 at a time with A's 4 elements of each row read as one
    vector, then the rest one at a time (`weights` and `products`, the depth-1 statements)."""
    run = -(-k // group_k)
    run += -run % 4
    lanes, adjacent, steps = range(rows), range(columns), range(4)
    four_weights = "".join(
        f"            const float w{j}_{t} = col0 + {j} < {n} ? "
        f"{half.load(dtype, 'rhs', f'(kk + {t}) * {n} + col0 + {j}')} : 0.0f;\n"
        for t in steps for j in adjacent)
    four_products = "".join(
        f"            {{ const float4 x = {half.vload(dtype, 4, '0', f'lhs + {r} * {k} + kk')};"
        + "".join(f" acc{r}_{j} = mad(x.s{t}, w{j}_{t}, acc{r}_{j});"
                  for t in steps for j in adjacent) + " }\n"
        for r in lanes)
    return (f"        const int end = min({k}, (ky + 1) * {run});\n"
            f"        int kk = ky * {run};\n"
            f"        for (; kk + 4 <= end; kk += 4) {{\n{four_weights}{four_products}        }}\n"
            f"        for (; kk < end; ++kk) {{\n{weights}{products}        }}\n")


K_MAJOR_RESERVED = frozenset({"lane", "warp", "col0", "kk", "o", "r", "col", "i", "x", "total",
                              "part", "p", "gate", "up"})
"""Identifiers the K-major kernel declares besides ``acc<r>_<j>`` and ``w<j>``."""

K_MAJOR_VECTOR = 8
"""Elements of K each lane reads at once from a row of B ``[N, K]`` (16 bytes of f16)."""


def k_major_shape(rows: int, n: int) -> tuple[int, int]:
    """The work-group shape ``(warps, columns)`` of `gemm_skinny_k_major`: 4 warps of 32
    lanes, each warp 2 adjacent columns of C at 1-2 rows and above 8, 4 columns from 3 to 8.

    On an H200 (2026-12-02, f16, bench/results/h200-2026-12-02-s10-decode.log (b), 8 shapes
    tried on the projections of GPT-2 small and a Llama-style model of width 2048) 4x2 was the
    fastest or within 15% of it at 1 row (GPT-2's fc2 0.0094 ms, 32x32x1x4 on B as it is
    0.0117, cuBLAS 0.0262) and 4x4 at 8 rows (fc2 0.0194, 0.0216, 0.0348)."""
    return (4, 4) if 2 < rows <= 8 else (4, 2)


def reads_k_major(k: int) -> bool:
    """Whether a product of depth `k` can take `gemm_skinny_k_major` (rows of B ``[N, K]``
    read `K_MAJOR_VECTOR` elements at a time, so K a multiple of it)."""
    return k % K_MAJOR_VECTOR == 0


def gemm_skinny_k_major(name: str, rows: int, n: int, k: int, epilogue: Epilogue,
                        dtype: str = "f32", out_dtype: str | None = None,
                        shape: tuple[int, int] | None = None,
                        swiglu: bool = False, halves: str | None = None) -> KernelSource:
    """``out = epilogue(lhs @ rhs)`` as `gemm_skinny`, with B stored transposed, ``rhs [n,
    k]`` (K-major: a bound weight stored so once, `common.BOUND_B_PANELS`, which the
    tensor-core kernels of a prefill read too). A work-group of ``warps`` x 32 lanes; each
    warp owns `columns` adjacent columns of C and its 32 lanes split K, each reading
    `K_MAJOR_VECTOR` contiguous elements of a column's row of B at a time (a warp reads 512
    contiguous bytes of f16) and the same elements of each row of A; the 32 partial sums of
    each output are added in local memory by one lane and stored through the epilogue.

    With `swiglu` (no epilogue of its own) B's gate and up columns are interleaved pairwise
    (column ``2 j`` gate ``j``, ``2 j + 1`` up ``j``: `fusec.codegen.swiglu_epilogue`, as the
    tensor-core kernel reads them) and ``out [rows, n / 2]`` holds ``up * silu(gate)`` of each
    pair, computed from the float sums as `gemm_wgmma`'s SwiGLU epilogue does; with `halves`
    B holds its two halves as they are and column ``c`` reads row `gemm_wgmma.b_row` of it,
    as the tensor-core kernel's `halves` does."""
    warps, columns = shape or k_major_shape(rows, n)
    if halves is not None and (not swiglu or halves not in ("first", "second")):
        raise ValueError(f"kernel '{name}': B stored in halves ({halves!r}) takes the SwiGLU "
                         "epilogue, the gate's half 'first' or 'second'")
    _check_swiglu(name, swiglu, n, columns, epilogue)
    check_positive(name, rows=rows, n=n, k=k, warps=warps, columns=columns)
    _check_rows(name, rows)
    if not reads_k_major(k):
        raise ValueError(f"kernel '{name}': K {k} is not a multiple of {K_MAJOR_VECTOR}")
    outputs = rows * columns
    if warps * outputs * 33 * 4 > LOCAL_BYTES:
        raise ValueError(f"kernel '{name}': {warps} warps of {columns} columns at {rows} rows "
                         f"need more than {LOCAL_BYTES} bytes of local memory")
    check_epilogue_names(name, epilogue, K_MAJOR_RESERVED, r"(acc\d+_\d+|w\d+)",
                         "the registers acc<r>_<j>, w<j>")
    result, args = _arguments(name, dtype, out_dtype, epilogue)
    vector, lanes, adjacent = K_MAJOR_VECTOR, range(rows), range(columns)

    def row(j: int) -> str:  # B's row of the warp's column j
        column = f"min(col0 + {j}, {n - 1})"
        return column if halves is None else gemm_wgmma.b_row(column, n, halves)

    steps = range(vector)
    accumulators = "".join(f"    float acc{r}_{j} = 0.0f;\n" for r in lanes for j in adjacent)
    weights = "".join(
        f"        const float{vector} w{j} = "
        f"{half.vload(dtype, vector, f'({row(j)} * {k} + kk) / {vector}', 'rhs')};\n"
        for j in adjacent)
    products = "".join(
        f"        {{ const float{vector} x = "
        f"{half.vload(dtype, vector, f'({r} * {k} + kk) / {vector}', 'lhs')};"
        + "".join(f" acc{r}_{j} = mad(x.s{t}, w{j}.s{t}, acc{r}_{j});"
                  for j in adjacent for t in steps) + " }\n"
        for r in lanes)
    partials = "".join(f"    part[warp][{r * columns + j}][lane] = acc{r}_{j};\n"
                       for r in lanes for j in adjacent)
    if swiglu:
        reduce = _swiglu_pairs(rows, columns, ("lane", 32), n, "col0",
                               [f"part[warp][r * {columns} + {{}}][{i}]" for i in range(32)],
                               result)
    else:
        total = " + ".join(f"part[warp][o][{i}]" for i in range(32))
        value = epilogue.call("total", "r", "col")
        reduce = f"""    for (int o = lane; o < {outputs}; o += 32) {{
        const int r = o / {columns};
        const int col = col0 + o % {columns};
        if (col < {n}) {{
            const float total = {total};
            {half.store(result, "out", f"r * {n} + col", value)};
        }}
    }}
"""
    body = f"""\
    const int lane = get_local_id(0), warp = get_local_id(1);
    const int col0 = (get_group_id(0) * {warps} + warp) * {columns};
{accumulators}    for (int kk = lane * {vector}; kk < {k}; kk += {32 * vector}) {{
{weights}{products}    }}
    __local float part[{warps}][{outputs}][33];
{partials}    barrier(CLK_LOCAL_MEM_FENCE);
{reduce}"""
    attribute = f"__attribute__((reqd_work_group_size(32, {warps}, 1)))"
    helpers = half.HELPERS if half.is_half(dtype) or half.is_half(result) else ""
    source = (
        f"// {name}: [{rows}x{k}] @ [{n}x{k}]^T, skinny K-major ({warps} warps of "
        f"{columns} columns), {dtype}{', SwiGLU of column pairs' if swiglu else ''}"
        f"{f', B in halves ({halves} even)' if halves else ''}\n"
        f"{helpers}{epilogue.guarded_function()}\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (32 * ceil_div(n, warps * columns), warps),
                        (32, warps))


def _check_swiglu(name: str, swiglu: bool, n: int, columns: int, epilogue: Epilogue) -> None:
    """A SwiGLU of column pairs needs an even N, an even number of `columns` per work-group
    or warp (each holds whole pairs) and no epilogue of its own."""
    if swiglu and (n % 2 or columns % 2 or epilogue is not IDENTITY_EPILOGUE):
        raise ValueError(f"kernel '{name}': a SwiGLU of column pairs needs an even N and "
                         f"columns and no epilogue of its own (N {n}, {columns} columns)")


def _swiglu_pairs(rows: int, columns: int, lanes: tuple[str, int], n: int, first: str,
                  partials: list[str], result: str) -> str:
    """The stores of a skinny product with ``swiglu``, over the `columns` adjacent columns of
    C that a work-group (or a warp) owns from column `first`: work-item ``o`` (from
    ``lanes[0]`` in steps of ``lanes[1]``) adds the partial sums (`partials`, each with
    ``{}`` for the column within the `columns`) of row ``o / (columns / 2)``'s gate and up
    columns of pair ``p = o % (columns / 2)`` and stores ``up * silu(gate)`` at column
    ``(first + 2 p) / 2`` of ``out [rows, n / 2]``, as `gemm_wgmma`'s SwiGLU epilogue does."""
    pairs = columns // 2
    gate = " + ".join(part.format("2 * p") for part in partials)
    up = " + ".join(part.format("2 * p + 1") for part in partials)
    value = "up * (gate * (1.0f / (1.0f + exp(-gate))))"
    start, stride = lanes
    return f"""    for (int o = {start}; o < {rows * pairs}; o += {stride}) {{
        const int r = o / {pairs}, p = o % {pairs};
        const int col = {first} + 2 * p;
        if (col < {n}) {{
            const float gate = {gate};
            const float up = {up};
            {half.store(result, "out", f"r * {n // 2} + col / 2", value)};
        }}
    }}
"""
