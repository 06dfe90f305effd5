"""The index of each row's largest element (``nn.argmax`` over the last axis): greedy decoding's
token choice on the device.

``out[r] = argmax(x[r, :])`` as an ``int``: the first of equal maxima, a NaN counting as the
largest (numpy's rule). One work-item per row walks it in order (a vocabulary row of 50k is
0.2 ms on one CPU core; decoding has a row per sequence).
"""

from __future__ import annotations

from fusec.codegen.kernels import half
from fusec.codegen.kernels.common import KernelArg, KernelSource, check_positive, kernel_signature

STORAGE = {**half.STORAGE, "i32": "int"}
"""Element type -> the OpenCL type of the input buffer."""


def argmax(name: str, rows: int, cols: int, dtype: str = "f32") -> KernelSource:
    """An argmax kernel over ``[rows, cols]`` of element type ``dtype``."""
    check_positive(name, rows=rows, cols=cols)
    if dtype not in STORAGE:
        raise ValueError(f"kernel '{name}': dtype '{dtype}' is not one of {tuple(STORAGE)}")
    args = (KernelArg("x", "in", STORAGE[dtype]), KernelArg("out", "out", "int"))
    value = "row[j]" if dtype in ("f32", "i32") else half.load(dtype, "row", "j")
    scalar = "int" if dtype == "i32" else "float"
    larger = "v > best" if dtype == "i32" else "v > best || (isnan(v) && !isnan(best))"
    source = (
        f"// {name}: argmax of {rows} rows of {cols} ({dtype})\n"
        f"{half.HELPERS if half.is_half(dtype) else ''}"
        f"{kernel_signature(name, args)}\n{{\n"
        "    const int r = get_global_id(0);\n"
        f"    if (r >= {rows}) return;\n"
        f"    __global const {STORAGE[dtype]} *row = x + (long)r * {cols};\n"
        "    int at = 0;\n"
        "    int j = 0;\n"
        f"    {scalar} best = {value};\n"
        f"    for (j = 1; j < {cols}; ++j) {{\n"
        f"        const {scalar} v = {value};\n"
        f"        if ({larger}) {{ best = v; at = j; }}\n"
        "    }\n"
        "    out[r] = at;\n"
        "}\n"
    )
    return KernelSource(name, source, args, (rows,), None)
