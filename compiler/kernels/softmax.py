"""Numerically stable softmax over the last axis: ``out = exp(x - max(x)) / sum(exp(x - max(x)))``.

Parameters: ``x``, ``out`` (``[rows, cols]`` float32). One work-group per row; its work-items
stride over the row and combine partial results with tree reductions in local memory.

When each work-item holds at most `MAX_CACHED_SLOTS` elements the row stays in registers: a
max reduction, then ``exp`` once per element and a sum reduction, then the scaled store. Longer
rows are read twice: the first pass keeps an online (max, sum of exp) pair per work-item (the
sum is rescaled when the max grows) and merges the pairs the same way; the second pass writes
``exp(x - max) / sum``.
"""

from __future__ import annotations

from fusec.compiler.kernels.common import (
    MAX_CACHED_SLOTS,
    DeviceInfo,
    KernelArg,
    KernelSource,
    RowSlots,
    check_positive,
    kernel_signature,
    max_into,
    row_local_size,
    sum_into,
    tree_reduction,
)


def softmax(name: str, rows: int, cols: int, local_size: int | None = None,
            device_info: DeviceInfo | None = None) -> KernelSource:
    """A softmax kernel over `rows` rows of `cols` float32 elements; the work-group size is
    `local_size`, or the default for `device_info` (a CPU when None)."""
    check_positive(name, rows=rows, cols=cols)
    size = row_local_size(name, cols, local_size, device_info)
    args = (KernelArg("x", "in"), KernelArg("out", "out"))
    slots = RowSlots(cols, size)
    body = _cached(slots) if slots.count <= MAX_CACHED_SLOTS else _streamed(cols, size)
    attribute = f"__attribute__((reqd_work_group_size({size}, 1, 1)))"
    source = (
        f"// {name}: softmax of [{rows}x{cols}], work-group of {size} per row\n"
        f"{kernel_signature(name, args, attribute)}\n{{\n"
        "    const int lid = get_local_id(0);\n"
        f"    const int base = get_group_id(0) * {cols};\n"
        f"    __local float scratch[{size}];\n"
        f"{body}}}\n"
    )
    return KernelSource(name, source, args, (rows * size,), (size,))


def _cached(slots: RowSlots) -> str:
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
        f"    scratch[lid] = {local_max};\n",
        tree_reduction(size, "lid", max_into("scratch")),
        "    const float row_max = scratch[0];\n",
        "    barrier(CLK_LOCAL_MEM_FENCE);\n",
    ]
    for s in range(count):
        value = f"exp(v{s} - row_max)"
        if not slots.always_in_row(s):
            value = f"({slots.guard(s)}) ? {value} : 0.0f"
        lines.append(f"    const float e{s} = {value};\n")
    lines += [
        f"    scratch[lid] = {' + '.join(f'e{s}' for s in range(count))};\n",
        tree_reduction(size, "lid", sum_into("scratch")),
        "    const float inverse_sum = 1.0f / scratch[0];\n",
    ]
    for s in range(count):
        store = f"out[base + {slots.index(s)}] = e{s} * inverse_sum;"
        lines.append(f"    {slots.guarded(s, store)}\n")
    return "".join(lines)


def _streamed(cols: int, size: int) -> str:
    loop = f"for (int i = lid; i < {cols}; i += {size})"
    return (
        f"    __local float sum_of[{size}];\n"
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
        "    scratch[lid] = running_max; sum_of[lid] = running_sum;\n"
        f"{tree_reduction(size, 'lid', _merge_online)}"
        "    const float row_max = scratch[0];\n"
        "    const float inverse_sum = 1.0f / sum_of[0];\n"
        f"    {loop} {{\n"
        "        out[base + i] = exp(x[base + i] - row_max) * inverse_sum;\n"
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
