"""Gather along one axis: ``out[o, i, n] = data[o, clamp(indices[i]), n]`` (embedding lookups).

Parameters: ``data`` (``[outer, dim, inner]`` of ``dtype``), ``indices`` (``[count]`` int),
``out`` (``[outer, count, inner]``). A negative index counts from the end of the axis; an index
outside ``[-dim, dim)`` is clamped into it, as the ``nn.gather`` reference does. One work-item
per output element: the innermost run (``inner``, an embedding row) is contiguous in both
``data`` and ``out``, so neighbouring work-items read and write neighbouring elements.
"""

from __future__ import annotations

from fusec.codegen.kernels.common import KernelArg, KernelSource, check_positive, kernel_signature


def gather(name: str, outer: int, dim: int, count: int, inner: int,
           dtype: str = "float") -> KernelSource:
    """A gather kernel over ``outer * count * inner`` outputs of OpenCL type ``dtype``."""
    check_positive(name, outer=outer, dim=dim, count=count, inner=inner)
    args = (KernelArg("data", "in", dtype), KernelArg("indices", "in", "int"),
            KernelArg("out", "out", dtype))
    total = outer * count * inner
    source = (
        f"// {name}: gather [{outer}x{dim}x{inner}] by {count} indices\n"
        f"{kernel_signature(name, args)}\n{{\n"
        f"    const int gid = get_global_id(0);\n"
        f"    if (gid >= {total}) return;\n"
        f"    const int n = gid % {inner};\n"
        f"    const int i = (gid / {inner}) % {count};\n"
        f"    const int o = gid / {inner * count};\n"
        f"    int index = clamp(indices[i], {-dim}, {dim - 1});\n"
        f"    if (index < 0) index += {dim};\n"
        f"    out[gid] = data[((long)o * {dim} + index) * {inner} + n];\n"
        "}\n"
    )
    return KernelSource(name, source, args, (total,), None)
