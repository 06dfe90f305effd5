"""The index of each row's largest element (``nn.argmax`` over the last axis): greedy decoding's
token choice on the device.

``out[r] = argmax(x[r, :])`` as an ``int``: the first of equal maxima, a NaN counting as the
largest (numpy's rule). With ``group`` 1 one work-item walks each row in order (a CPU: a
vocabulary row of 50k is 0.2 ms on one core, and a decoder has a row per sequence). With a
larger ``group`` (a GPU) a work-group per row: each work-item keeps the best of every
``group``-th element, then a tree in local memory keeps, of two candidates, the larger or, when
equal (or both NaN), the one of lower index.
"""

from __future__ import annotations

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import KernelArg, KernelSource, check_positive, kernel_signature

STORAGE = {**half.STORAGE, "i32": "int"}
"""Element type -> the OpenCL type of the input buffer."""


def argmax(name: str, rows: int, cols: int, dtype: str = "f32", group: int = 1) -> KernelSource:
    """An argmax kernel over ``[rows, cols]`` of element type ``dtype``; ``group`` work-items
    per row (a power of 2)."""
    check_positive(name, rows=rows, cols=cols, group=group)
    if dtype not in STORAGE:
        raise ValueError(f"kernel '{name}': dtype '{dtype}' is not one of {tuple(STORAGE)}")
    if group & (group - 1):
        raise ValueError(f"kernel '{name}': group {group} is not a power of 2")
    args = (KernelArg("x", "in", STORAGE[dtype]), KernelArg("out", "out", "int"))
    value = "row[j]" if dtype in ("f32", "i32") else half.load(dtype, "row", "j")
    scalar = "int" if dtype == "i32" else "float"
    nan = "0" if dtype == "i32" else "isnan({a})"
    # whether candidate a (at index ia) beats b (at index ib): larger, a NaN over a number, or
    # equal (both NaN) at a lower index
    beats = ("({a} > {b} || (" + nan + " && !" + nan.replace("{a}", "{b}") + ")"
             " || (({a} == {b} || (" + nan + " && " + nan.replace("{a}", "{b}") + "))"
             " && {ia} < {ib}))")
    if group == 1:
        body = (
            "    const int r = get_global_id(0);\n"
            f"    if (r >= {rows}) return;\n"
            f"    __global const {STORAGE[dtype]} *row = x + (long)r * {cols};\n"
            "    int at = 0;\n"
            "    int j = 0;\n"
            f"    {scalar} best = {value};\n"
            f"    for (j = 1; j < {cols}; ++j) {{\n"
            f"        const {scalar} v = {value};\n"
            f"        if ({beats.format(a='v', b='best', ia='j', ib='at')}) "
            "{ best = v; at = j; }\n"
            "    }\n"
            "    out[r] = at;\n"
        )
        sizes: tuple[tuple[int, ...], tuple[int, ...] | None] = ((rows,), None)
    else:
        body = (
            "    const int lid = get_local_id(0), r = get_group_id(0);\n"
            f"    __global const {STORAGE[dtype]} *row = x + (long)r * {cols};\n"
            f"    __local {scalar} best_value[{group}];\n"
            f"    __local int best_index[{group}];\n"
            f"    int at = {cols};\n"
            f"    {scalar} best = 0;\n"
            f"    for (int j = lid; j < {cols}; j += {group}) {{\n"
            f"        const {scalar} v = {value};\n"
            f"        if (at == {cols} || {beats.format(a='v', b='best', ia='j', ib='at')}) "
            "{ best = v; at = j; }\n"
            "    }\n"
            "    best_value[lid] = best;\n"
            "    best_index[lid] = at;\n"
            "    barrier(CLK_LOCAL_MEM_FENCE);\n"
            f"    for (int half_size = {group // 2}; half_size > 0; half_size >>= 1) {{\n"
            "        if (lid < half_size) {\n"
            f"            const {scalar} v = best_value[lid + half_size];\n"
            "            const int i = best_index[lid + half_size];\n"
            f"            if (i < {cols} && (best_index[lid] == {cols} || "
            f"{beats.format(a='v', b='best_value[lid]', ia='i', ib='best_index[lid]')})) {{\n"
            "                best_value[lid] = v;\n"
            "                best_index[lid] = i;\n"
            "            }\n"
            "        }\n"
            "        barrier(CLK_LOCAL_MEM_FENCE);\n"
            "    }\n"
            "    if (lid == 0) out[r] = best_index[0];\n"
        )
        sizes = ((rows * group,), (group,))
    source = (
        f"// {name}: argmax of {rows} rows of {cols} ({dtype}), {group} work-items a row\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{kernel_signature(name, args)}\n{{\n{body}}}\n"
    )
    return KernelSource(name, source, args, *sizes)
