"""Data movement on bound inputs is folded at compile time (`fusec.compiler.fold_params`).

fuse-shared-input-matmul concatenates the weights of two matmuls that read the same input;
with the weights bound, that concatenation is done once when compiling (a new bound input),
not by a kernel on every call, and the results are the same.
"""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

import fusec
from fusec.compiler.driver import fuse_and_fold, load
from fusec.compiler.fold_params import fold_bound_inputs
from fusec.errors import InputError

GATE_UP = """
func.func @ffn(%x: tensor<16x32xf32>, %w_gate: tensor<32x48xf32>, %w_up: tensor<32x48xf32>) -> tensor<16x48xf32> {
  %g = nn.matmul %x, %w_gate : tensor<16x32xf32>, tensor<32x48xf32> -> tensor<16x48xf32>
  %u = nn.matmul %x, %w_up : tensor<16x32xf32>, tensor<32x48xf32> -> tensor<16x48xf32>
  %s = nn.silu %g : tensor<16x48xf32> -> tensor<16x48xf32>
  %y = nn.mul %s, %u : tensor<16x48xf32>, tensor<16x48xf32> -> tensor<16x48xf32>
  func.return %y : tensor<16x48xf32>
}"""

# %w_up is also read by a relu (not data movement): it stays bound, and so nothing that reads
# it is folded (binding it again must reach every use).
SHARED = GATE_UP.replace(
    "  func.return %y : tensor<16x48xf32>",
    "  %r = nn.relu %w_up : tensor<32x48xf32> -> tensor<32x48xf32>\n"
    "  %t = nn.narrow %r {axis = 0 : i64, start = 0 : i64, length = 16 : i64} : tensor<32x48xf32> -> tensor<16x48xf32>\n"
    "  %z = nn.add %y, %t : tensor<16x48xf32>, tensor<16x48xf32> -> tensor<16x48xf32>\n"
    "  func.return %z : tensor<16x48xf32>")


def weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"w_gate": rng.standard_normal((32, 48)).astype(np.float32),
            "w_up": rng.standard_normal((32, 48)).astype(np.float32)}


def x_input() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((16, 32)).astype(np.float32)


def expected(x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    g = x.astype(np.float64) @ w["w_gate"]
    return g / (1 + np.exp(-g)) * (x.astype(np.float64) @ w["w_up"])


def test_the_concatenated_weights_become_one_bound_input() -> None:
    module = load(GATE_UP)
    left, bound = fuse_and_fold(module, None, "default", "<t>", weights())
    assert left == "none"
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert "nn.concat" not in [op.name for op in fn.body.block.ops]
    assert [a.name_hint for a in fn.body.block.args] == ["x", "fusec_folded0"]
    assert set(bound) == {"fusec_folded0"}
    w = weights()
    np.testing.assert_array_equal(bound["fusec_folded0"],
                                  np.concatenate([w["w_up"], w["w_gate"]], axis=1))


def test_a_folded_program_gives_the_unfolded_results() -> None:
    w = weights()
    folded = fusec.compile(GATE_UP, device="cpu", params=w)
    assert "concat" not in " ".join(launch.kernel for launch in folded.plan.launches)
    plain = fusec.compile(GATE_UP, device="cpu")
    assert "concat" in " ".join(launch.kernel for launch in plain.plan.launches)
    (got,) = folded(x_input())
    (want,) = plain(x_input(), w["w_gate"], w["w_up"])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, expected(x_input(), w), rtol=1e-4, atol=1e-4)
    with pytest.raises(InputError, match="no input 'w_gate'"):
        folded.bind("w_gate", w["w_gate"])


def test_an_input_read_by_another_op_is_not_folded() -> None:
    module = load(SHARED)
    _, bound = fuse_and_fold(module, None, "default", "<t>", weights())
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert "nn.concat" in [op.name for op in fn.body.block.ops]
    assert set(bound) == {"w_gate", "w_up"}
    exe = fusec.compile(SHARED, device="cpu", params=weights())
    w = weights()
    (got,) = exe(x_input())
    np.testing.assert_allclose(got, expected(x_input(), w) + np.maximum(w["w_up"][:16], 0),
                               rtol=1e-4, atol=1e-4)


def test_nothing_bound_nothing_folded() -> None:
    module = load(GATE_UP)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    before = str(module)
    assert fold_bound_inputs(fn, {}) == {}
    assert str(module) == before


QKV_BIAS = """
func.func @qkv(%x: tensor<1x4x16xf32>, %wq: tensor<16x8xf32>, %wk: tensor<16x8xf32>, %bk: tensor<8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %bq = nn.constant {value = dense<[0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 3.0, 1.0]> : tensor<8xf32>} : tensor<8xf32>
  %q0 = nn.matmul %x, %wq : tensor<1x4x16xf32>, tensor<16x8xf32> -> tensor<1x4x8xf32>
  %q = nn.add %q0, %bq : tensor<1x4x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %k0 = nn.matmul %x, %wk : tensor<1x4x16xf32>, tensor<16x8xf32> -> tensor<1x4x8xf32>
  %k = nn.add %bk, %k0 : tensor<8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  func.return %q, %k : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}"""


def test_biased_projections_merge_with_a_constant_bias_folded() -> None:
    """Two biased projections of one input, weights bound and one bias an ``nn.constant``:
    default merges them (fuse-shared-input-matmul{bound-only}) and the concatenations of the
    weights and of the biases, the constant among them, are folded, so one GEMM runs and no
    concatenation (the returned slices are copied out); unbound, nothing merges. Both give the
    numpy results."""
    rng = np.random.default_rng(2)
    w = {n: rng.standard_normal(s).astype(np.float32)
         for n, s in (("wq", (16, 8)), ("wk", (16, 8)), ("bk", (8,)))}
    x = rng.standard_normal((1, 4, 16)).astype(np.float32)
    bq = np.array([0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 3.0, 1.0], np.float32)
    want = (x.astype(np.float64) @ w["wq"] + bq, x.astype(np.float64) @ w["wk"] + w["bk"])
    bound = fusec.compile(QKV_BIAS, device="cpu", params=w)
    kernels = " ".join(launch.kernel for launch in bound.plan.launches)
    assert kernels.count("gemm") == 1 and "concat" not in kernels, kernels
    for got, ref in zip(bound(x=x), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    plain = fusec.compile(QKV_BIAS, device="cpu")
    assert len(plain.plan.launches) == 2
    for got, ref in zip(plain(x=x, **w), want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


TOKEN_TYPES = """
func.func @embed(%ids: tensor<2x5xi32>, %words: tensor<10x4xf32>, %types: tensor<3x4xf32>) -> tensor<2x5x4xf32> {
  %zeros = nn.constant {value = dense<1> : tensor<2x5xi32>} : tensor<2x5xi32>
  %w = nn.gather %words, %ids : tensor<10x4xf32>, tensor<2x5xi32> -> tensor<2x5x4xf32>
  %t = nn.gather %types, %zeros : tensor<3x4xf32>, tensor<2x5xi32> -> tensor<2x5x4xf32>
  %y = nn.add %w, %t : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x5x4xf32>
  func.return %y : tensor<2x5x4xf32>
}"""


def test_a_gather_of_a_bound_table_at_constant_indices_is_folded() -> None:
    """The token-type embedding of one type (a bound table read at constant indices) is
    gathered once at compile time: one gather kernel runs (the words), not two, and the results
    are numpy's, as unbound."""
    rng = np.random.default_rng(3)
    w = {"words": rng.standard_normal((10, 4)).astype(np.float32),
         "types": rng.standard_normal((3, 4)).astype(np.float32)}
    ids = np.array([[0, 9, -1, -10, 4], [1, 2, 3, 5, 8]], np.int32)  # both ends of the range
    want = w["words"][ids] + w["types"][1]
    bound = fusec.compile(TOKEN_TYPES, device="cpu", params=w)
    plain = fusec.compile(TOKEN_TYPES, device="cpu")
    assert len(bound.plan.launches) < len(plain.plan.launches)
    np.testing.assert_array_equal(bound(ids=ids)[0], want)
    np.testing.assert_array_equal(plain(ids, w["words"], w["types"])[0], want)
    with pytest.raises(InputError, match="no input 'types'"):
        bound.bind("types", w["types"])
