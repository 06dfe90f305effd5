"""The meaning of ``nn.cast`` between f32, f16, bf16, i8 and i32 (and the scalar ops a fused
body spells it with), pinned by hand-written expectations on edge values: to an integer a
cast truncates toward zero and saturates, NaN giving 0, from floats and from wider integers
alike; to a float it rounds to nearest even (i32 -> bf16 through f32), past the range to
infinity. The nn op's reference and the fused body's reference (``fusec.reference.scalar``)
must both say so."""

# ruff: noqa: E501 - expected values are written one case per line

from __future__ import annotations

import numpy as np
import pytest

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.compiler.pipeline import run_pipeline
from fusec.dtypes import bf16_bits, bf16_to_f32
from fusec.reference.executor import run_function

NAN, INF = float("nan"), float("inf")


def run_cast(src: str, dst: str, x: np.ndarray, fused: bool) -> np.ndarray:
    """``x`` (host array of ``src``) cast to ``dst``: the nn op's reference, or (``fused``) the
    reference of a ``fused.elementwise`` body holding the cast (an abs in f32 after it keeps
    the region two ops long, and is returned too)."""
    n = x.size
    s, d = f"tensor<{n}x{src}>", f"tensor<{n}x{dst}>"
    text = (f"func.func @f(%x: {s}) -> ({d}, tensor<{n}xf32>) {{\n"
            f"  %y = nn.cast %x : {s} -> {d}\n"
            + (f"  %z = nn.cast %y : {d} -> tensor<{n}xf32>\n" if dst != "f32" else "")
            + f"  %w = nn.abs {'%z' if dst != 'f32' else '%y'} : tensor<{n}xf32> -> tensor<{n}xf32>\n"
            f"  func.return %y, %w : {d}, tensor<{n}xf32>\n}}")
    ctx = make_context()
    module = parse_module(ctx, Source(text, "cast.mlir"))
    if fused:
        run_pipeline(ctx, module, "default", "cast.mlir")
        assert "fused.elementwise" in str(module)
    with np.errstate(all="ignore"):
        return run_function(module, [x])[0]


BOTH = pytest.mark.parametrize("fused", [False, True], ids=["nn", "fused-body"])

FLOATS = [NAN, INF, -INF, 0.0, -0.0, 0.75, -0.75, 1.99, -1.99, 126.99, 127.5, 128.0, -128.0,
          -128.99, -129.0, 1e10, -1e10, 2147483520.0, 2147483648.0, -2147483648.0, -3e9]
TO_I8 = [0, 127, -128, 0, 0, 0, 0, 1, -1, 126, 127, 127, -128, -128, -128, 127, -128, 127, 127,
         -128, -128]
TO_I32 = [0, 2**31 - 1, -(2**31), 0, 0, 0, 0, 1, -1, 126, 127, 128, -128, -128, -129,
          2**31 - 1, -(2**31), 2147483520, 2**31 - 1, -(2**31), -(2**31)]


@BOTH
@pytest.mark.parametrize("src", ["f32", "f16", "bf16"])
def test_float_to_int_truncates_saturates_and_nan_is_zero(src, fused):
    x = np.array(FLOATS, np.float64)
    keep = np.ones(x.size, bool)
    if src != "f32":  # only the values the 16-bit type holds exactly, so the test is about the cast
        host = np.float16 if src == "f16" else np.float32
        with np.errstate(over="ignore"):
            held = x.astype(host) if src == "f16" else bf16_to_f32(bf16_bits(x))
        keep = np.isnan(x) | (held.astype(np.float64) == x)
    values = x[keep]
    host_x = (values.astype(np.float32) if src == "f32" else values.astype(np.float16)
              if src == "f16" else bf16_bits(values))
    np.testing.assert_array_equal(run_cast(src, "i8", host_x, fused),
                                  np.array(TO_I8, np.int8)[keep])
    np.testing.assert_array_equal(run_cast(src, "i32", host_x, fused),
                                  np.array(TO_I32, np.int64)[keep].astype(np.int32))


@BOTH
def test_i32_to_i8_saturates_and_i8_to_i32_sign_extends(fused):
    x = np.array([-(2**31), -129, -128, -1, 0, 1, 127, 128, 255, 256, 2**31 - 1], np.int32)
    np.testing.assert_array_equal(run_cast("i32", "i8", x, fused),
                                  np.array([-128, -128, -128, -1, 0, 1, 127, 127, 127, 127, 127], np.int8))
    every = np.arange(-128, 128, dtype=np.int8)
    np.testing.assert_array_equal(run_cast("i8", "i32", every, fused), every.astype(np.int32))


@BOTH
def test_int_to_f16_rounds_to_nearest_even_and_overflows_to_inf(fused):
    x = np.array([2049, 2051, -2049, 65504, 65519, 65520, -65520, 2**31 - 1], np.int32)
    out = run_cast("i32", "f16", x, fused)
    np.testing.assert_array_equal(out, np.array([2048, 2052, -2048, 65504, 65504, INF, -INF, INF], np.float16))


@BOTH
def test_i32_to_bf16_rounds_through_f32(fused):
    # 2^24 + 2^16 + 1: f32 rounds it to 2^24 + 2^16 (a tie for bf16), which then rounds to
    # even, 2^24; a single rounding from the integer would give 2^24 + 2^17.
    x = np.array([2**24 + 2**16 + 1, 257, 259, -259, 2**31 - 1], np.int32)
    out = bf16_to_f32(run_cast("i32", "bf16", x, fused))
    np.testing.assert_array_equal(out, np.array([2**24, 256, 260, -260, 2**31], np.float32))


@BOTH
def test_f32_to_bf16_and_f16_ties_to_even_keeps_zero_signs_and_subnormals(fused):
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11, 1 + 3 * 2**-11, -0.0, 0.0, 2**-24,
                  2**-25, 3 * 2**-26, 65520.0, 3e38, NAN], np.float32)
    b = bf16_to_f32(run_cast("f32", "bf16", x, fused))
    np.testing.assert_array_equal(b[:4], np.array([1.0, 1 + 2**-6, 1.0, 1.0], np.float32))
    assert np.signbit(b[4]) and not np.signbit(b[5]) and np.isnan(b[11])
    h = run_cast("f32", "f16", x, fused)
    np.testing.assert_array_equal(h[:4], np.array([1 + 2**-8, 1 + 3 * 2**-8, 1.0, 1 + 2**-9], np.float16))
    assert np.signbit(h[4]) and not np.signbit(h[5])
    np.testing.assert_array_equal(h[6:11], np.array([2**-24, 0.0, 2**-24, INF, INF], np.float16))
    assert np.isnan(h[11])


@BOTH
def test_between_16_bit_floats(fused):
    # bf16 -> f16: past 65504 is infinite, below f16's subnormals is 0; f16 -> bf16 rounds
    # the 11-bit significand to 8 bits (ties to even).
    big = bf16_bits(np.array([65536.0, 1e-8, 1.5, -3e38], np.float32))
    np.testing.assert_array_equal(run_cast("bf16", "f16", big, fused),
                                  np.array([INF, 0.0, 1.5, -INF], np.float16))
    h = np.array([1 + 2**-8, 1 + 3 * 2**-8, 2**-24, 65504], np.float16)
    np.testing.assert_array_equal(bf16_to_f32(run_cast("f16", "bf16", h, fused)),
                                  np.array([1.0, 1 + 2**-6, 2**-24, 65536.0], np.float32))
