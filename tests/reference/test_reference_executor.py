"""The reference executor: argument checks, function lookup, calls, errors, and the inputs
that ``random_inputs`` makes."""

from __future__ import annotations

import numpy as np
import pytest
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.runtime.errors import FusecRuntimeError, InputError
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.reference.ops import UnsupportedOpError
from xdsl.dialects.builtin import ModuleOp


def parse(text: str) -> ModuleOp:
    return parse_module(make_context(), Source(text, "exec.mlir"))


TWO_FUNCTIONS = """
func.func @double(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.add %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
func.func @main(%x: tensor<2x3xf32>, %n: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %d = func.call @double(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = nn.exp %d : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %e, %x : tensor<2x3xf32>, tensor<2x3xf32>
}
"""

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
N = np.zeros(3, np.int32)


def test_named_function_with_a_call_and_two_results():
    module = parse(TWO_FUNCTIONS)
    e, x = run_function(module, [X, N], "main")
    np.testing.assert_allclose(e, np.exp(2 * X.astype(np.float64)), rtol=1e-6)
    assert e.dtype == np.float32
    x[0, 0] = 42  # results are copies, not the caller's arrays
    assert X[0, 0] == 0


def test_function_lookup_errors():
    module = parse(TWO_FUNCTIONS)
    with pytest.raises(InputError, match="exactly one func.func.*@double, @main"):
        run_function(module, [X])
    with pytest.raises(InputError, match="no function @nope"):
        run_function(module, [X], "nope")
    assert find_function(module, "double").sym_name.data == "double"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([X], r"@main takes 2 arguments, got 1"),
        ([X.T, N], r"argument #0 \(%x\) has shape \[3, 2\], expected \[2, 3\]"),
        ([X.astype(np.float64), N], r"argument #0 \(%x\) has dtype float64, expected float32"),
        ([X, N.astype(np.int64)], r"argument #1 \(%n\) has dtype int64, expected int32"),
    ],
)
def test_argument_errors(args, message: str):
    with pytest.raises(InputError, match=message):
        run_function(parse(TWO_FUNCTIONS), args, "main")


def test_unsupported_op_names_the_op_and_its_location():
    module = parse(
        "func.func @f() -> tensor<2xf32> {\n"
        "  %c = arith.constant dense<1.0> : tensor<2xf32>\n"
        "  func.return %c : tensor<2xf32>\n"
        "}\n"
    )
    with pytest.raises(UnsupportedOpError, match=r"exec\.mlir:2:3: .*'arith\.constant'") as info:
        run_function(module, [])
    assert isinstance(info.value, FusecRuntimeError)


MIXED = """
func.func @f(%x: tensor<3x4xf32>, %h: tensor<2x5xf16>, %b: tensor<7xi1>, %n: tensor<4x6xi32>,
             %attn_mask: tensor<6x5xi1>, %mask2: tensor<40x3xf32>, %key_mask: tensor<3x2xi32>)
    -> tensor<3x4xf32> {
  func.return %x : tensor<3x4xf32>
}
"""


def test_random_inputs_types_and_determinism():
    fn = find_function(parse(MIXED))
    x, h, b, n, mask, mask2, mask3 = random_inputs(fn, seed=7)
    assert (x.dtype, x.shape) == (np.float32, (3, 4))
    assert (h.dtype, h.shape) == (np.float16, (2, 5))
    assert b.dtype == np.bool_ and n.dtype == np.int32
    assert -4 <= n.min() and n.max() <= 4
    for m, dtype in ((mask, np.bool_), (mask2, np.float32), (mask3, np.int32)):
        assert m.dtype == dtype
        assert set(np.unique(m.astype(np.float64))) <= {0.0, 1.0}
        assert (m != 0).any(axis=-1).all(), "every mask row keeps a key"
    assert (mask2 == 0).any(), "masks are not all ones"
    again = random_inputs(fn, seed=7)
    for a, b2 in zip(again, random_inputs(fn, seed=7), strict=True):
        np.testing.assert_array_equal(a, b2)
    other = random_inputs(fn, seed=8)
    assert not np.array_equal(other[0], x)
    assert abs(float(random_inputs(fn, 0)[5].mean()) - 0.5) < 0.3


def test_random_inputs_run():
    module = parse(TWO_FUNCTIONS)
    args = random_inputs(find_function(module, "main"), 0)
    e, x = run_function(module, args, "main")
    np.testing.assert_array_equal(x, args[0])
