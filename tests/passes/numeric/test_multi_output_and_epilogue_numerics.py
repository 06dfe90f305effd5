"""fuse-multi-output and fuse-matmul-epilogue by numbers: an elementwise chain whose
intermediate is also returned, a value with two elementwise consumers, and alpha * (A @ B) +
beta * C with row and column scales and a clamp are each one launch, and the fused, unfused
and reference runs agree with numpy."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

CHAIN = """
func.func @chain(%a: tensor<33x20xf32>, %b: tensor<20xf32>) -> (tensor<33x20xf32>, tensor<33x20xf32>) {
  %t = nn.mul %a, %b : tensor<33x20xf32>, tensor<20xf32> -> tensor<33x20xf32>
  %u = nn.add %t, %a : tensor<33x20xf32>, tensor<33x20xf32> -> tensor<33x20xf32>
  %y = nn.tanh %u : tensor<33x20xf32> -> tensor<33x20xf32>
  func.return %y, %t : tensor<33x20xf32>, tensor<33x20xf32>
}"""

SIBLINGS = """
func.func @siblings(%a: tensor<7x13xf32>, %b: tensor<7x1xf32>) -> (tensor<7x13xf32>, tensor<7x13xf32>) {
  %t = nn.sub %a, %b : tensor<7x13xf32>, tensor<7x1xf32> -> tensor<7x13xf32>
  %u = nn.exp %t : tensor<7x13xf32> -> tensor<7x13xf32>
  %v = nn.sigmoid %t : tensor<7x13xf32> -> tensor<7x13xf32>
  func.return %u, %v : tensor<7x13xf32>, tensor<7x13xf32>
}"""

# Casts and comparisons in the stored intermediate: an i1 result next to an f32 one.
MIXED = """
func.func @mixed(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %z = nn.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %c = nn.cmp %a, %z {predicate = "gt"} : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  %y = nn.where %c, %a, %z : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %y, %c : tensor<4x8xf32>, tensor<4x8xi1>
}"""


def gemm_ir(m: int, k: int, n: int) -> str:
    a, b, o = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    return f"""
func.func @gemm(%a: {a}, %b: {b}, %c: {o}, %rs: tensor<{m}x1xf32>, %cs: tensor<{n}xf32>) -> {o} {{
  %p = nn.matmul %a, %b : {a}, {b} -> {o}
  %al = nn.constant {{value = dense<1.5> : tensor<f32>}} : tensor<f32>
  %be = nn.constant {{value = dense<-0.5> : tensor<f32>}} : tensor<f32>
  %lo = nn.constant {{value = dense<-2.0> : tensor<f32>}} : tensor<f32>
  %hi = nn.constant {{value = dense<2.0> : tensor<f32>}} : tensor<f32>
  %1 = nn.mul %p, %al : {o}, tensor<f32> -> {o}
  %2 = nn.mul %c, %be : {o}, tensor<f32> -> {o}
  %3 = nn.add %1, %2 : {o}, {o} -> {o}
  %4 = nn.mul %3, %rs : {o}, tensor<{m}x1xf32> -> {o}
  %5 = nn.mul %4, %cs : {o}, tensor<{n}xf32> -> {o}
  %6 = nn.max %5, %lo : {o}, tensor<f32> -> {o}
  %7 = nn.min %6, %hi : {o}, tensor<f32> -> {o}
  func.return %7 : {o}
}}"""

BATCHED_BIAS_ACT = """
func.func @batched(%x: tensor<2x5x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>, %s: tensor<2x1x12xf32>, %r: tensor<2x5x12xf32>) -> tensor<2x5x12xf32> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : tensor<2x5x16xf32>, tensor<16x12xf32>, tensor<12xf32> -> tensor<2x5x12xf32>
  %z = nn.mul %y, %s : tensor<2x5x12xf32>, tensor<2x1x12xf32> -> tensor<2x5x12xf32>
  %o = nn.add %z, %r : tensor<2x5x12xf32>, tensor<2x5x12xf32> -> tensor<2x5x12xf32>
  func.return %o : tensor<2x5x12xf32>
}"""


def random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_chain_with_returned_intermediate(numeric) -> None:
    assert numeric.top_ops(CHAIN) == ["fused.elementwise"]
    assert numeric.launches(CHAIN) == 1
    # fuse-elementwise alone leaves the intermediate as its own op (the kernel-level
    # fuse-launches of lower-opencl may merge the two launches again).
    assert numeric.top_ops(CHAIN, "fuse-elementwise") == ["nn.mul", "fused.elementwise"]
    a, b = random((33, 20), 0), random((20,), 1)
    t = a * b
    numeric.check(CHAIN, [a, b], [np.tanh(t.astype(np.float64) + a), t], tol=(1e-6, 1e-5))


def test_two_consumers(numeric) -> None:
    assert numeric.launches(SIBLINGS) == 1
    a, b = random((7, 13), 2), random((7, 1), 3)
    t = (a - b).astype(np.float64)
    numeric.check(SIBLINGS, [a, b], [np.exp(t), 1 / (1 + np.exp(-t))], tol=(1e-6, 1e-5))


def test_mixed_types(numeric) -> None:
    assert numeric.launches(MIXED) == 1
    a = random((4, 8), 4)
    a[0, 0] = np.nan
    numeric.check(MIXED, [a], [np.where(a > 0, a, 0), a > 0])


@pytest.mark.parametrize("m,k,n", [(6, 9, 5), (33, 70, 17), (64, 128, 96)])
def test_gemm_epilogue(numeric, m: int, k: int, n: int) -> None:
    text = gemm_ir(m, k, n)
    assert numeric.top_ops(text) == ["fused.matmul_epilogue"]
    assert numeric.launches(text) == 1
    args = [random((m, k), 5), random((k, n), 6), random((m, n), 7), random((m, 1), 8), random((n,), 9)]
    a, b, c, rs, cs = (x.astype(np.float64) for x in args)
    expected = np.clip((1.5 * (a @ b) - 0.5 * c) * rs * cs, -2, 2)
    numeric.check(text, args, [expected], tol=(1e-4, 1e-4))


def test_gemm_epilogue_adversarial(numeric) -> None:
    """Infinities and NaN in the added matrix pass through the epilogue as in numpy (the
    clamp is left out: OpenCL's fmin/fmax drop NaN, numpy's keep it)."""
    text = """
func.func @g(%a: tensor<5x6xf32>, %b: tensor<6x7xf32>, %c: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %p = nn.matmul %a, %b : tensor<5x6xf32>, tensor<6x7xf32> -> tensor<5x7xf32>
  %y = nn.add %p, %c : tensor<5x7xf32>, tensor<5x7xf32> -> tensor<5x7xf32>
  %z = nn.mul %y, %c : tensor<5x7xf32>, tensor<5x7xf32> -> tensor<5x7xf32>
  func.return %z : tensor<5x7xf32>
}"""
    a, b, c = random((5, 6), 10) * 1e18, random((6, 7), 11) * 1e18, random((5, 7), 12)
    c[0, 0], c[1, 1], c[2, 2] = np.inf, -np.inf, np.nan
    assert numeric.launches(text) == 1
    with np.errstate(all="ignore"):
        p = (a.astype(np.float64) @ b).astype(np.float32)
        numeric.check(text, [a, b, c], [(p + c) * c], tol=(1e-5, 1e-4))


def test_batched_bias_act_epilogue(numeric) -> None:
    assert numeric.top_ops(BATCHED_BIAS_ACT) == ["fused.matmul_epilogue"]
    assert numeric.launches(BATCHED_BIAS_ACT) == 1
    args = [random((2, 5, 16), 13), random((16, 12), 14), random((12,), 15), random((2, 1, 12), 16),
            random((2, 5, 12), 17)]
    numeric.check(BATCHED_BIAS_ACT, args, tol=(1e-5, 1e-4))
