"""Numerically stable softmax over the last axis: ``out = exp(x - max(x)) / sum(exp(x - max(x)))``.

Parameters: ``x``, ``out`` (``[rows, cols]``, float32; or both of one 16-bit type `dtype`, read
into float32 registers and each result rounded once when stored, `fusec.codegen.kernels.half`:
then the row always takes several work-items, the GPU shapes below, 8 of them where the device
would give one).

With one work-item per row (the CPU default) a row of at most `CPU_REGISTER_ROW` elements is
held in registers (`_registers`): read once as float16 vectors (the tail in float8, float4,
float2, float), the maximum, ``e^(x - max) * 2^64`` in place (`scaled_exp_function`) and the
sum, then the scaled store, one read and one write of memory; as many work-groups as
`CPU_MIN_GROUPS` asks for, so that a few rows still spread over every core. A longer row is
read as float8 vectors in three passes over cache: max, then ``exp`` stored into ``out`` and
summed, then the scaling; ``exp`` of the vectors is
`vector_exp_nonpositive_function` (the built-in's cost dominated; its argument ``x - max`` is
never positive), and a work-item takes two rows side by side when the row count is even, so
that one row's long chain of dependent steps (max, sum, reciprocal) overlaps the other's. With
several work-items per row (the GPU default) they stride over the row and combine partial
results with tree reductions in local memory (in the cached form below, as `combine` says:
`common.RowCombine`, a tree or warp shuffles). When each work-item holds at most
`MAX_CACHED_SLOTS` elements the row stays in registers: a max reduction, then ``exp`` once per
element and a sum reduction, then the scaled store. Longer rows are read twice: the first pass
keeps an online (max, sum of exp) pair per work-item (the sum is rescaled when the max grows)
and merges the pairs the same way; the second pass writes ``exp(x - max) / sum``."""

from __future__ import annotations

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
    CPU_SOFTMAX_GROUP,
    MAX_CACHED_SLOTS,
    ROW_VECTOR_WIDTH,
    Accumulator,
    DeviceInfo,
    KernelArg,
    KernelSource,
    Lanes,
    RowCombine,
    RowGroup,
    RowSlots,
    check_positive,
    default_rows_per_group,
    fold_max,
    fold_sum,
    kernel_signature,
    row_local_size,
    row_pass,
    tree_reduction,
    vector_exp_nonpositive_function,
    warp_shuffles,
)


def softmax(name: str, rows: int, cols: int, local_size: int | None = None,
            device_info: DeviceInfo | None = None,
            rows_per_group: int | None = None,
            rows_per_item: int | None = None, combine: str = "auto",
            dtype: str = "f32") -> KernelSource:
    """A softmax kernel over `rows` rows of `cols` float32 elements.

    A row is handled by `local_size` work-items (default: `default_row_local_size` for
    `device_info`, a CPU when None), and a work-group holds `rows_per_group` rows side by side
    (default: `default_rows_per_group`). With one work-item per row, a work-item takes
    `rows_per_item` rows side by side (it must divide `rows`) and `rows_per_group` counts
    work-items. Rows of at most `CPU_REGISTER_ROW` elements are kept in registers
    (`_registers`; default rows per work-item `register_rows_per_item`, work-items per group
    `register_rows_per_group` rows' worth), longer ones are read in three passes (`_vectorized`;
    default 2 rows per work-item when `rows` is even, else 1). Several work-items of a row
    combine their partials as `combine` says (`common.warp_shuffles`). A 16-bit `dtype` (f16,
    bf16) takes the shapes of several work-items a row (`HALF_CPU_ROW_SIZE` where the device
    would give one)."""
    check_positive(name, rows=rows, cols=cols)
    storage = half.check_dtype(name, dtype)
    size = row_local_size(name, cols, local_size, device_info)
    if half.is_half(dtype) and size == 1:
        size = HALF_CPU_ROW_SIZE
    args = (KernelArg("x", "in", storage), KernelArg("out", "out", storage))
    if size == 1 and cols <= CPU_REGISTER_ROW:
        per_item = rows_per_item or register_rows_per_item(rows, cols)
        check_positive(name, rows_per_item=per_item)
        if rows % per_item:
            raise ValueError(f"kernel '{name}': rows_per_item {per_item} does not divide the "
                             f"{rows} rows")
        group = rows_per_group or register_rows_per_group(rows) // per_item or 1
        check_positive(name, rows_per_group=group)
        return _registers(name, rows, cols, per_item, group, args)
    if size == 1:
        per_item = rows_per_item or (2 if rows % 2 == 0 else 1)
        check_positive(name, rows_per_item=per_item)
        if rows % per_item:
            raise ValueError(f"kernel '{name}': rows_per_item {per_item} does not divide the "
                             f"{rows} rows")
        items = rows // per_item
        group_items = rows_per_group or default_rows_per_group(1, device_info, items,
                                                               cpu=CPU_SOFTMAX_GROUP)
        check_positive(name, rows_per_group=group_items)
        return _vectorized(name, rows, cols, per_item, group_items, args)
    group_rows = rows_per_group or default_rows_per_group(size, device_info, rows)
    check_positive(name, rows_per_group=group_rows)
    layout = RowGroup(rows, cols, size, group_rows)
    slots = RowSlots(cols, size)
    cached = slots.count <= MAX_CACHED_SLOTS  # else the online merge's tree, whatever `combine`
    reduce = RowCombine(name, size, warp_shuffles(device_info, size, combine) if cached else None)
    body = _cached(slots, layout, reduce, dtype) if cached else _streamed(layout, dtype)
    shuffles = f", warp shuffles ({reduce.shuffles})" if reduce.shuffles else ""
    typed = f", {dtype}" if dtype != "f32" else ""
    source = (
        f"// {name}: softmax of [{rows}x{cols}], {layout.summary()}{shuffles}{typed}\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{reduce.helpers({'max': fold_max, 'sum': fold_sum})}"
        f"{kernel_signature(name, args, layout.attribute())}\n{{\n"
        f"{layout.prologue()}"
        f"    __local float scratch[{size * group_rows}];\n"
        f"{reduce.declarations(size * group_rows)}"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, layout.global_size(), layout.local_size())


HALF_CPU_ROW_SIZE = 8
"""Work-items a row of a 16-bit softmax where the device would give one (a CPU): the CPU's
one-work-item shapes read float32 vectors, so a 16-bit one takes the GPU's shape, small. The
lowering gives a CPU float32 copies instead (`lowering.template_ops.lower_softmax`)."""

CPU_REGISTER_ROW = 256
"""Longest row the CPU softmax keeps in registers: 16 float16 vectors of the 32 AVX-512
registers. [6144, 128] on Intel's CPU runtime (kernel time, medians of 30 launches interleaved
in one process): 0.62-0.71x the three-pass float8 kernel. Its time is arithmetic, not memory:
0.116 ms against 0.078 ms for a kernel that only copies the same rows as float16 vectors (p10 of
300 launches, Intel CPU OpenCL, 2 cores)."""

CPU_REGISTER_GROUP = 64
"""Work-items (rows) per work-group of the register softmax when there are rows enough:
[6144, 128] 16 -> 64 made no difference beyond the noise, 128 no better; fewer work-groups
cost Intel's runtime less to schedule."""

CPU_MIN_GROUPS = 8
"""The register softmax makes at least this many work-groups where there are as many rows:
Intel's runtime gives each work-group to one thread, so 64 rows in one group ran on one core."""

REGISTER_WIDTHS = (16, 8, 4, 2, 1)

CPU_PAIRED_CHUNKS = 8
"""The register softmax takes two rows per work-item when the row count is even and a row is
at most this many vectors (128 floats: 16 of the 32 AVX-512 registers for both): one row's
chain of dependent steps (the maximum's and the sum's reductions across the vector, the
reciprocal) overlaps the other's. [6144, 128] on Intel CPU OpenCL, 2 cores: 0.105 against
0.116 ms a row per work-item (p10 of 300 launches, two runs)."""


def register_rows_per_item(rows: int, cols: int) -> int:
    """Rows per work-item of the register softmax: 2 where `CPU_PAIRED_CHUNKS` allows, else 1."""
    return 2 if rows % 2 == 0 and len(register_chunks(cols)) <= CPU_PAIRED_CHUNKS else 1


def register_rows_per_group(rows: int) -> int:
    """Rows per work-group of the register softmax: `CPU_REGISTER_GROUP`, fewer when that
    would leave fewer than `CPU_MIN_GROUPS` work-groups."""
    return max(1, min(CPU_REGISTER_GROUP, rows // CPU_MIN_GROUPS))


def register_chunks(cols: int) -> list[tuple[int, int]]:
    """(offset, width) of the vectors a row of `cols` is read as: float16 while they fit, then
    at most one each of float8, float4, float2, float."""
    widest = REGISTER_WIDTHS[0]
    chunks = [(offset, widest) for offset in range(0, cols // widest * widest, widest)]
    offset = cols // widest * widest
    for width in REGISTER_WIDTHS[1:]:
        if cols - offset >= width:
            chunks.append((offset, width))
            offset += width
    return chunks


def _vector_type(width: int) -> str:
    return "float" if width == 1 else f"float{width}"


def _fold(result: str, chunks: list[tuple[int, str]], combine: str) -> list[str]:
    """Statements reducing the registers `chunks` ((width, name)) to ``const float result``:
    the widest are combined, halved (``.lo``, ``.hi``), combined with the next width, and so
    on down to one float. `combine` is "max" (`_greater`, one term at a time) or "+"."""
    lines, current = [], None
    for width in REGISTER_WIDTHS:
        terms = [f"{current}.lo", f"{current}.hi"] if current else []
        terms += [name for w, name in chunks if w == width]
        if not terms:
            continue
        current = f"{result}_{width}"
        if combine == "+":
            lines.append(f"const {_vector_type(width)} {current} = {' + '.join(terms)};")
            continue
        lines.append(f"{_vector_type(width)} {current} = {terms[0]};")
        lines += [f"{current} = {_greater(current, term)};" for term in terms[1:]]
    lines.append(f"const float {result} = {current};")
    return lines


def _greater(a: str, b: str) -> str:
    """``a > b ? a : b``: one ``vmaxps`` on x86 (``fmax``, which must skip a NaN, costs a compare
    and a blend more). A NaN may be skipped or kept; either way the row's sum is NaN (below)."""
    return f"{a} > {b} ? {a} : {b}"


EXP2_COEFFICIENTS = ("1.326460547305476e-3f", "9.671514784146401e-3f", "5.550734160841023e-2f",
                     "2.402224204193231e-1f", "6.931469772902951e-1f", "1.0f")
"""``2^f`` for ``|f| <= 0.5`` by a degree-5 polynomial (highest power first), fitted for the
least largest relative error, 9.2e-8 in exact arithmetic: one ``fma`` less than Cephes'
degree 6 (1.7e-7 in float32 by its own account; the rounding of float32 steps dominates both)."""

SCALE_EXPONENT = 64
"""The register softmax's exponentials are ``e^(x - max) * 2^64``: normal floats for ``x - max``
down to -131, far below -87.3 where ``e^(x - max)`` itself is subnormal, so no extra multiply
rounds them on the way; the factor cancels in ``e / sum(e)``, whose one rounding is the last."""


def scaled_exp_function(name: str, width: int) -> str:
    """C source of ``float<width> name(float<width> d)``: ``e^d * 2^64`` for ``d <= 0`` (or
    NaN), as softmax takes it of ``d = x - max``; 12 vector operations where
    `vector_exp_nonpositive_function` takes 17 ([6144, 128] softmax kernel on Intel CPU OpenCL,
    2 cores: 0.165 -> 0.111 ms, medians of 300 launches).

    ``d`` is clamped below at -110 (``2^-158.7``, which the normalisation by a sum of at least
    ``2^64`` takes to 0; ``e^-inf`` gives 0) by ``-110 > d ? -110 : d``, one ``vmaxps`` that
    keeps a NaN. ``n = rint(d log2(e))`` comes from ``fma(d, log2(e), 1.5 * 2^23)``, whose
    integer view has ``n`` in its low bits, and ``f = d log2(e) - n`` from a second ``fma``
    (rounded once); ``2^f`` is the `EXP2_COEFFICIENTS` polynomial and ``2^(n + 64)`` is built in
    the exponent bits (``n + 64 + 127`` from 32 to 191, a normal float) as ``(bits + 191) << 23``,
    the sum's high bits shifting out."""
    vtype = _vector_type(width)
    itype = "int" if width == 1 else f"int{width}"
    poly = f"    {vtype} p = {EXP2_COEFFICIENTS[0]};\n" + "".join(
        f"    p = fma(p, f, ({vtype})({c}));\n" for c in EXP2_COEFFICIENTS[1:])
    return f"""#ifndef FUSEC_SCALED_EXP_{name}
#define FUSEC_SCALED_EXP_{name}
inline {vtype} {name}({vtype} d) {{
    d = (-110.0f > d) ? ({vtype})(-110.0f) : d;
    const {vtype} log2_e = 1.44269504088896341f, magic = 12582912.0f;
    const {vtype} shifted = fma(d, log2_e, magic);
    const {vtype} f = fma(d, log2_e, magic - shifted);
{poly}    return p * as_{vtype}((as_{itype}(shifted) + {127 + SCALE_EXPONENT}) << 23);
}}
#endif
"""


def _registers(name: str, rows: int, cols: int, per_item: int, items_per_group: int,
               args: tuple[KernelArg, ...]) -> KernelSource:
    """One work-item per `per_item` consecutive rows, each row in registers: loaded once, its
    maximum, the scaled exponentials (`scaled_exp_function`) in place and their sum, the
    normalised store (one multiply by ``1 / sum``, in which the ``2^64`` cancels: an output
    below the smallest normal float rounds once, as ``e / sum`` does). The rows' statements
    are interleaved step by step."""
    chunks = register_chunks(cols)
    items = rows // per_item
    # One "row" of the layout is the block of `per_item` rows a work-item takes.
    layout = RowGroup(items, per_item * cols, 1, items_per_group)
    widths = sorted({w for _, w in chunks}, reverse=True)
    functions = "".join(scaled_exp_function(f"{name}_exp{w}", w) for w in widths)
    each = range(per_item)
    regs = [[(w, f"v{r}_{i}" if per_item > 1 else f"v{i}") for i, (_, w) in enumerate(chunks)]
            for r in each]
    suffix = [f"{r}" if per_item > 1 else "" for r in each]
    lines = []
    for r in each:
        for (offset, width), (_, reg) in zip(chunks, regs[r], strict=True):
            at = f"base + {r * cols + offset}"
            load = f"x[{at}]" if width == 1 else f"vload{width}(0, x + {at})"
            lines.append(f"{_vector_type(width)} {reg} = {load};")
    for r in each:
        lines += _fold(f"row_max{suffix[r]}", regs[r], "max")
    for r in each:
        lines += [f"{reg} = {name}_exp{width}({reg} - row_max{suffix[r]});"
                  for width, reg in regs[r]]
    for r in each:
        lines += _fold(f"total{suffix[r]}", regs[r], "+")
        lines.append(f"const float inverse_sum{suffix[r]} = 1.0f / total{suffix[r]};")
    for r in each:
        for (offset, width), (_, reg) in zip(chunks, regs[r], strict=True):
            at, value = f"base + {r * cols + offset}", f"{reg} * inverse_sum{suffix[r]}"
            lines.append(f"out[{at}] = {value};" if width == 1 else
                         f"vstore{width}({value}, 0, out + {at});")
    body = "".join(f"    {line}\n" for line in lines)
    rows_text = "one row" if per_item == 1 else f"{per_item} rows"
    source = (
        f"// {name}: softmax of [{rows}x{cols}], {rows_text} per work-item in registers, "
        f"{items_per_group} work-items per work-group\n"
        f"{functions}"
        f"{kernel_signature(name, args, layout.attribute())}\n{{\n"
        f"{layout.prologue()}"
        f"    if (row >= {items}) return;\n"
        f"{body}"
        "}\n"
    )
    return KernelSource(name, source, args, layout.global_size(), layout.local_size())


def _vectorized(name: str, rows: int, cols: int, per_item: int, rows_per_group: int,
                args: tuple[KernelArg, ...]) -> KernelSource:
    """One work-item per `per_item` consecutive rows, reading them as vectors side by side:
    the maxima; ``exp`` stored and summed; the scaling."""
    width = ROW_VECTOR_WIDTH
    exp = f"{name}_exp{width}"
    items = rows // per_item
    # One "row" of the layout is the block of `per_item` rows a work-item takes.
    layout = RowGroup(items, per_item * cols, 1, rows_per_group)
    each = range(per_item)

    def maximum(lanes: Lanes) -> list[str]:
        return [f"{lanes.acc(f'row_max{r}')} = fmax({lanes.acc(f'row_max{r}')}, "
                f"{lanes.load(f'x{r}')});" for r in each]

    def exponentials(lanes: Lanes) -> list[str]:
        function = exp if lanes.width > 1 else "exp"
        statements = []
        for r in each:
            statements += [f"const {lanes.type} e{r} = {function}({lanes.load(f'x{r}')} - "
                           f"row_max{r});",
                           lanes.store(f"e{r}", f"out{r}"), f"{lanes.acc(f'total{r}')} += e{r};"]
        return statements

    def scale(lanes: Lanes) -> list[str]:
        return [lanes.store(f"{lanes.load(f'out{r}')} * inverse_sum{r}", f"out{r}")
                for r in each]

    pointers = "".join(
        f"    __global const float *x{r} = x + base + {r * cols};\n"
        f"    __global float *out{r} = out + base + {r * cols};\n" for r in each)
    inverses = "".join(f"    const float inverse_sum{r} = 1.0f / total{r};\n" for r in each)
    maxima = [Accumulator(f"row_max{r}", "fmax", "-INFINITY") for r in each]
    totals = [Accumulator(f"total{r}", "+", "0.0f") for r in each]
    rows_text = "one row" if per_item == 1 else f"{per_item} rows"
    source = (
        f"// {name}: softmax of [{rows}x{cols}], {rows_text} per work-item, "
        f"{rows_per_group} work-items per work-group\n"
        f"{vector_exp_nonpositive_function(exp, width)}"
        f"{kernel_signature(name, args, layout.attribute())}\n{{\n"
        f"{layout.prologue()}"
        f"    if (row >= {items}) return;\n"
        f"{pointers}"
        f"{row_pass(cols, width, maximum, maxima)}"
        f"{row_pass(cols, width, exponentials, totals)}"
        f"{inverses}"
        f"{row_pass(cols, width, scale)}"
        "}\n"
    )
    return KernelSource(name, source, args, layout.global_size(), layout.local_size())


def _cached(slots: RowSlots, layout: RowGroup, reduce: RowCombine, dtype: str = "f32") -> str:
    count = slots.count
    lines = []
    for s in range(count):
        value = half.load(dtype, "x", f"base + {slots.index(s)}")
        if not slots.always_in_row(s):
            value = f"({slots.guard(s)}) ? {value} : -INFINITY"
        lines.append(f"    const float v{s} = {value};\n")
    local_max = "v0"
    for s in range(1, count):
        local_max = fold_max(local_max, f"v{s}")
    lines.append(reduce.combine("row_max", local_max, "max", fold_max))
    for s in range(count):
        value = f"exp(v{s} - row_max)"
        if not slots.always_in_row(s):
            value = f"({slots.guard(s)}) ? {value} : 0.0f"
        lines.append(f"    const float e{s} = {value};\n")
    lines += [
        reduce.combine("row_sum", " + ".join(f"e{s}" for s in range(count)), "sum", fold_sum),
        "    const float inverse_sum = 1.0f / row_sum;\n",
    ]
    for s in range(count):
        stored = half.store(dtype, "out", f"base + {slots.index(s)}", f"e{s} * inverse_sum")
        store = layout.guarded_store(f"{stored};")
        lines.append(f"    {slots.guarded(s, store)}\n")
    return "".join(lines)


def _streamed(layout: RowGroup, dtype: str = "f32") -> str:
    size = layout.row_size
    loop = f"for (int i = lid; i < {layout.cols}; i += {size})"
    x = half.load(dtype, "x", "base + i")
    stored = half.store(dtype, "out", "base + i", f"exp({x} - row_max) * inverse_sum")
    store = layout.guarded_store(f"{stored};")
    return (
        f"    __local float sum_of[{size * layout.rows_per_group}];\n"
        "    float running_max = -INFINITY, running_sum = 0.0f;\n"
        f"    {loop} {{\n"
        f"        const float v = {x};\n"
        "        if (v > running_max) {\n"
        "            running_sum = running_sum * exp(running_max - v) + 1.0f;\n"
        "            running_max = v;\n"
        "        } else {\n"
        "            running_sum += exp(v - running_max);\n"
        "        }\n"
        "    }\n"
        "    scratch[at + lid] = running_max; sum_of[at + lid] = running_sum;\n"
        f"{tree_reduction(size, 'lid', _merge_online, offset='at + ')}"
        "    const float row_max = scratch[at];\n"
        "    const float inverse_sum = 1.0f / sum_of[at];\n"
        f"    {loop} {{\n"
        f"        {store}\n"
        "    }\n"
    )


def _merge_online(into: str, other: str) -> list[str]:
    """Merge the (max, sum of exp) pair at `other` into the one at `into`."""
    return [
        f"if (sum_of[{other}] > 0.0f) {{",
        f"    const float m = fmax(scratch[{into}], scratch[{other}]);",
        f"    sum_of[{into}] = sum_of[{into}] * exp(scratch[{into}] - m)"
        f" + sum_of[{other}] * exp(scratch[{other}] - m);",
        f"    scratch[{into}] = m;",
        "}",
    ]
