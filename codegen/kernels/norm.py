"""Row normalisation: LayerNorm and RMSNorm over the last axis, with an optional residual input.

``v = x + residual`` (or ``x``), per row of ``cols`` elements:

- LayerNorm: ``out = (v - mean(v)) * rsqrt(var(v) + eps) * gamma (+ beta)``;
- RMSNorm (``rms``): ``out = v * rsqrt(mean(v * v) + eps) * gamma (+ beta)``.

Parameters in order: ``x``, ``residual`` (if `residual`), ``gamma``, ``beta`` (if `has_beta`),
``out``, all of one element type `dtype`: f32, or f16/bf16 read into float32 registers and
the result rounded once when stored (`fusec.codegen.kernels.half`); in a 16-bit type
``x + residual`` is rounded to it first, as the add before the norm would store it. Only the
normalised value is written; ``x + residual`` is not.

Three shapes, by the number of work-items per row (`local_size`):

- one (the CPU default): the work-item reads the row as float8 vectors in three passes (sum;
  centred squares; normalise) that re-read it from cache; with a residual the first pass
  stores ``x + residual`` into ``out``, so it is computed once. Two-pass variance, no barrier.
- several (the GPU default; a work-group holds one row, or several short rows side by side):
  the work-items stride over the row, so that neighbouring work-items touch neighbouring
  elements, and combine partial sums as `combine` says (`common.RowCombine`: a tree in local
  memory, or warp shuffles). When each holds at most `MAX_CACHED_SLOTS` elements the row stays
  in registers, ``x + residual`` is computed once, and the variance is a second pass over the
  registers (two-pass, exact); where it holds at most `PRELOADED_SLOTS`, its ``gamma`` and
  ``beta`` are read with the row, so that their reads do not wait for the reductions.
- longer rows are read twice from global memory: the first pass accumulates Welford's
  (count, mean, M2) per work-item and merges them pairwise (Chan et al.) in a tree whatever
  `combine` says, the second normalises (RMSNorm: a sum of squares, combined as `combine`
  says).
"""

from __future__ import annotations

from dataclasses import dataclass

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import (
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
    float_literal,
    fold_sum,
    kernel_signature,
    row_local_size,
    row_pass,
    tree_reduction,
    warp_shuffles,
)

GPU_ELEMENTS_PER_ITEM = 16
"""About how many elements of a row each work-item takes on a GPU (`default_row_local_size`):
a 768-wide row 64 work-items, four rows a work-group. On an H200 (2026-12-02,
bench/results/h200-2026-12-02-s13-norm.log, f16) LayerNorm of [4096x768] took 16.5 us at 256
work-items a row (4 elements each), 9.5 at 64 and 8.9 at 32; [2048x768] 10.6, 7.4 and 7.6;
[4096x2048] 20.1 at 256, 16.1 at 128; with a residual alike; [128x768] 5-7 us whichever
(launch-bound). Fewer work-items a row means fewer steps of the tree reductions and their
barriers, and more rows a work-group."""

PRELOADED_SLOTS = 16
"""The most elements a work-item holds whose ``gamma`` and ``beta`` it reads with the row, into
registers (twice as many again; more would spill)."""


def layer_norm(
    name: str,
    rows: int,
    cols: int,
    eps: float,
    residual: bool = False,
    rms: bool = False,
    has_beta: bool = True,
    local_size: int | None = None,
    device_info: DeviceInfo | None = None,
    rows_per_group: int | None = None,
    dtype: str = "f32",
    combine: str = "auto",
) -> KernelSource:
    """A LayerNorm (or RMSNorm when `rms`) kernel over `rows` rows of `cols` float32 elements.

    A row is handled by `local_size` work-items (default: `default_row_local_size` for
    `device_info`, a CPU when None), and a work-group holds `rows_per_group` rows side by side
    (default: `default_rows_per_group`); they combine their partial sums as `combine` says
    (`common.warp_shuffles`: ``"auto"`` as the device and the knob `row_warp_shuffles` allow,
    ``"tree"``, ``"ptx"`` or ``"emulated"``)."""
    check_positive(name, rows=rows, cols=cols)
    storage = half.check_dtype(name, dtype)
    size = row_local_size(name, cols, local_size, device_info, GPU_ELEMENTS_PER_ITEM)
    group_rows = rows_per_group or default_rows_per_group(size, device_info, rows)
    check_positive(name, rows_per_group=group_rows)
    args = (
        KernelArg("x", "in", storage),
        *((KernelArg("residual", "in", storage),) if residual else ()),
        KernelArg("gamma", "in", storage),
        *((KernelArg("beta", "in", storage),) if has_beta else ()),
        KernelArg("out", "out", storage),
    )
    layout = RowGroup(rows, cols, size, group_rows)
    slots = RowSlots(cols, size)
    # the streamed LayerNorm merges Welford's partials by a tree whatever `combine` says
    welford = not rms and slots.count > MAX_CACHED_SLOTS
    shuffles = warp_shuffles(device_info, size, combine) if size > 1 and not welford else None
    reduce = RowCombine(name, size, shuffles)
    norm = _Norm(layout, float_literal(eps), residual, rms, has_beta, dtype, reduce)
    if size == 1:
        body = norm.vectorized()
    elif slots.count <= MAX_CACHED_SLOTS:
        body = norm.cached(slots)
    else:
        body = norm.streamed()
    kind = "rms_norm" if rms else "layer_norm"
    helpers = reduce.helpers({"sum": fold_sum})
    if half.is_half(dtype):
        helpers = half.HELPERS + (half.bf16_vector_helper(ROW_VECTOR_WIDTH)
                                  if dtype == "bf16" and size == 1 else "") + helpers
    source = (
        f"// {name}: {kind} of [{rows}x{cols}], {layout.summary()}"
        f"{', residual' if residual else ''}{', beta' if has_beta else ''}"
        f"{f', {dtype}' if dtype != 'f32' else ''}"
        f"{f', warp shuffles ({shuffles})' if shuffles else ''}\n{helpers}"
        f"{kernel_signature(name, args, layout.attribute())}\n{{\n"
        f"{layout.prologue()}{body}}}\n"
    )
    return KernelSource(name, source, args, layout.global_size(), layout.local_size())


class _Norm:
    """Emits the body of one normalisation kernel; `cached` and `streamed` are the two shapes."""

    def __init__(self, layout: RowGroup, eps: str, residual: bool, rms: bool,
                 has_beta: bool, dtype: str, reduce: RowCombine) -> None:
        self.layout = layout
        self.cols = layout.cols
        self.row_size = layout.row_size
        self.array_size = layout.row_size * layout.rows_per_group
        """Elements of each local array: one partial per work-item of the work-group."""
        self.eps = eps
        self.residual = residual
        self.rms = rms
        self.has_beta = has_beta
        self.dtype = dtype
        self.storage = half.STORAGE[dtype]
        self.reduce = reduce

    def read(self, pointer: str, index: str) -> str:
        """C expression: element `index` of `pointer` as a float."""
        return half.load(self.dtype, pointer, index)

    def load(self, index: str) -> str:
        """C expression of ``v`` at column `index` of this row."""
        x = self.read("x", f"base + {index}")
        if not self.residual:
            return x
        # A 16-bit sum is rounded to its type, as the add before the norm stores it.
        return half.round_to(self.dtype, f"({x} + {self.read('residual', f'base + {index}')})")

    def store(self, index: str, centred: str, slot: int | None = None) -> str:
        """C statement writing the normalised value; `centred` is ``v - mean`` (or ``v``);
        `slot`: the element's ``gamma`` and ``beta`` are in registers ``g<slot>``, ``b<slot>``
        (`cached`)."""
        gamma = self.read("gamma", index) if slot is None else f"g{slot}"
        beta = "" if not self.has_beta else (
            f" + {self.read('beta', index) if slot is None else f'b{slot}'}")
        value = f"{centred} * rstd * {gamma}{beta}"
        stored = half.store(self.dtype, "out", f"base + {index}", value)
        return self.layout.guarded_store(f"{stored};")

    def sum_of(self, variable: str, value: str) -> str:
        """C code reducing the per-work-item `value` over the row into `variable`."""
        return self.reduce.combine(variable, value, "sum", fold_sum)

    def local_arrays(self) -> str:
        """``scratch`` (a float a work-item), and what the row's combine needs besides."""
        return (f"    __local float scratch[{self.array_size}];\n"
                f"{self.reduce.declarations(self.array_size)}")

    def rstd(self, square_sum: str) -> str:
        """C declaration of ``rstd`` from the row's sum of squared (centred) values."""
        return f"    const float rstd = rsqrt({square_sum} / {self.cols}.0f + {self.eps});\n"

    def cached(self, slots: RowSlots) -> str:
        count = slots.count
        lines = [self.local_arrays()]
        preload = count <= PRELOADED_SLOTS
        for s in range(count):
            loads = [("v", self.load(slots.index(s)))]
            if preload:
                loads.append(("g", self.read("gamma", slots.index(s))))
                if self.has_beta:
                    loads.append(("b", self.read("beta", slots.index(s))))
            for register, value in loads:
                if not slots.always_in_row(s):
                    value = f"({slots.guard(s)}) ? {value} : 0.0f"
                lines.append(f"    const float {register}{s} = {value};\n")
        total = " + ".join(f"v{s}" for s in range(count))
        if self.rms:
            squares = " + ".join(f"v{s} * v{s}" for s in range(count))
            lines.append(self.sum_of("square_sum", squares))
            lines.append(self.rstd("square_sum"))
            for s in range(count):
                store = self.store(slots.index(s), f"v{s}", s if preload else None)
                lines.append(f"    {slots.guarded(s, store)}\n")
            return "".join(lines)
        lines.append(self.sum_of("row_sum", total))
        lines.append(f"    const float mean = row_sum / {self.cols}.0f;\n")
        for s in range(count):
            centred = f"v{s} - mean"
            if not slots.always_in_row(s):
                centred = f"({slots.guard(s)}) ? {centred} : 0.0f"
            lines.append(f"    const float d{s} = {centred};\n")
        lines.append(self.sum_of("square_sum", " + ".join(f"d{s} * d{s}" for s in range(count))))
        lines.append(self.rstd("square_sum"))
        for s in range(count):
            store = self.store(slots.index(s), f"d{s}", s if preload else None)
            lines.append(f"    {slots.guarded(s, store)}\n")
        return "".join(lines)

    def vectorized(self) -> str:
        """One work-item per row, reading it as vectors: ``v`` (stored into ``out`` when there
        is a residual, so that it is computed once), then the centred squares, then the store;
        the row is read back from cache."""
        width = ROW_VECTOR_WIDTH
        v_row = "out_row" if self.residual else "x_row"
        lines = [
            f"    if (row >= {self.layout.rows}) return;\n",
            f"    __global const {self.storage} *x_row = x + base;\n",
            f"    __global {self.storage} *out_row = out + base;\n",
        ]
        if self.residual:
            lines.append(f"    __global const {self.storage} *residual_row = residual + base;\n")
        dtype = self.dtype

        def typed(lanes: Lanes) -> TypedLanes:
            return TypedLanes(lanes.width, dtype)

        def first(plain: Lanes) -> list[str]:
            lanes = typed(plain)
            if self.residual and half.is_half(dtype):  # the sum rounded as stored, read back
                value = f"{lanes.load('x_row')} + {lanes.load('residual_row')}"
                statements = [f"const {lanes.type} sum = {value};", lanes.store("sum", "out_row"),
                              f"const {lanes.type} v = {lanes.load('out_row')};"]
            elif self.residual:
                value = f"{lanes.load('x_row')} + {lanes.load('residual_row')}"
                statements = [f"const {lanes.type} v = {value};", lanes.store("v", "out_row")]
            else:
                statements = [f"const {lanes.type} v = {lanes.load('x_row')};"]
            if self.rms:
                return [*statements, f"{lanes.acc('square_sum')} = mad(v, v, "
                                     f"{lanes.acc('square_sum')});"]
            return [*statements, f"{lanes.acc('row_sum')} += v;"]

        def squares(plain: Lanes) -> list[str]:
            lanes = typed(plain)
            return [f"const {lanes.type} d = {lanes.load(v_row)} - mean;",
                    f"{lanes.acc('square_sum')} = mad(d, d, {lanes.acc('square_sum')});"]

        def normalise(plain: Lanes) -> list[str]:
            lanes = typed(plain)
            value = lanes.load(v_row) if self.rms else f"({lanes.load(v_row)} - mean)"
            value = f"{value} * rstd * {lanes.load('gamma')}"
            if self.has_beta:
                value += f" + {lanes.load('beta')}"
            return [lanes.store(value, "out_row")]

        square_sum = Accumulator("square_sum", "+", "0.0f")
        if self.rms:
            lines.append(row_pass(self.cols, width, first, [square_sum]))
        else:
            lines.append(row_pass(self.cols, width, first, [Accumulator("row_sum", "+", "0.0f")]))
            lines.append(f"    const float mean = row_sum / {self.cols}.0f;\n")
            lines.append(row_pass(self.cols, width, squares, [square_sum]))
        lines.append(self.rstd("square_sum"))
        lines.append(row_pass(self.cols, width, normalise))
        return "".join(lines)

    def streamed(self) -> str:
        loop = f"for (int i = lid; i < {self.cols}; i += {self.row_size})"
        centred = f"({self.load('i')} - row_mean)"
        if self.rms:
            return (
                f"{self.local_arrays()}"
                "    float squares = 0.0f;\n"
                f"    {loop} {{\n"
                f"        const float v = {self.load('i')};\n"
                "        squares = mad(v, v, squares);\n"
                "    }\n"
                f"{self.sum_of('square_sum', 'squares')}"
                f"{self.rstd('square_sum')}"
                f"    {loop} {{\n"
                f"        {self.store('i', self.load('i'))}\n"
                "    }\n"
            )
        return (
            f"    __local float count_of[{self.array_size}], mean_of[{self.array_size}], "
            f"m2_of[{self.array_size}];\n"
            "    float count = 0.0f, mean = 0.0f, m2 = 0.0f;\n"
            f"    {loop} {{\n"
            f"        const float v = {self.load('i')};\n"
            "        count += 1.0f;\n"
            "        const float delta = v - mean;\n"
            "        mean += delta / count;\n"
            "        m2 = mad(delta, v - mean, m2);\n"
            "    }\n"
            "    count_of[at + lid] = count; mean_of[at + lid] = mean; m2_of[at + lid] = m2;\n"
            f"{tree_reduction(self.row_size, 'lid', _welford_merge, offset='at + ')}"
            "    const float row_mean = mean_of[at];\n"
            f"{self.rstd('m2_of[at]')}"
            f"    {loop} {{\n"
            f"        {self.store('i', centred)}\n"
            "    }\n"
        )


def _welford_merge(into: str, other: str) -> list[str]:
    """Merge the (count, mean, M2) partials at `other` into those at `into` (Chan et al.)."""
    return [
        f"const float nb = count_of[{other}];",
        "if (nb > 0.0f) {",
        f"    const float na = count_of[{into}], n = na + nb;",
        f"    const float delta = mean_of[{other}] - mean_of[{into}];",
        f"    mean_of[{into}] += delta * (nb / n);",
        f"    m2_of[{into}] += m2_of[{other}] + delta * delta * (na * nb / n);",
        f"    count_of[{into}] = n;",
        "}",
    ]


@dataclass(frozen=True)
class TypedLanes(Lanes):
    """`Lanes` over buffers of element type `dtype`: loads give floats, stores of a 16-bit
    type round to nearest even (`fusec.codegen.kernels.half`)."""

    dtype: str = "f32"

    def load(self, pointer: str) -> str:
        if self.width == 1:
            return half.load(self.dtype, pointer, "i")
        return half.vload(self.dtype, self.width, "0", f"{pointer} + i")

    def store(self, value: str, pointer: str) -> str:
        if self.width == 1:
            return f"{half.store(self.dtype, pointer, 'i', value)};"
        return f"{half.vstore(self.dtype, self.width, value, '0', f'{pointer} + i')};"
