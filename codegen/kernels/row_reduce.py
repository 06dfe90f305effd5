"""Reduce-then-broadcast over rows: a ``fused.row_reduce`` body in one kernel.

``out[row, c] = final(inputs at (row, c), r_0, ..., r_{R-1})`` where ``r_j`` is the reduction
(sum, mean, max or min) over the row of ``stage_j(inputs at (row, c), r_0, ..., r_{j-1})``.
The stage functions are C functions the caller emits (``codegen/row_functions.py``); this
template only visits the rows: once per reduction, then once to store. The row stays in cache
between the visits (a row of 16K floats is 64 KiB).

Parameters: the inputs in order (``in0``, ...), then ``out`` (``[rows, cols]``). Each buffer
has its element type (`BUFFER_TYPES`: f32, f16, bf16, i32, i8, i1): a 16-bit float is read as
a float and ``out`` written rounded to nearest even (`fusec.codegen.kernels.half`); the stage
functions take each value in its register type (``float``, ``int``, ``char``) and the
reductions fold floats.
Each input has a row offset (a C expression of ``row``, the index of the row's first element
in that input) and a column stride (1: one value per column; 0: one value per row; more for a
row along another axis than the last), which together express numpy broadcasting of the input
to ``[rows, cols]``. ``out`` is ``[rows, cols]`` too unless an ``out_layout`` says how a row
along another axis is stored (strided rows are read and stored one element at a time).

On a CPU (or an unknown device) a work-item takes a row and reads it as vectors of `width`
floats (when vector stage functions are given), then one at a time for the remainder. On a GPU
a work-group of `local_size` work-items strides over a row and combines its partial results as
`combine` says (`common.RowCombine`: a tree in local memory, or warp shuffles). A ``max`` or
``min`` is NaN when any element is (numpy's semantics; OpenCL's ``fmax`` would drop it), and a
mean is the sum times ``1 / cols``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
    DeviceInfo,
    KernelArg,
    KernelSource,
    RowCombine,
    check_positive,
    default_row_local_size,
    float_literal,
    round_up,
    warp_shuffles,
)

ROW_REDUCE_KINDS = ("sum", "mean", "max", "min")

CPU_ROWS_PER_GROUP = 16
"""Work-items (rows) per work-group on a CPU, as the CPU softmax (`CPU_SOFTMAX_GROUP`)."""

INIT = {"sum": "0.0f", "mean": "0.0f", "max": "-INFINITY", "min": "INFINITY"}

BUFFER_TYPES = half.BUFFER_TYPES


def check_dtype(name: str, dtype: str) -> None:
    if dtype not in BUFFER_TYPES:
        raise ValueError(f"kernel '{name}': unknown element type '{dtype}' "
                         f"(known: {', '.join(BUFFER_TYPES)})")


@dataclass(frozen=True)
class RowInput:
    """How one input is read at (``row``, ``c``): ``name[row_offset + c * column_stride]``."""

    def at(self, column: str) -> str:
        """The index of (``row``, ``column``) in the buffer."""
        if not self.column_stride:
            return self.row_offset
        step = column if self.column_stride == 1 else f"{column} * {self.column_stride}"
        return f"{self.row_offset} + {step}"

    name: str
    row_offset: str
    column_stride: int
    dtype: str = "f32"
    """Its element type (a key of `BUFFER_TYPES`)."""


@dataclass(frozen=True)
class RowStage:
    """One visit of the row: the C functions it calls on each element (``scalar`` on floats,
    ``vector`` on ``float<width>`` or None), and the reduction it folds them with (None for the
    last stage, which stores). Stage ``j`` takes the inputs, then ``r_0 .. r_{j-1}``."""

    scalar: str
    vector: str | None
    kind: str | None
    keeps: bool = False
    """The last reduction stage stores each value it folds into ``out`` (where the row's
    results go), and the store stage reads it back as its last argument instead of computing
    it again (softmax's ``exp(x - max)``, computed once)."""


def combine(kind: str, a: str, b: str) -> str:
    """C expression folding ``b`` into ``a`` (scalars or vectors alike)."""
    if kind in ("sum", "mean"):
        return f"{a} + {b}"
    # ``b`` replaces ``a`` when it is larger (smaller), or NaN; a NaN ``a`` stays. Of two equal
    # zeros, +0 is the larger (IEEE 754-2019 maximum): ``b`` replaces a -0 ``a`` (for max), or
    # replaces ``a`` when ``b`` is -0 (for min), so the sign does not depend on the order.
    compare, negative = ("isgreater", a) if kind == "max" else ("isless", b)
    return (f"select({a}, {b}, {compare}({b}, {a}) | isnan({b}) | "
            f"(({b} == {a}) & signbit({negative})))")


def ordered_combine(kind: str, a: str, b: str) -> str:
    """`combine` for a max or min over values that are neither NaN nor zero: the larger
    (smaller) one. A CPU row folds its vectors with it, and with each value's ``v * 0`` added
    into a check that is NaN once any value was NaN or infinite; where the check is NaN or the
    result zero (whose sign this fold gets wrong), the row is folded again with `combine`. So
    the result is the same, and a softmax's max costs 3 vector operations a step, not 8."""
    compare = "isgreater" if kind == "max" else "isless"
    return f"select({a}, {b}, {compare}({b}, {a}))"


def call(function: str, inputs: Sequence[RowInput], reductions: int, width: int,
         column: str, kept: str | None = None, kept_stride: int = 1) -> str:
    """The call of a stage function at column ``column``: inputs loaded (as vectors of
    ``width`` when ``width > 1``; per-row inputs broadcast), then the reductions so far, then
    the value kept at ``kept[column]`` when given."""
    args = []
    for value in inputs:
        at = value.at(column)
        if width == 1:
            args.append(half.load(value.dtype, value.name, at))
        elif value.column_stride:
            args.append(half.vload(value.dtype, width, "0", f"{value.name} + {at}"))
        else:
            args.append(f"(float{width})({half.load(value.dtype, value.name, at)})")
    for j in range(reductions):
        args.append(f"r{j}" if width == 1 else f"(float{width})(r{j})")
    if kept is not None:
        at = column if kept_stride == 1 else f"{column} * {kept_stride}"
        args.append(f"{kept}[{at}]" if width == 1 else f"vload{width}(0, {kept} + {column})")
    return f"{function}({', '.join(args)})"


def row_reduce(name: str, rows: int, cols: int, inputs: Sequence[RowInput],
               stages: Sequence[RowStage], functions: str, width: int = 8,
               device_info: DeviceInfo | None = None,
               local_size: int | None = None, out_dtype: str = "f32",
               out_layout: RowInput | None = None, combine: str = "auto") -> KernelSource:
    """The kernel; `functions` is the C source of the stage functions (emitted first).
    `out_layout` (row offset and column stride of ``out``) stores rows along another axis than
    the last: then every stage is read one element at a time (``width`` must be 1).
    Vector stage functions take ``float<width>`` values, so they are for f32, f16 and bf16
    inputs (read as float vectors) and an f32 ``out``; a kept stage (`RowStage.keeps`) stores
    into ``out``, so it needs an f32 ``out``. A row's work-items on a GPU combine their partials
    as `combine` says (`common.warp_shuffles`)."""
    check_positive(name, rows=rows, cols=cols)
    for dtype in (*(v.dtype for v in inputs), out_dtype):
        check_dtype(name, dtype)
    floats = ("f32", "f16", "bf16")
    if out_dtype != "f32" and any(s.keeps for s in stages):
        raise ValueError(f"kernel '{name}': a kept stage needs an f32 out, not {out_dtype}")
    if any(s.vector is not None for s in stages) and (
            out_dtype not in floats or any(v.dtype not in floats for v in inputs)):
        raise ValueError(f"kernel '{name}': vector stages read and write f32, f16 and bf16 only")
    if not stages or stages[-1].kind is not None or any(s.kind is None for s in stages[:-1]):
        raise ValueError(f"kernel '{name}': stages must be reductions, then one store")
    for stage in stages[:-1]:
        if stage.kind not in ROW_REDUCE_KINDS:
            raise ValueError(f"kernel '{name}': unknown reduction kind '{stage.kind}'")
    layout = out_layout or RowInput("out", f"row * {cols}", 1, out_dtype)
    if layout.column_stride != 1 and width != 1:
        raise ValueError(f"kernel '{name}': strided rows are read one element at a time "
                         f"(width 1, not {width})")
    args = (*(KernelArg(v.name, "in", BUFFER_TYPES[v.dtype]) for v in inputs),
            KernelArg("out", "out", BUFFER_TYPES[out_dtype]))
    if any(half.is_half(d) for d in (*(v.dtype for v in inputs), out_dtype)):
        functions = half.HELPERS + functions
    if out_dtype == "bf16" and width > 1:
        functions = half.bf16_vector_helper(width) + functions
    gpu = device_info is not None and not device_info.is_cpu
    if gpu or (local_size is not None and local_size > 1):
        size = local_size or default_row_local_size(cols, device_info)
        check_positive(name, local_size=size)
        reduce = RowCombine(name, size, warp_shuffles(device_info, size, combine), offset="")
        return _work_group_per_row(name, rows, cols, inputs, stages, functions, reduce, args,
                                   out_dtype, layout)
    return _work_item_per_row(name, rows, cols, inputs, stages, functions, width, args,
                              out_dtype, layout)


def _fold_lanes(kind: str, acc: str, width: int, into: str) -> list[str]:
    """Statements folding the lanes of the vector ``acc`` into the scalar ``into``: halves
    combined pairwise (``.lo`` with ``.hi``) down to one lane."""
    lines = ["{"]
    current = acc
    while width > 2:
        width //= 2
        half = f"{acc}_{width}"
        lines.append(f"    const float{width} {half} = "
                     f"{combine(kind, f'{current}.lo', f'{current}.hi')};")
        current = half
    lines += [f"    {into} = {combine(kind, f'{current}.s0', f'{current}.s1')};", "}"]
    return lines


def _finish(kind: str, cols: int, value: str) -> str:
    return f"{value} * {float_literal(1.0 / cols)}" if kind == "mean" else value


def _out_at(layout: RowInput, column: str) -> str:
    """The index of column ``column`` of the row in ``y`` (``out`` from the row's start)."""
    return column if layout.column_stride == 1 else f"{column} * {layout.column_stride}"


def _work_item_per_row(name: str, rows: int, cols: int, inputs: Sequence[RowInput],
                       stages: Sequence[RowStage], functions: str, width: int,
                       args: tuple[KernelArg, ...], out_dtype: str,
                       layout: RowInput) -> KernelSource:
    vectorized = width > 1 and all(s.vector is not None for s in stages) and cols >= width
    full = cols // width * width if vectorized else 0
    group = min(CPU_ROWS_PER_GROUP, rows)
    lines = [f"if (row >= {rows}) return;",
             f"__global {BUFFER_TYPES[out_dtype]} *restrict y = out + {layout.row_offset};"]
    for j, stage in enumerate(stages[:-1]):
        kind = stage.kind
        assert kind is not None
        lines.append(f"float r{j} = {INIT[kind]};")
        if full:
            vector = call(stage.vector, inputs, j, width, 'c')  # type: ignore[arg-type]
            fast = kind in ("max", "min")
            lines += [
                f"float{width} acc{j} = (float{width})({INIT[kind]});",
                *([f"float{width} chk{j} = (float{width})(0.0f);"] if fast else []),
                f"for (int c = 0; c < {full}; c += {width}) {{",
                f"    const float{width} v = {vector};",
                *([f"    vstore{width}(v, 0, y + c);"] if stage.keeps else []),
                *([f"    acc{j} = {ordered_combine(kind, f'acc{j}', 'v')};",
                   f"    chk{j} = fma(v, (float{width})(0.0f), chk{j});"] if fast
                  else [f"    acc{j} = {combine(kind, f'acc{j}', 'v')};"]),
                "}",
            ]
            lines += _fold_lanes(kind, f"acc{j}", width, f"r{j}")
            if fast:
                lines += [
                    f"if (any(isnan(chk{j})) || r{j} == 0.0f) {{",
                    f"    acc{j} = (float{width})({INIT[kind]});",
                    f"    for (int c = 0; c < {full}; c += {width}) {{",
                    f"        const float{width} v = {vector};",
                    f"        acc{j} = {combine(kind, f'acc{j}', 'v')};",
                    "    }",
                    *(f"    {line}" for line in _fold_lanes(kind, f"acc{j}", width, f"r{j}")),
                    "}",
                ]
        if full < cols:
            lines += [
                f"for (int c = {full}; c < {cols}; ++c) {{",
                f"    const float v = {call(stage.scalar, inputs, j, 1, 'c')};",
                *([f"    y[{_out_at(layout, 'c')}] = v;"] if stage.keeps else []),
                f"    r{j} = {combine(kind, f'r{j}', 'v')};",
                "}",
            ]
        if kind == "mean":
            lines.append(f"r{j} = {_finish(kind, cols, f'r{j}')};")
    last = stages[-1]
    reductions = len(stages) - 1
    kept = "y" if reductions and stages[-2].keeps else None
    if full:
        value = call(last.vector, inputs, reductions, width, 'c', kept)  # type: ignore[arg-type]
        lines += [
            f"for (int c = 0; c < {full}; c += {width}) {{",
            f"    {half.vstore(out_dtype, width, value, '0', 'y + c')};",
            "}",
        ]
    if full < cols:
        value = call(last.scalar, inputs, reductions, 1, 'c', kept, layout.column_stride)
        lines += [
            f"for (int c = {full}; c < {cols}; ++c) {{",
            f"    {half.store(out_dtype, 'y', _out_at(layout, 'c'), value)};",
            "}",
        ]
    body = "".join(f"    {line}\n" for line in lines)
    how = f"float{width} vectors" if full else "scalars"
    source = (
        f"// {name}: row_reduce of [{rows}x{cols}], {len(stages) - 1} reduction(s), "
        f"one row per work-item ({how})\n"
        f"{functions}"
        f"__kernel __attribute__((reqd_work_group_size({group}, 1, 1))) void {name}(\n    "
        + ",\n    ".join(a.declaration() for a in args)
        + ")\n{\n    const int row = get_global_id(0);\n"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, (round_up(rows, group),), (group,))


def _work_group_per_row(name: str, rows: int, cols: int, inputs: Sequence[RowInput],
                        stages: Sequence[RowStage], functions: str, reduce: RowCombine,
                        args: tuple[KernelArg, ...], out_dtype: str,
                        layout: RowInput) -> KernelSource:
    size = reduce.row_size
    lines = [
        "const int lid = get_local_id(0);",
        "const int row = get_group_id(0);",
        f"__local float scratch[{size}];",
        *reduce.declarations(size, indent="").splitlines(),
        f"__global {BUFFER_TYPES[out_dtype]} *restrict y = out + {layout.row_offset};",
    ]
    folds = {}
    for j, stage in enumerate(stages[:-1]):
        kind = stage.kind
        assert kind is not None

        fold = folds[kind] = partial(combine, kind)
        lines += [
            f"float p{j} = {INIT[kind]};",
            f"for (int c = lid; c < {cols}; c += {size}) {{",
            f"    const float v = {call(stage.scalar, inputs, j, 1, 'c')};",
            *([f"    y[{_out_at(layout, 'c')}] = v;"] if stage.keeps else []),
            f"    p{j} = {combine(kind, f'p{j}', 'v')};",
            "}",
            *reduce.combine(f"s{j}", f"p{j}", kind, fold, indent="").splitlines(),
            f"const float r{j} = {_finish(kind, cols, f's{j}')};",
        ]
    last = stages[-1]
    reductions = len(stages) - 1
    kept = "y" if reductions and stages[-2].keeps else None
    value = call(last.scalar, inputs, reductions, 1, 'c', kept, layout.column_stride)
    lines += [
        f"for (int c = lid; c < {cols}; c += {size}) {{",
        f"    {half.store(out_dtype, 'y', _out_at(layout, 'c'), value)};",
        "}",
    ]
    body = "".join(f"    {line}\n" for line in lines)
    shuffles = f", warp shuffles ({reduce.shuffles})" if reduce.shuffles else ""
    source = (
        f"// {name}: row_reduce of [{rows}x{cols}], {len(stages) - 1} reduction(s), "
        f"{size} work-items per row{shuffles}\n"
        f"{functions}{reduce.helpers(folds)}"
        f"__kernel __attribute__((reqd_work_group_size({size}, 1, 1))) void {name}(\n    "
        + ",\n    ".join(a.declaration() for a in args)
        + f")\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, (rows * size,), (size,))
