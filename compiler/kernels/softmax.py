"""Numerically stable softmax over the last axis: ``out = exp(x - max(x)) / sum(exp(x - max(x)))``.

Parameters: ``x``, ``out`` (``[rows, cols]`` float32).

With one work-item per row (the CPU default) the row is read as float8 vectors in three passes
over cache: max, then ``exp`` stored into ``out`` and summed, then the scaling. With several
(the GPU default) they stride over the row and combine partial results with tree reductions in
local memory. When each work-item holds at most `MAX_CACHED_SLOTS` elements the row stays in
registers: a max reduction, then ``exp`` once per element and a sum reduction, then the scaled
store. Longer rows are read twice: the first pass keeps an online (max, sum of exp) pair per
work-item (the sum is rescaled when the max grows) and merges the pairs the same way; the
second pass writes ``exp(x - max) / sum``.
"""

from __future__ import annotations

from fusec.compiler.kernels.common import (
    MAX_CACHED_SLOTS,
    ROW_VECTOR_WIDTH,
    Accumulator,
    DeviceInfo,
    KernelArg,
    KernelSource,
    Lanes,
    RowGroup,
    RowSlots,
    check_positive,
    default_rows_per_group,
    kernel_signature,
    max_into,
    row_local_size,
    row_pass,
    sum_into,
    tree_reduction,
)


def softmax(name: str, rows: int, cols: int, local_size: int | None = None,
            device_info: DeviceInfo | None = None,
            rows_per_group: int | None = None) -> KernelSource:
    """A softmax kernel over `rows` rows of `cols` float32 elements.

    A row is handled by `local_size` work-items (default: `default_row_local_size` for
    `device_info`, a CPU when None), and a work-group holds `rows_per_group` rows side by side
    (default: `default_rows_per_group`)."""
    check_positive(name, rows=rows, cols=cols)
    size = row_local_size(name, cols, local_size, device_info)
    group_rows = rows_per_group or default_rows_per_group(size, device_info)
    check_positive(name, rows_per_group=group_rows)
    layout = RowGroup(rows, cols, size, group_rows)
    args = (KernelArg("x", "in"), KernelArg("out", "out"))
    slots = RowSlots(cols, size)
    if size == 1:
        body = _vectorized(layout)
    elif slots.count <= MAX_CACHED_SLOTS:
        body = _cached(slots, layout)
    else:
        body = _streamed(layout)
    source = (
        f"// {name}: softmax of [{rows}x{cols}], {layout.summary()}\n"
        f"{kernel_signature(name, args, layout.attribute())}\n{{\n"
        f"{layout.prologue()}"
        f"    __local float scratch[{size * group_rows}];\n"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, layout.global_size(), layout.local_size())


def _vectorized(layout: RowGroup) -> str:
    """One work-item per row reading it as vectors: max; exp stored and summed; scaled."""
    width = ROW_VECTOR_WIDTH

    def maximum(lanes: Lanes) -> list[str]:
        return [f"{lanes.acc('row_max')} = fmax({lanes.acc('row_max')}, {lanes.load('x_row')});"]

    def exponentials(lanes: Lanes) -> list[str]:
        return [f"const {lanes.type} e = exp({lanes.load('x_row')} - row_max);",
                lanes.store("e", "out_row"), f"{lanes.acc('total')} += e;"]

    def scale(lanes: Lanes) -> list[str]:
        return [lanes.store(f"{lanes.load('out_row')} * inverse_sum", "out_row")]

    return (
        f"    if (row >= {layout.rows}) return;\n"
        "    __global const float *x_row = x + base;\n"
        "    __global float *out_row = out + base;\n"
        f"{row_pass(layout.cols, width, maximum, [Accumulator('row_max', 'fmax', '-INFINITY')])}"
        f"{row_pass(layout.cols, width, exponentials, [Accumulator('total', '+', '0.0f')])}"
        "    const float inverse_sum = 1.0f / total;\n"
        f"{row_pass(layout.cols, width, scale)}"
    )


def _cached(slots: RowSlots, layout: RowGroup) -> str:
    count, size = slots.count, slots.local_size
    lines = []
    for s in range(count):
        value = f"x[base + {slots.index(s)}]"
        if not slots.always_in_row(s):
            value = f"({slots.guard(s)}) ? {value} : -INFINITY"
        lines.append(f"    const float v{s} = {value};\n")
    local_max = "v0"
    for s in range(1, count):
        local_max = f"fmax({local_max}, v{s})"
    lines += [
        f"    scratch[at + lid] = {local_max};\n",
        tree_reduction(size, "lid", max_into("scratch"), offset="at + "),
        "    const float row_max = scratch[at];\n",
        "    barrier(CLK_LOCAL_MEM_FENCE);\n",
    ]
    for s in range(count):
        value = f"exp(v{s} - row_max)"
        if not slots.always_in_row(s):
            value = f"({slots.guard(s)}) ? {value} : 0.0f"
        lines.append(f"    const float e{s} = {value};\n")
    lines += [
        f"    scratch[at + lid] = {' + '.join(f'e{s}' for s in range(count))};\n",
        tree_reduction(size, "lid", sum_into("scratch"), offset="at + "),
        "    const float inverse_sum = 1.0f / scratch[at];\n",
    ]
    for s in range(count):
        store = layout.guarded_store(f"out[base + {slots.index(s)}] = e{s} * inverse_sum;")
        lines.append(f"    {slots.guarded(s, store)}\n")
    return "".join(lines)


def _streamed(layout: RowGroup) -> str:
    size = layout.row_size
    loop = f"for (int i = lid; i < {layout.cols}; i += {size})"
    store = layout.guarded_store("out[base + i] = exp(x[base + i] - row_max) * inverse_sum;")
    return (
        f"    __local float sum_of[{size * layout.rows_per_group}];\n"
        "    float running_max = -INFINITY, running_sum = 0.0f;\n"
        f"    {loop} {{\n"
        "        const float v = x[base + i];\n"
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
