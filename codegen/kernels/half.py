"""The 16-bit float storage types in OpenCL C: ``f16`` buffers are ``half``, ``bf16`` buffers
``ushort``; both are converted to ``float`` when loaded and back when stored, so every kernel
computes (and accumulates) in float32 registers.

``half`` is read and written with ``vload_half`` / ``vstore_half_rte`` only, which OpenCL C
provides without ``cl_khr_fp16`` (a device without half arithmetic still runs these kernels).
bf16 is the top half of a float32: a load is a shift, a store rounds to nearest even (NaN kept
quiet) in `HELPERS`, as ``fusec.dtypes.bf16_bits`` does on the host.

`STORAGE` is the one table of spellings; `load` and `store` write an access through a
pointer, so the generated kernels and the templates convert the same way.
"""

from __future__ import annotations

STORAGE: dict[str, str] = {"float": "float", "f32": "float", "f16": "half", "bf16": "ushort"}
"""Element type name (``f32``, ``f16``, ``bf16``) -> the OpenCL type of its buffers."""

BUFFER_TYPES: dict[str, str] = {**STORAGE, "i32": "int", "i8": "char", "i1": "uchar"}
"""Every element type a template may store (a result after a cast) -> its buffer type; `load`
and `store` read and write the integer ones as they are."""

HELPERS = """#ifndef FUSEC_HALF_HELPERS
#define FUSEC_HALF_HELPERS
inline float fusec_bf16_to_float(const ushort b) { return as_float((uint)b << 16); }
inline ushort fusec_float_to_bf16(const float f) {
    const uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float fusec_round_bf16(const float f) { return fusec_bf16_to_float(fusec_float_to_bf16(f)); }
inline float fusec_round_f16(const float f) {
    ushort h;
    vstore_half_rte(f, 0, (__private half *)&h);
    return vload_half(0, (__private const half *)&h);
}
#endif
"""
"""C helpers every kernel that touches a 16-bit float includes (guarded, so a program may
hold them many times)."""


def check_dtype(name: str, dtype: str) -> str:
    """The OpenCL buffer type of a kernel whose operands are all of element type `dtype`
    (f32, f16, bf16); a ValueError naming kernel `name` for any other."""
    if dtype not in ("f32", "f16", "bf16"):
        raise ValueError(f"kernel '{name}': dtype '{dtype}' is not f32, f16 or bf16")
    return STORAGE[dtype]


def is_half(dtype: str) -> bool:
    """Whether ``dtype`` (an element type name) is a 16-bit float."""
    return dtype in ("f16", "bf16")


def load(dtype: str, pointer: str, index: str) -> str:
    """C expression: element ``index`` of ``pointer`` as a float (any storage type)."""
    if dtype == "f16":
        return f"vload_half({index}, {pointer})"
    if dtype == "bf16":
        return f"fusec_bf16_to_float({pointer}[{index}])"
    return f"{pointer}[{index}]"


def store(dtype: str, pointer: str, index: str, value: str) -> str:
    """C statement (no semicolon): the float ``value`` stored at ``pointer[index]``, rounded
    to nearest even for a 16-bit type."""
    if dtype == "f16":
        return f"vstore_half_rte({value}, {index}, {pointer})"
    if dtype == "bf16":
        return f"{pointer}[{index}] = fusec_float_to_bf16({value})"
    return f"{pointer}[{index}] = {value}"


def vload(dtype: str, width: int, offset: str, pointer: str) -> str:
    """C expression: ``width`` consecutive elements from ``pointer + offset * width`` as a
    ``float<width>`` (``vload<width>``'s addressing), any storage type."""
    if width == 1:
        return load(dtype, pointer, offset)
    if dtype == "f16":
        return f"vload_half{width}({offset}, {pointer})"
    if dtype == "bf16":
        return f"as_float{width}(convert_uint{width}(vload{width}({offset}, {pointer})) << 16)"
    return f"vload{width}({offset}, {pointer})"


def vstore(dtype: str, width: int, value: str, offset: str, pointer: str) -> str:
    """C statement (no semicolon): the ``float<width>`` ``value`` stored at ``pointer + offset
    * width`` (``vstore<width>``'s addressing), rounded to nearest even for a 16-bit type
    (bf16 through `bf16_vector_helper`, which the caller includes)."""
    if dtype == "f16":
        return f"vstore_half{width}_rte({value}, {offset}, {pointer})"
    if dtype == "bf16":
        return f"vstore{width}(fusec_float{width}_to_bf16({value}), {offset}, {pointer})"
    return f"vstore{width}({value}, {offset}, {pointer})"


ALIGNED_HELPERS = """#ifndef FUSEC_ALIGNED_HALF_HELPERS
#define FUSEC_ALIGNED_HALF_HELPERS
inline float8 fusec_load_half8(__global const half *p) {
    const uint4 bits = *(__global const uint4 *)p;
    return vload_half8(0, (__private const half *)&bits);
}
inline void fusec_store_half8(const float8 v, __global half *p) {
    uint4 bits;
    vstore_half8_rte(v, 0, (__private half *)&bits);
    *(__global uint4 *)p = bits;
}
inline float8 fusec_load_bf16x8(__global const ushort *p) {
    const uint4 bits = *(__global const uint4 *)p;
    return as_float8(convert_uint8(as_ushort8(bits)) << 16);
}
#endif
"""
"""The C functions of `aligned_vload` and `aligned_vstore` (guarded), which a kernel that
uses them includes after `HELPERS`."""


def aligned_vload(dtype: str, pointer: str) -> str:
    """C expression: the 8 16-bit elements (`fusec.dialects.kernel.ALIGNED_LANES`) at
    `pointer` (a 16-byte-aligned address) as a ``float8``, read as one ``uint4`` and
    converted in registers (NVIDIA's OpenCL splits ``vload_half8`` into 8 two-byte loads:
    `fusec.bench.probe_half_moves`)."""
    if dtype == "f16":
        return f"fusec_load_half8({pointer})"
    if dtype == "bf16":
        return f"fusec_load_bf16x8({pointer})"
    raise ValueError(f"an aligned vector load of {dtype}: 16-bit types only")


def aligned_vstore(dtype: str, value: str, pointer: str) -> str:
    """C statement (no semicolon): the ``float8`` `value` rounded to nearest even and written
    at `pointer` (16-byte aligned) as one ``uint4`` (bf16 through `bf16_vector_helper` (8),
    which the caller includes)."""
    if dtype == "f16":
        return f"fusec_store_half8({value}, {pointer})"
    if dtype == "bf16":
        return f"*(__global uint4 *)({pointer}) = as_uint4(fusec_float8_to_bf16({value}))"
    raise ValueError(f"an aligned vector store of {dtype}: 16-bit types only")


def bf16_vector_helper(width: int) -> str:
    """C function ``fusec_float<width>_to_bf16``: `HELPERS`' rounding, lane-wise."""
    return (
        f"#ifndef FUSEC_BF16_VECTOR_{width}\n#define FUSEC_BF16_VECTOR_{width}\n"
        f"inline ushort{width} fusec_float{width}_to_bf16(const float{width} f) {{\n"
        f"    const uint{width} u = as_uint{width}(f);\n"
        f"    const uint{width} rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;\n"
        f"    const uint{width} quiet = (u >> 16) | 0x40u;\n"
        f"    return convert_ushort{width}(select(rounded, quiet, "
        f"(u & 0x7fffffffu) > 0x7f800000u));\n"
        "}\n#endif\n"
    )


def store_rounded(dtype: str, stored: str, pointer: str, index: str, value: str) -> str:
    """C statement (no semicolon): the float ``value`` rounded to `dtype` and stored as
    `stored` (a result of `dtype` operands kept in a wider buffer: a cast the kernel stores,
    the same number the cast of a `dtype` result gives). Needs `HELPERS` for a 16-bit
    `dtype`."""
    if stored == dtype:
        return store(dtype, pointer, index, value)
    return store(stored, pointer, index, round_to(dtype, value))


def round_to(dtype: str, value: str) -> str:
    """C expression: the float ``value`` rounded to ``dtype`` (a no-op for float)."""
    if dtype == "f16":
        return f"fusec_round_f16({value})"
    if dtype == "bf16":
        return f"fusec_round_bf16({value})"
    return value
