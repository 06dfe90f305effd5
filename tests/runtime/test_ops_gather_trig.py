"""``nn.gather``, ``nn.erf``, ``nn.sin`` and ``nn.cos`` on the OpenCL device against the numpy
reference: alone (pipeline ``none``) and fused into an elementwise region (``default``).

Gather is exact; it is checked with in-range and negative indices, on the first, a middle and the
last axis, and for f32, i32 and i1 data (out-of-range ones are errors: `test_index_errors`).
The transcendental ops get the tolerances of ``test_ops_nn`` (OpenCL built-ins are a few ulp
from the float64 reference).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i32
from xdsl.ir import Attribute, Block, SSAValue

from fusec.compiler.check import compare, run_with_reference
from fusec.dialects.nn import GatherOp
from fusec.errors import IndexOutOfRangeError, InputError
from fusec.reference.ops import run_gather

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
TRANSCENDENTAL = (1e-6, 1e-5)


def probe(shape: list[int], elem: Attribute) -> SSAValue:
    return Block(arg_types=[TensorType(elem, shape)]).args[0]


def check(source: str, tol: tuple[float, float], pipeline: str = "none",
          args: list[np.ndarray] | None = None) -> None:
    outputs, expected = run_with_reference(source, pipeline=pipeline, device=DEVICE, args=args)
    atol, rtol = tol
    for result in compare(outputs, expected, atol, rtol):
        assert result.ok, result.describe(atol, rtol)
    for out, ref in zip(outputs, expected, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype


@pytest.mark.parametrize("op", ["erf", "sin", "cos"])
@pytest.mark.parametrize("pipeline", ["none", "default"])
def test_unary(op: str, pipeline: str) -> None:
    t = "3x5x7xf32"
    source = f"""
func.func @f(%x: tensor<{t}>) -> tensor<{t}> {{
  %y = nn.{op} %x : tensor<{t}> -> tensor<{t}>
  %z = nn.mul %y, %x : tensor<{t}>, tensor<{t}> -> tensor<{t}>
  func.return %z : tensor<{t}>
}}"""
    x = np.linspace(-7.0, 7.0, 105, dtype=np.float32).reshape(3, 5, 7)
    check(source, TRANSCENDENTAL, pipeline, [x])


# (data type, indices type, axis, result type)
GATHERS = [
    ("50x16xf32", "2x7xi32", 0, "2x7x16xf32"),
    ("4x9x5xf32", "3xi32", 1, "4x3x5xf32"),
    ("4x9x5xi32", "2x2xi32", 2, "4x9x2x2xi32"),
    ("6x3xi1", "i32", 0, "3xi1"),
]


@pytest.mark.parametrize("types", GATHERS, ids=lambda g: f"{g[0]}_axis{g[2]}")
def test_gather(types: tuple[str, str, int, str]) -> None:
    data, idx, axis, out = types
    source = f"""
func.func @f(%d: tensor<{data}>, %i: tensor<{idx}>) -> tensor<{out}> {{
  %y = nn.gather %d, %i {{axis = {axis} : i64}} : tensor<{data}>, tensor<{idx}> -> tensor<{out}>
  func.return %y : tensor<{out}>
}}"""
    rng = np.random.default_rng(0)
    *dims, elem = data.split("x")
    shape = [int(d) for d in dims]
    if elem == "f32":
        d = rng.standard_normal(shape).astype(np.float32)
    elif elem == "i32":
        d = rng.integers(-100, 100, shape).astype(np.int32)
    else:
        d = rng.integers(0, 2, shape).astype(bool)
    dim = shape[axis]
    idx_shape = [int(d) for d in idx.split("x")[:-1]]
    # in range: both ends, from either side
    pool = np.array([0, dim - 1, -1, -dim, 1], np.int32)
    i = np.resize(pool, max(1, int(np.prod(idx_shape)))).reshape(idx_shape).astype(np.int32)
    check(source, (0.0, 0.0), args=[d, i])


def test_gather_reference_wraps_negative_indices() -> None:
    data = np.arange(5, dtype=np.float32)
    op = GatherOp(probe([5], f32), probe([4], i32), 0, TensorType(f32, [4]))
    out = run_gather(op, [data, np.array([-1, 4, -5, 2], np.int32)])
    np.testing.assert_array_equal(out, [4.0, 4.0, 0.0, 2.0])


@pytest.mark.parametrize("bad", [5, -6, 7, -9])
def test_gather_reference_raises_on_the_first_index_out_of_range(bad: int) -> None:
    """The reference's own semantics: an index outside [-5, 5) is an InputError naming the
    first one (row-major), its position and value; the argument by its name."""
    data = np.arange(5, dtype=np.float32)
    indices = np.array([[-1, 2], [bad, 9]], np.int32)
    ids = probe([2, 2], i32)
    ids.name_hint = "ids"
    op = GatherOp(probe([5], f32), ids, 0, TensorType(f32, [2, 2]))
    with pytest.raises(IndexOutOfRangeError) as caught:
        run_gather(op, [data, indices])
    assert isinstance(caught.value, InputError)
    assert str(caught.value) == (f"index {bad} at position [1, 0] of input 'ids' is out of "
                                 "range for axis 0 of size 5 (valid: -5 to 4)")
