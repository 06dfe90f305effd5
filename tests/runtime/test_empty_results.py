"""An op whose results have no elements computes nothing: the lowering allocates them and
launches no kernel (a GEMM, norm, softmax or attention template takes no empty size), and the
numpy reference gives empty arrays too (numpy's max of an empty axis raises, its mean warns).
Each program runs fused and unfused on the CPU device and matches the reference; ops that would
reduce nothing into a non-empty result are verifier errors (lit_tests/dialects/nn-empty-invalid)."""

# ruff: noqa: E501 - IR programs are written one op per line
from __future__ import annotations

import warnings

import numpy as np
import pytest

from fusec.compiler.check import run_with_reference

PROGRAMS = {
    "softmax over an empty axis": """
func.func @f(%x: tensor<4x0xf32>) -> tensor<4x0xf32> {
  %y = nn.softmax %x : tensor<4x0xf32> -> tensor<4x0xf32>
  func.return %y : tensor<4x0xf32>
}""",
    "layer_norm over an empty axis": """
func.func @f(%x: tensor<4x0xf32>, %g: tensor<0xf32>, %b: tensor<0xf32>) -> tensor<4x0xf32> {
  %y = nn.layer_norm %x, %g, %b : tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32> -> tensor<4x0xf32>
  func.return %y : tensor<4x0xf32>
}""",
    "rms_norm of no rows": """
func.func @f(%x: tensor<0x8xf32>, %g: tensor<8xf32>) -> tensor<0x8xf32> {
  %y = nn.rms_norm %x, %g : tensor<0x8xf32>, tensor<8xf32> -> tensor<0x8xf32>
  func.return %y : tensor<0x8xf32>
}""",
    "matmul, bias and gelu of no rows": """
func.func @f(%x: tensor<0x4xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<0x8xf32> {
  %m = nn.matmul %x, %w : tensor<0x4xf32>, tensor<4x8xf32> -> tensor<0x8xf32>
  %a = nn.add %m, %b : tensor<0x8xf32>, tensor<8xf32> -> tensor<0x8xf32>
  %g = nn.gelu %a : tensor<0x8xf32> -> tensor<0x8xf32>
  func.return %g : tensor<0x8xf32>
}""",
    "attention with no queries": """
func.func @f(%q: tensor<1x0x64xf32>, %k: tensor<1x3x64xf32>) -> tensor<1x0x64xf32> {
  %y = nn.attention %q, %k, %k {num_heads = 2 : i64, head_dim = 32 : i64} : tensor<1x0x64xf32>, tensor<1x3x64xf32>, tensor<1x3x64xf32> -> tensor<1x0x64xf32>
  func.return %y : tensor<1x0x64xf32>
}""",
}


@pytest.mark.parametrize("pipeline", ["none", "default"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_empty_results_match_the_reference(name: str, pipeline: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Mean of empty slice" from the reference is a failure
        outputs, expected = run_with_reference(PROGRAMS[name], pipeline=pipeline, device="cpu")
    for out, ref in zip(outputs, expected, strict=True):
        assert out.size == 0 and out.shape == ref.shape and out.dtype == ref.dtype == np.float32
