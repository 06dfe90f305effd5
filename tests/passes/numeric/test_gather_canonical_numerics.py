"""``canonicalize-nn``'s rules on gathers, each of which takes a launch away: a gather of a splat
table (RoBERTa's token-type buffer, all zeros, read at position ids computed from the input
ids) is the splat; a gathered row times a constant (Gemma's embedding scale) is a row of the
scaled table when the table is bound (``compiler/fold_params.py`` then scales it once). Fused,
unfused and the references agree with numpy on random ids, ids at both ends of the table's
range (negative ids count from the end), and for the scale on values that overflow to
infinity, NaN and signed zeros."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

import fusec

PROGRAM = """
func.func @embed(%ids: tensor<2x6xi32>, %words: tensor<12x4xf32>, %types: tensor<2x4xf32>) -> tensor<2x6x4xf32> {
  %buffer = nn.constant {value = dense<1> : tensor<1x12xi32>} : tensor<1x12xi32>
  %flat = nn.reshape %buffer : tensor<1x12xi32> -> tensor<12xi32>
  %type_ids = nn.gather %flat, %ids : tensor<12xi32>, tensor<2x6xi32> -> tensor<2x6xi32>
  %w = nn.gather %words, %ids : tensor<12x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
  %t = nn.gather %types, %type_ids : tensor<2x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
  %y = nn.add %w, %t : tensor<2x6x4xf32>, tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  func.return %y : tensor<2x6x4xf32>
}"""

IDS = {
    "random": np.random.default_rng(0).integers(0, 12, (2, 6)),
    "ends of the range": np.array([[0, 11, -1, -12, 5, 6], [-6, 1, 10, -11, 2, 3]]),
}


@pytest.mark.parametrize("case", sorted(IDS))
def test_gather_of_a_splat_agrees_with_numpy(numeric, case: str) -> None:
    rng = np.random.default_rng(1)
    words = rng.standard_normal((12, 4)).astype(np.float32)
    types = rng.standard_normal((2, 4)).astype(np.float32)
    ids = IDS[case].astype(np.int32)
    numeric.check(PROGRAM, [ids, words, types], expected=[words[ids] + types[1]])


def test_the_gather_of_a_splat_is_no_launch(numeric) -> None:
    ops = numeric.top_ops(PROGRAM, "canonicalize-nn")
    assert ops.count("nn.gather") == 2 and "nn.reshape" not in ops, ops
    assert numeric.launches(PROGRAM) < numeric.launches(PROGRAM, "fuse-elementwise")


SCALED = """
func.func @embed(%ids: tensor<2x6xi32>, %table: tensor<12x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x6x4xf32> {
  %rows = nn.gather %table, %ids : tensor<12x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
  %scale = nn.constant {value = dense<5.65685415> : tensor<f32>} : tensor<f32>
  %x = nn.mul %rows, %scale : tensor<2x6x4xf32>, tensor<f32> -> tensor<2x6x4xf32>
  %p = nn.matmul %x, %w : tensor<2x6x4xf32>, tensor<4x4xf32> -> tensor<2x6x4xf32>
  %y = nn.add %p, %x : tensor<2x6x4xf32>, tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  func.return %y : tensor<2x6x4xf32>
}"""


def table_of(case: str) -> np.ndarray:
    table = np.random.default_rng(2).standard_normal((12, 4)).astype(np.float32)
    if case == "adversarial":  # overflows to +-inf when scaled, NaN, signed zeros
        table[0] = [3e38, -3e38, np.nan, -0.0]
        table[11] = [0.0, -0.0, 1e-38, -1e-38]
    return table


@pytest.mark.parametrize("case", ["random", "adversarial"])
@pytest.mark.parametrize("ids", sorted(IDS))
def test_a_scaled_gathered_table_agrees_with_numpy(case: str, ids: str) -> None:
    table = table_of(case)
    w = np.eye(4, dtype=np.float32) * 0.5
    index = IDS[ids].astype(np.int32)
    x = table[index] * np.float32(5.65685415)
    with np.errstate(all="ignore"):
        want = x @ w + x
    params = {"table": table, "w": w}
    for pipeline in ("default", "default,unfuse", "none"):
        (got,) = fusec.compile(SCALED, pipeline=pipeline, device="cpu", params=params)(ids=index)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=pipeline)
    (unbound,) = fusec.compile(SCALED, device="cpu")(index, table, w)
    np.testing.assert_allclose(unbound, want, rtol=1e-6, atol=1e-6)


def test_the_scale_moves_onto_a_bound_table_only() -> None:
    params = {"table": table_of("random"), "w": np.eye(4, dtype=np.float32)}
    bound = fusec.compile(SCALED, device="cpu", params=params)
    unbound = fusec.compile(SCALED, device="cpu")
    assert len(bound.plan.launches) == len(unbound.plan.launches) - 1
