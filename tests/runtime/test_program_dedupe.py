"""A program builds each distinct kernel once: launches of kernels that differ only by their
names share one kernel (the GEMM of every layer of a model), and the numbers stay right."""

from __future__ import annotations

import numpy as np

import fusec
from fusec.compiler.driver import load, lower

# Two identical linear + GELU layers, then one of another width: two distinct GEMMs.
SOURCE = """
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %b1: tensor<16xf32>,
               %w2: tensor<16x16xf32>, %b2: tensor<16xf32>, %w3: tensor<16x32xf32>,
               %b3: tensor<32xf32>) -> tensor<8x32xf32> {
  %m1 = nn.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %a1 = nn.add %m1, %b1 : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %h1 = nn.gelu %a1 : tensor<8x16xf32> -> tensor<8x16xf32>
  %m2 = nn.matmul %h1, %w2 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %a2 = nn.add %m2, %b2 : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %h2 = nn.gelu %a2 : tensor<8x16xf32> -> tensor<8x16xf32>
  %m3 = nn.matmul %h2, %w3 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %a3 = nn.add %m3, %b3 : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  func.return %a3 : tensor<8x32xf32>
}
"""


def test_kernels_differing_only_by_name_are_built_once() -> None:
    plan = lower(load(SOURCE)).plan
    names = [launch.kernel for launch in plan.launches]
    assert len(names) == 3
    assert names[0] == names[1] != names[2]
    assert plan.source.count("__kernel") == 2
    for name in set(names):
        assert f"void {name}(" in plan.source
    assert "FUSEC_KERNEL_NAME" not in plan.source


def test_shared_kernels_compute_each_launch() -> None:
    exe = fusec.compile(SOURCE, device="cpu")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(spec.shape, dtype=np.float32) for spec in exe.plan.inputs]
    x, w1, b1, w2, b2, w3, b3 = (a.astype(np.float64) for a in args)

    def gelu(v: np.ndarray) -> np.ndarray:
        from math import erf, sqrt

        return v * 0.5 * (1 + np.vectorize(erf)(v / sqrt(2)))

    want = gelu(gelu(x @ w1 + b1) @ w2 + b2) @ w3 + b3
    (got,) = exe(*args)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
