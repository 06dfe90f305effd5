"""Arguments named like OpenCL C keywords, types or built-ins still build and compute right.

A merged launch (``fuse-launches``) names its kernel's parameters after the host buffers, which
are the function's arguments: ``%int`` once became ``__global const float *restrict int``, a
build error (and ``%exp`` would hide ``exp()``)."""

from __future__ import annotations

import numpy as np
import pytest

import fusec
from fusec.codegen.emitter import c_identifier

NAMES = ["int", "float4", "exp", "half", "global", "select", "vload4", "convert_float", "__x"]


@pytest.mark.parametrize("name", NAMES)
def test_unsafe_names_are_not_used(name: str) -> None:
    assert c_identifier(name) is None


def test_ordinary_names_are_kept() -> None:
    assert [c_identifier(n) for n in ("x", "hidden", "w_q", "bias2")] == [
        "x", "hidden", "w_q", "bias2"]


def test_program_with_keyword_arguments_builds_and_computes() -> None:
    source = """func.func @f(%int: tensor<4x8xf32>, %exp: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = nn.add %int, %exp : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %z = nn.exp %y : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}"""
    exe = fusec.compile(source, pipeline="none", device="cpu")
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    b = np.linspace(0, 0.5, 8, dtype=np.float32)
    (out,) = exe(x, b)
    np.testing.assert_allclose(out, np.exp(x + b), rtol=1e-5)
