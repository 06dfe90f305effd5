"""``canonicalize-nn``'s gather of a splat table (RoBERTa's token-type buffer, all zeros, read
at position ids computed from the input ids): the gather becomes the splat, so its launch
goes; fused, unfused and both references agree with numpy on random ids and on ids at both
ends of the table's range (negative ids count from the end)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest

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
