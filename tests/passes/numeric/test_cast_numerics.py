"""Casts inside fused regions, by numbers: every ordered pair of f32, f16, bf16, i8 and i32.

Each program casts its input (after an exact step in the source type) to the target type,
returns that value and also computes on it in f32, so the default pipeline makes it one
``fused.elementwise`` with two results of different element types, run as one kernel. The
fused run on the device, the un-fused run on the device and the reference of the fused IR
must equal the reference of the program as written BIT FOR BIT (a cast rounds once; there is
no tolerance to hide a wrong rounding, a lost -0.0 or a wrapped overflow): the inputs are
adversarial for casts (NaN, +-inf, +-0.0, subnormals of f32 and f16, values just inside and
outside the range of i8, i32 and f16, ties of bf16 and f16 rounding, every i8 value, i32
values that f32 or bf16 cannot hold) plus random ones.

The semantics themselves (saturation, NaN -> 0, rounding through f32 for i32 -> bf16) are
pinned by hand-written expectations in ``tests/reference/test_reference_casts.py``.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.dtypes import bf16_bits
from fusec.reference.executor import run_function

TYPES = ["f32", "f16", "bf16", "i8", "i32"]
PAIRS = [(a, b) for a, b in itertools.product(TYPES, TYPES) if a != b]
N = 64

FLOAT_EDGES = [
    np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.9999, -0.9999, 1.5, -1.5, 2.5, -2.5,
    126.9, 127.0, 127.5, 128.0, -128.0, -128.9, -129.0, 255.0, 256.5, -1e10, 1e10,
    2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4e9, 3e38, -3e38,
    65504.0, 65519.0, 65520.0, -65520.0, 2049.0, 2051.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,
    1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -(1.0 + 2.0**-8), 257.0, 259.0,
    2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14, 6e-8, -6e-8, 1e-40, -1e-40, 1e-45,
    1.1754942e-38, 3.3895314e38,
]

INT_EDGES = [
    -(2**31), 2**31 - 1, -(2**31) + 1, 0, 1, -1, 127, 128, -128, -129, 255, 256, -256,
    2049, 2051, 65504, 65519, 65520, -65520, 65536, 2**24, 2**24 + 1, 2**24 + 3, -(2**24) - 1,
    2**24 + 2**16 + 1, 2**24 + 2**16, 2**30 + 2**22 + 1, 123456789, -987654321,
]

HOST = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i8": np.int8, "i32": np.int32}


def adversarial(elem: str, rng: np.random.Generator) -> np.ndarray:
    """``N`` values of ``elem`` (bf16 as bit patterns): the edges, then random ones."""
    if elem == "i8":
        values = np.arange(-128, 128, dtype=np.int8)
        return rng.permutation(values)[:N] if N < 256 else values
    if elem == "i32":
        edges = np.array(INT_EDGES, np.int64)
        rand = rng.integers(-(2**31), 2**31, N, dtype=np.int64)
        rand[: N // 2] //= 2**rng.integers(0, 31, N // 2)  # all magnitudes
        return np.concatenate([edges, rand])[:N].astype(np.int32)
    edges = np.array(FLOAT_EDGES, np.float64)
    rand = rng.standard_normal(N) * 10.0 ** rng.integers(-3, 12, N)
    values = np.concatenate([edges, rand])[:N]
    with np.errstate(over="ignore"):
        if elem == "bf16":
            return bf16_bits(values.astype(np.float32))
        return values.astype(HOST[elem])


def int8_inputs(rng: np.random.Generator) -> np.ndarray:
    return rng.permutation(np.arange(-128, 128, dtype=np.int8))


def cast_ir(src: str, dst: str, n: int) -> str:
    """``x`` through an exact step in ``src`` (negation; none for i8, on which nothing but
    casts compute), cast to ``dst`` (returned), then to f32 and through ``abs``."""
    s, d, f = f"tensor<{n}x{src}>", f"tensor<{n}x{dst}>", f"tensor<{n}xf32>"
    pre = "" if src == "i8" else f"  %p = nn.neg %x : {s} -> {s}\n"
    p = "%x" if src == "i8" else "%p"
    to_f32 = f"  %z = nn.cast %y : {d} -> {f}\n" if dst != "f32" else ""
    z = "%z" if dst != "f32" else "%y"
    return (
        f"func.func @f(%x: {s}) -> ({d}, {f}) {{\n"
        f"{pre}"
        f"  %y = nn.cast {p} : {s} -> {d}\n"
        f"{to_f32}"
        f"  %w = nn.abs {z} : {f} -> {f}\n"
        f"  func.return %y, %w : {d}, {f}\n"
        "}"
    )


def bits(a: np.ndarray) -> np.ndarray:
    """The values' bit patterns, every NaN the same pattern (payloads are not specified)."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        canon = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
        return canon.view(f"u{a.dtype.itemsize}")
    if a.dtype == np.uint16:  # bf16 patterns
        nan = (a & 0x7FFF) > 0x7F80
        return np.where(nan, np.uint16(0x7FC0), a)
    return a


def assert_bit_exact(how: str, got: list[np.ndarray], want: list[np.ndarray], x: np.ndarray) -> None:
    assert len(got) == len(want), how
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, f"{how} result {i}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        bad = np.flatnonzero(bits(g) != bits(w))
        assert bad.size == 0, (
            f"{how} result {i}: {bad.size} element(s) differ, first at input {x[bad[0]]!r}: "
            f"got {g[bad[0]]!r}, want {w[bad[0]]!r}"
        )


@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_cast_in_region_is_one_kernel_and_bit_exact(numeric, src: str, dst: str) -> None:
    rng = np.random.default_rng(abs(hash((src, dst))) % 2**32)
    x = adversarial(src, rng)
    text = cast_ir(src, dst, x.size)
    assert numeric.top_ops(text) == ["fused.elementwise"]
    assert numeric.launches(text) == 1
    with np.errstate(all="ignore"):
        want = run_function(parse_module(make_context(), Source(text, "cast.mlir")), [x])
        for how, got in numeric.run_all(text, [x]).items():
            assert_bit_exact(how, got, want, x)


def test_i8_tensors_move_through_views_and_copies(numeric) -> None:
    """i8 is a storage type: transpose, reshape, narrow and concat move its bytes unchanged
    (every value, -128 and 127 included), fused, unfused and in the reference."""
    text = """
func.func @f(%x: tensor<16x16xi8>, %y: tensor<4x16xi8>) -> (tensor<16x16xi8>, tensor<256xi8>, tensor<16x3xi8>, tensor<20x16xi8>) {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<16x16xi8> -> tensor<16x16xi8>
  %r = nn.reshape %x : tensor<16x16xi8> -> tensor<256xi8>
  %n = nn.narrow %x {axis = 1 : i64, start = 5 : i64, length = 3 : i64} : tensor<16x16xi8> -> tensor<16x3xi8>
  %c = nn.concat %x, %y {axis = 0 : i64} : (tensor<16x16xi8>, tensor<4x16xi8>) -> tensor<20x16xi8>
  func.return %t, %r, %n, %c : tensor<16x16xi8>, tensor<256xi8>, tensor<16x3xi8>, tensor<20x16xi8>
}"""
    rng = np.random.default_rng(5)
    x = rng.permutation(np.arange(-128, 128, dtype=np.int8)).reshape(16, 16)
    y = rng.integers(-128, 128, (4, 16)).astype(np.int8)
    expected = [x.T, x.reshape(256), x[:, 5:8], np.concatenate([x, y])]
    for how, got in numeric.run_all(text, [x, y]).items():
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == np.int8, how
            np.testing.assert_array_equal(g, e, err_msg=how)


def test_casts_in_reduction_prologues(numeric) -> None:
    """``fuse-reductions``: a cast from bf16, f16 or i8 in a reduction's prologue is part of
    one fused.reduce (read in the input's type, reduced in f32)."""
    text = """
func.func @f(%x: tensor<33x300xbf16>, %h: tensor<33x300xf16>, %q: tensor<33x300xi8>) -> (tensor<33xf32>, tensor<300xf32>, tensor<33xf32>) {
  %a = nn.cast %x : tensor<33x300xbf16> -> tensor<33x300xf32>
  %e = nn.exp %a : tensor<33x300xf32> -> tensor<33x300xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 1>} : tensor<33x300xf32> -> tensor<33xf32>
  %b = nn.cast %h : tensor<33x300xf16> -> tensor<33x300xf32>
  %c = nn.reduce_max %b {axes = array<i64: 0>} : tensor<33x300xf32> -> tensor<300xf32>
  %d = nn.cast %q : tensor<33x300xi8> -> tensor<33x300xf32>
  %m = nn.reduce_mean %d {axes = array<i64: 1>} : tensor<33x300xf32> -> tensor<33xf32>
  func.return %s, %c, %m : tensor<33xf32>, tensor<300xf32>, tensor<33xf32>
}"""
    assert numeric.top_ops(text) == ["fused.reduce"] * 3
    rng = np.random.default_rng(9)
    x = bf16_bits(rng.standard_normal((33, 300)).astype(np.float32))
    h = rng.standard_normal((33, 300)).astype(np.float16)
    h[3, 7], h[5, 9] = np.float16(np.inf), np.float16(np.nan)  # max: inf in column 7, NaN in 9
    q = rng.integers(-128, 128, (33, 300)).astype(np.int8)
    q[0, :] = -128
    with np.errstate(all="ignore"):
        numeric.check(text, [x, h, q], tol=(1e-5, 1e-5))
