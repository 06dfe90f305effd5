"""f16 and bf16 programs end to end on the CPU OpenCL device, against the numpy reference.

The inputs are 16-bit (random normals rounded to the type; bf16 travels as uint16 bit
patterns); the reference computes each op in float64 on those same values and rounds its
result to the type, the kernels compute in float32 registers and round when they store. Both
unfused (``pipeline="none"``: every op its own kernel, including the conversion kernels
around the float32 templates) and fused (the default pipeline). Tolerances are the per-dtype
defaults of `fusec.compiler.check.TOLERANCES` (elementwise, not normwise).
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import os

import numpy as np
import pytest

from fusec.compiler.check import compare, run_with_reference
from fusec.dtypes import bf16_bits, bf16_to_f32

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")

DTYPES = ["f16", "bf16"]
HOST = {"f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16)}

PROGRAMS = {
    "elementwise": """
func.func @f(%x: tensor<3x17xT>, %b: tensor<17xT>) -> tensor<3x17xT> {
  %y = nn.add %x, %b : tensor<3x17xT>, tensor<17xT> -> tensor<3x17xT>
  %g = nn.gelu %y {approximate = "tanh"} : tensor<3x17xT> -> tensor<3x17xT>
  %s = nn.sigmoid %x : tensor<3x17xT> -> tensor<3x17xT>
  %m = nn.mul %g, %s : tensor<3x17xT>, tensor<3x17xT> -> tensor<3x17xT>
  func.return %m : tensor<3x17xT>
}""",
    "matmul_bias_gelu": """
func.func @f(%x: tensor<2x17x40xT>, %w: tensor<40x33xT>, %b: tensor<33xT>) -> tensor<2x17x33xT> {
  %h = nn.matmul %x, %w : tensor<2x17x40xT>, tensor<40x33xT> -> tensor<2x17x33xT>
  %y = nn.add %h, %b : tensor<2x17x33xT>, tensor<33xT> -> tensor<2x17x33xT>
  %g = nn.gelu %y : tensor<2x17x33xT> -> tensor<2x17x33xT>
  func.return %g : tensor<2x17x33xT>
}""",
    "batched_matmul": """
func.func @f(%a: tensor<3x5x9xT>, %b: tensor<3x9x7xT>) -> tensor<3x5x7xT> {
  %y = nn.matmul %a, %b : tensor<3x5x9xT>, tensor<3x9x7xT> -> tensor<3x5x7xT>
  func.return %y : tensor<3x5x7xT>
}""",
    "reductions": """
func.func @f(%x: tensor<5x300xT>) -> (tensor<5xT>, tensor<5xT>, tensor<300xT>) {
  %s = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<5x300xT> -> tensor<5xT>
  %m = nn.reduce_max %x {axes = array<i64: 1>} : tensor<5x300xT> -> tensor<5xT>
  %c = nn.reduce_sum %x {axes = array<i64: 0>} : tensor<5x300xT> -> tensor<300xT>
  func.return %s, %m, %c : tensor<5xT>, tensor<5xT>, tensor<300xT>
}""",
    "norms_softmax": """
func.func @f(%x: tensor<4x6x40xT>, %r: tensor<4x6x40xT>, %g: tensor<40xT>, %b: tensor<40xT>) -> (tensor<4x6x40xT>, tensor<4x6x40xT>, tensor<4x6x40xT>, tensor<4x6x40xT>) {
  %a = nn.add %x, %r : tensor<4x6x40xT>, tensor<4x6x40xT> -> tensor<4x6x40xT>
  %ln = nn.layer_norm %a, %g, %b : tensor<4x6x40xT>, tensor<40xT>, tensor<40xT> -> tensor<4x6x40xT>
  %a2 = nn.add %x, %r : tensor<4x6x40xT>, tensor<4x6x40xT> -> tensor<4x6x40xT>
  %rn = nn.rms_norm %a2, %g : tensor<4x6x40xT>, tensor<40xT> -> tensor<4x6x40xT>
  %s = nn.softmax %x : tensor<4x6x40xT> -> tensor<4x6x40xT>
  %s1 = nn.softmax %x {axis = 1 : i64} : tensor<4x6x40xT> -> tensor<4x6x40xT>
  func.return %ln, %rn, %s, %s1 : tensor<4x6x40xT>, tensor<4x6x40xT>, tensor<4x6x40xT>, tensor<4x6x40xT>
}""",
    "attention": """
func.func @f(%q: tensor<2x7x32xT>, %k: tensor<2x9x32xT>, %v: tensor<2x9x32xT>, %mask: tensor<2x9xT>) -> tensor<2x7x32xT> {
  %y = nn.attention %q, %k, %v mask %mask {num_heads = 2 : i64, head_dim = 16 : i64} : tensor<2x7x32xT>, tensor<2x9x32xT>, tensor<2x9x32xT>, tensor<2x9xT> -> tensor<2x7x32xT>
  func.return %y : tensor<2x7x32xT>
}""",
    "casts": """
func.func @f(%x: tensor<4x5xT>, %y: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xT>, tensor<4x5xi32>) {
  %w = nn.cast %x : tensor<4x5xT> -> tensor<4x5xf32>
  %s = nn.add %w, %y : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %n = nn.cast %s : tensor<4x5xf32> -> tensor<4x5xT>
  %c = nn.constant {value = dense<3.0> : tensor<4x5xT>} : tensor<4x5xT>
  %t = nn.mul %n, %c : tensor<4x5xT>, tensor<4x5xT> -> tensor<4x5xT>
  %i = nn.cast %t : tensor<4x5xT> -> tensor<4x5xi32>
  func.return %s, %t, %i : tensor<4x5xf32>, tensor<4x5xT>, tensor<4x5xi32>
}""",
}


def program(name: str, dtype: str) -> str:
    return PROGRAMS[name].replace("xT>", f"x{dtype}>")


@pytest.mark.parametrize("pipeline", ["none", "default"])
@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_16_bit_program_matches_the_reference(dtype: str, name: str, pipeline: str) -> None:
    outputs, expected = run_with_reference(program(name, dtype), seed=1, pipeline=pipeline,
                                           device=DEVICE)
    for result in compare(outputs, expected):
        assert result.ok, result.describe()
    for out, ref in zip(outputs, expected, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype
    assert any(out.dtype == HOST[dtype] for out in outputs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_16_bit_results_are_rounded_to_nearest_even(dtype: str) -> None:
    """Values that sit exactly halfway between two 16-bit numbers (and near it) come out as
    the reference rounds them, so the kernels round to nearest even, not toward zero."""
    source = """
func.func @f(%x: tensor<8xf32>) -> tensor<8xT> {
  %y = nn.cast %x : tensor<8xf32> -> tensor<8xT>
  func.return %y : tensor<8xT>
}""".replace("xT>", f"x{dtype}>")
    ulp = 2.0**-10 if dtype == "f16" else 2.0**-7
    x = np.array([1 + ulp / 2, 1 + 1.5 * ulp, 1 + ulp * 0.51, -(1 + ulp / 2), 3.0, np.inf,
                  -np.inf, np.nan], np.float32)
    (out,), (ref,) = run_with_reference(source, device=DEVICE, pipeline="none", args=[x])
    want = x.astype(np.float16) if dtype == "f16" else bf16_bits(x)
    np.testing.assert_array_equal(out[:-1], want[:-1])
    np.testing.assert_array_equal(ref[:-1], want[:-1])
    value = out.astype(np.float32) if dtype == "f16" else bf16_to_f32(out)
    assert np.isnan(value[-1])


def test_bf16_inputs_are_bit_patterns() -> None:
    """A bf16 argument takes uint16 bit patterns; a float32 array is refused by name."""
    import fusec
    from fusec.errors import InputError

    exe = fusec.compile("""
func.func @f(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %y = nn.add %x, %x : tensor<3xbf16>, tensor<3xbf16> -> tensor<3xbf16>
  func.return %y : tensor<3xbf16>
}""", device=DEVICE, pipeline="none")
    (out,) = exe(bf16_bits([1.0, -2.5, 0.375]))
    np.testing.assert_array_equal(bf16_to_f32(out), [2.0, -5.0, 0.75])
    with pytest.raises(InputError, match="dtype float32, expected uint16"):
        exe(np.ones(3, np.float32))
