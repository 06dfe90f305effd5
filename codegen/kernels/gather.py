"""Gather along one axis: ``out[o, i, n] = data[o, indices[i], n]`` (embedding lookups).

Parameters: ``data`` (``[outer, dim, inner]`` of ``dtype``), ``indices`` (``[count]`` int),
``out`` (``[outer, count, inner]``), ``index_errors`` (the program's record of bad indices,
`fusec.codegen.plan.IndexCheck`). A negative index counts from the end of the axis. An index
outside ``[-dim, dim)`` is recorded in word `INDEX_SLOT_PLACEHOLDER` of ``index_errors`` (the
plan puts the slot's number there) as ``(position << 32) | (uint)value`` by ``atom_min``, so
the word ends up holding the lowest bad position and its value, and word 0 is set to 1 (the
runtime reads only that word on a call); the element is then read clamped, so the result stays
defined. Without 64-bit atomics (`DeviceInfo.int64_atomics`) the first bad index to take the
slot's high half by ``atomic_cmpxchg`` writes the low half: some bad index, not the lowest.
Bounds and offsets are ``long`` (an axis of 2^31 made ``clamp`` on ``int`` ambiguous, a build
error). One work-item per output element: the innermost run (``inner``, an embedding row) is
contiguous in both ``data`` and ``out``, so neighbouring work-items read and write neighbouring
elements.
"""

from __future__ import annotations

from fusec.codegen.kernels.common import KernelArg, KernelSource, check_positive, kernel_signature

INDEX_SLOT_PLACEHOLDER = "FUSEC_INDEX_SLOT"
"""Stands for the kernel's word in ``index_errors`` until the plan numbers it."""

INDEX_ERRORS_ARG = KernelArg("index_errors", "out", "long")
"""The parameter that marks a kernel as one that checks indices (it is its last)."""


def record_bad_index(position: str, value: str, int64_atomics: bool) -> str:
    """C statements recording bad index `value` at `position` in ``index_errors``."""
    if int64_atomics:
        record = (f"atom_min(&index_errors[{INDEX_SLOT_PLACEHOLDER}], "
                  f"((long){position} << 32) | (long)(uint){value});")
    else:
        record = (f"__global int *slot = (__global int *)&index_errors[{INDEX_SLOT_PLACEHOLDER}];"
                  f" if (atomic_cmpxchg(&slot[1], 0x7fffffff, {position}) == 0x7fffffff) "
                  f"slot[0] = {value};")
    return f"index_errors[0] = 1; {record}"


def gather(name: str, outer: int, dim: int, count: int, inner: int,
           dtype: str = "float", int64_atomics: bool = True) -> KernelSource:
    """A gather kernel over ``outer * count * inner`` outputs of OpenCL type ``dtype``."""
    check_positive(name, outer=outer, dim=dim, count=count, inner=inner)
    args = (KernelArg("data", "in", dtype), KernelArg("indices", "in", "int"),
            KernelArg("out", "out", dtype), INDEX_ERRORS_ARG)
    total = outer * count * inner
    pragma = ("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n"
              if int64_atomics else "")
    source = (
        f"// {name}: gather [{outer}x{dim}x{inner}] by {count} indices\n{pragma}"
        f"{kernel_signature(name, args)}\n{{\n"
        f"    const int gid = get_global_id(0);\n"
        f"    if (gid >= {total}) return;\n"
        f"    const int n = gid % {inner};\n"
        f"    const int i = (gid / {inner}) % {count};\n"
        f"    const int o = gid / {inner * count};\n"
        f"    long index = indices[i];\n"
        f"    if (index < {-dim}L || index > {dim - 1}L) {{\n"
        f"        if (o == 0 && n == 0) {{ {record_bad_index('i', 'index', int64_atomics)} }}\n"
        f"        index = clamp(index, {-dim}L, {dim - 1}L);\n"
        f"    }}\n"
        f"    if (index < 0) index += {dim}L;\n"
        f"    out[gid] = data[((long)o * {dim}L + index) * {inner} + n];\n"
        "}\n"
    )
    return KernelSource(name, source, args, (total,), None)
