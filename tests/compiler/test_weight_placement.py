"""Where the bound inputs folded into a weight lie in it (`fold_params.fold_bound`'s origins),
and in its buffer as stored (`weight_placement`, `ValueSpec.stored_axes`): each weight's
bytes a range of the buffer where transposes and concatenations put it so, checked against
the stored bytes (`ValueSpec.stored`); none through other ops or through layouts no axis
order gives (wider panels, interleaved halves)."""

# ruff: noqa: E501 - IR programs are written one op per line

from __future__ import annotations

import numpy as np
from xdsl.dialects import func

from fusec.codegen.plan import ValueSpec
from fusec.compiler.driver import fuse_and_fold_with_origins, load
from fusec.compiler.fold_params import Piece, fold_bound
from fusec.compiler.weight_placement import place, placements, ranges

# Linear-style weights [out, in] transposed, the q and k ones concatenated along the columns
# (as fuse-shared-input-matmul merges the projections), o transposed alone.
QK = """
func.func @qk(%x: tensor<4x32xf32>, %wq: tensor<64x32xf32>, %wk: tensor<16x32xf32>, %wo: tensor<8x32xf32>) -> (tensor<4x80xf32>, tensor<4x8xf32>) {
  %qt = nn.transpose %wq {perm = array<i64: 1, 0>} : tensor<64x32xf32> -> tensor<32x64xf32>
  %kt = nn.transpose %wk {perm = array<i64: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
  %w = nn.concat %qt, %kt {axis = 1 : i64} : (tensor<32x64xf32>, tensor<32x16xf32>) -> tensor<32x80xf32>
  %y = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x80xf32> -> tensor<4x80xf32>
  %ot = nn.transpose %wo {perm = array<i64: 1, 0>} : tensor<8x32xf32> -> tensor<32x8xf32>
  %z = nn.matmul %x, %ot : tensor<4x32xf32>, tensor<32x8xf32> -> tensor<4x8xf32>
  func.return %y, %z : tensor<4x80xf32>, tensor<4x8xf32>
}"""

# Rows of a constant and of two weights concatenated, then transposed; and a narrow of a
# weight (not a transpose or a concatenation: no origins).
CHAIN = """
func.func @chain(%x: tensor<4x8xf32>, %a: tensor<3x8xf32>, %b: tensor<5x8xf32>, %c: tensor<6x8xf32>) -> (tensor<4x10xf32>, tensor<4x2xf32>) {
  %k = nn.constant {value = dense<1.5> : tensor<2x8xf32>} : tensor<2x8xf32>
  %r = nn.concat %k, %a, %b {axis = 0 : i64} : (tensor<2x8xf32>, tensor<3x8xf32>, tensor<5x8xf32>) -> tensor<10x8xf32>
  %t = nn.transpose %r {perm = array<i64: 1, 0>} : tensor<10x8xf32> -> tensor<8x10xf32>
  %y = nn.matmul %x, %t : tensor<4x8xf32>, tensor<8x10xf32> -> tensor<4x10xf32>
  %n = nn.narrow %c {axis = 0 : i64, start = 1 : i64, length = 2 : i64} : tensor<6x8xf32> -> tensor<2x8xf32>
  %nt = nn.transpose %n {perm = array<i64: 1, 0>} : tensor<2x8xf32> -> tensor<8x2xf32>
  %z = nn.matmul %x, %nt : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  func.return %y, %z : tensor<4x10xf32>, tensor<4x2xf32>
}"""


def weights(shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


def folded(text: str, params: dict[str, np.ndarray]):
    module = load(text)
    _, result = fuse_and_fold_with_origins(module, None, "none", "<t>", params)
    assert result is not None
    return result


def spec(name: str, value: np.ndarray, panels: int | None = None,
         interleaved: str | None = None) -> ValueSpec:
    return ValueSpec(name, value.shape, value.dtype, 0, panels, interleaved)


def range_bytes(stored: np.ndarray, offset: int, nbytes: int) -> np.ndarray:
    return stored.reshape(-1).view(np.uint8)[offset:offset + nbytes]


def test_transposed_and_concatenated_weights_have_origins() -> None:
    params = weights({"wq": (64, 32), "wk": (16, 32), "wo": (8, 32)})
    result = folded(QK, params)
    assert set(result.params) == {"fusec_folded0", "fusec_folded1"}
    assert result.origins == {
        "fusec_folded0": (Piece("wq", (64, 32), (1, 0), (0, 0)),
                          Piece("wk", (16, 32), (1, 0), (0, 64))),
        "fusec_folded1": (Piece("wo", (8, 32), (1, 0), (0, 0)),),
    }


def test_a_weight_stored_transposed_is_a_range_of_its_buffer() -> None:
    """Stored ``[N, K]`` (panels of one column, as a ``wgmma`` product's bound B): q at byte
    0, k right after it, o at 0 of its own; their bytes are the weights'."""
    params = weights({"wq": (64, 32), "wk": (16, 32), "wo": (8, 32)})
    result = folded(QK, params)
    qk = spec("fusec_folded0", result.params["fusec_folded0"], panels=1)
    o = spec("fusec_folded1", result.params["fusec_folded1"], panels=1)
    assert qk.stored_axes == (1, 0)
    found = placements([qk, o], result.params, result.origins)
    (q,), (k,), (wo,) = found["wq"], found["wk"], found["wo"]
    assert (q.buffer, q.offset, q.nbytes) == ("fusec_folded0", 0, 64 * 32 * 4)
    assert (k.buffer, k.offset, k.nbytes) == ("fusec_folded0", 64 * 32 * 4, 16 * 32 * 4)
    assert (wo.buffer, wo.offset) == ("fusec_folded1", 0)
    assert q.contiguous and k.contiguous and wo.contiguous
    for placement, buffer in ((q, qk), (k, qk), (wo, o)):
        stored = buffer.stored(result.params[buffer.name])
        np.testing.assert_array_equal(
            range_bytes(stored, placement.offset, placement.nbytes),
            params[placement.source].reshape(-1).view(np.uint8))


def test_no_range_where_the_layout_is_no_axis_order() -> None:
    """As it is (``[K, N]``) the weights are strided; in panels wider than one column, or
    interleaved, they have no placement at all."""
    params = weights({"wq": (64, 32), "wk": (16, 32), "wo": (8, 32)})
    result = folded(QK, params)
    value = result.params["fusec_folded0"]
    pieces = result.origins["fusec_folded0"]
    as_is = spec("fusec_folded0", value)
    q = place(pieces[0], as_is)
    assert q is not None and q.strides == (1, 80) and not q.contiguous
    assert ranges(as_is, pieces) == []
    for layout in (spec("fusec_folded0", value, panels=16),
                   spec("fusec_folded0", value, panels=1, interleaved="first")):
        assert layout.stored_axes is None
        assert [place(p, layout) for p in pieces] == [None, None]
    whole = spec("fusec_folded0", value, panels=80)  # one panel of every column: as it is
    assert whole.stored_axes == (0, 1)


def test_a_chain_with_a_constant_and_a_narrow() -> None:
    """A concatenation of rows after a constant, transposed, then stored transposed: the
    weights are ranges again, after the constant's rows; the narrowed weight has no origins
    (its folded value is no transpose or concatenation of whole weights)."""
    params = weights({"a": (3, 8), "b": (5, 8), "c": (6, 8)})
    module = load(CHAIN)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    result = fold_bound(fn, params)
    (name,) = result.origins
    assert result.origins[name] == (Piece("a", (3, 8), (1, 0), (0, 2)),
                                    Piece("b", (5, 8), (1, 0), (0, 5)))
    value = result.params[name]
    buffer = spec(name, value, panels=1)
    found = {p.source: p for p in ranges(buffer, result.origins[name])}
    assert (found["a"].offset, found["b"].offset) == (2 * 8 * 4, 5 * 8 * 4)
    stored = buffer.stored(value)
    for source, placement in found.items():
        np.testing.assert_array_equal(range_bytes(stored, placement.offset, placement.nbytes),
                                      params[source].reshape(-1).view(np.uint8))
    np.testing.assert_array_equal(stored.reshape(-1)[:16], np.full(16, 1.5, np.float32))
    assert len(result.params) == 2 and "c" not in result.params  # the narrow, folded
