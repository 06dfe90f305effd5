"""The verifier after each pass checks only what changed, yet catches what a pass broke.

A test pass breaks one op in each way an op can change without being replaced (an operand
swapped, a property set, an op moved; a value's type cannot change in place): the pipeline must report that op
at its location, as a full verification would. And an unchanged module costs no op checks
(apart from functions and terminators).
"""

# ruff: noqa: E501 - IR text is written one op per line

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, Source, parse_module
from fusec.compiler.incremental_verify import IncrementalVerifier
from fusec.compiler.pipeline import PipelineHooks, run_passes

TEXT = """\
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %v: tensor<3xf32>) -> tensor<4x4xf32> {
  %s = nn.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %n = nn.narrow %s {axis = 1 : i64, start = 0 : i64, length = 4 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  %r = nn.relu %n : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
"""


def ops_named(module: ModuleOp, name: str) -> Operation:
    return next(op for op in module.walk() if op.name == name)


@dataclass(frozen=True)
class Breaker(ModulePass):
    name = "test-break"
    change: Callable[[ModuleOp], None] = lambda m: None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.change(op)


def swap_operand(m: ModuleOp) -> None:
    add = ops_named(m, "nn.add")
    fn = add.parent_op()
    assert fn is not None
    add.operands = (add.operands[0], fn.regions[0].block.args[2])  # tensor<3xf32>


def bad_property(m: ModuleOp) -> None:
    ops_named(m, "nn.narrow").properties["start"] = IntegerAttr(6, i64)  # 6 + 4 > 8


def moved_terminator(m: ModuleOp) -> None:
    ret = ops_named(m, "func.return")
    relu = ops_named(m, "nn.relu")
    ret.detach()
    relu.parent_block().insert_op_before(ret, relu)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (swap_operand, "m.mlir:2:3: error: 'nn.add'"),
        (bad_property, "m.mlir:3:3: error: 'nn.narrow'"),
        (moved_terminator, "m.mlir:5:3: error: "),
    ],
)
def test_a_change_is_verified(change: Callable[[ModuleOp], None], where: str) -> None:
    ctx = make_context()
    verifier = IncrementalVerifier()
    module = parse_module(ctx, Source(TEXT, "m.mlir"), verifier.verify)
    hooks = PipelineHooks(verifier=verifier)
    with pytest.raises(FusecError) as e:
        run_passes(ctx, module, [Breaker(), Breaker(change)], "m.mlir", hooks=hooks)
    assert str(e.value).startswith(where), str(e.value)
    assert str(e.value).endswith("(after pass 'test-break')")


def erased_terminator(m: ModuleOp) -> None:
    ret = ops_named(m, "func.return")
    ret.parent_block().erase_op(ret)  # type: ignore[union-attr]  # nn.relu now ends the body


TWO_FUNCTIONS = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @g(%y: tensor<4xf32>) -> tensor<4xf32> {
  %r = nn.relu %y : tensor<4xf32> -> tensor<4xf32>
  %unused = nn.neg %y : tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def use_across_functions(m: ModuleOp) -> None:
    f = next(op for op in m.walk() if op.name == "func.func")
    relu = ops_named(m, "nn.relu")
    relu.operands = (f.regions[0].block.args[0],)  # @f's argument, used in @g


def erase_unused(m: ModuleOp) -> None:
    neg = ops_named(m, "nn.neg")
    neg.parent_block().erase_op(neg)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "change", "where"),
    [
        # an op that ends its block without being a terminator, though its record is the same
        (TEXT, erased_terminator, "m.mlir:4:3: error: 'nn.relu' terminates block"),
        # a changed op inside a function makes the function (IsolatedFromAbove) verified again
        (TWO_FUNCTIONS, use_across_functions, "m.mlir:4:1: error: 'func.func' Operation using"),
    ],
)
def test_a_change_inside_is_verified(
    text: str, change: Callable[[ModuleOp], None], where: str
) -> None:
    ctx = make_context()
    verifier = IncrementalVerifier()
    module = parse_module(ctx, Source(text, "m.mlir"), verifier.verify)
    hooks = PipelineHooks(verifier=verifier)
    with pytest.raises(FusecError) as e:
        run_passes(ctx, module, [Breaker(), Breaker(change)], "m.mlir", hooks=hooks)
    assert str(e.value).startswith(where), str(e.value)


def test_unchanged_ops_are_not_verified_again() -> None:
    ctx = make_context()
    verifier = IncrementalVerifier()
    module = parse_module(ctx, Source(TEXT, "m.mlir"), verifier.verify)
    assert verifier.checked == 6  # module, func, add, narrow, relu, return
    verifier.verify(module, "m.mlir")
    assert verifier.checked == 1  # the return: terminators every time


def test_functions_are_verified_again_after_a_change_inside() -> None:
    ctx = make_context()
    verifier = IncrementalVerifier()
    module = parse_module(ctx, Source(TWO_FUNCTIONS, "m.mlir"), verifier.verify)
    assert verifier.checked == 7  # module, @f, its return, @g, relu, neg, its return
    erase_unused(module)  # no op left changes
    verifier.verify(module, "m.mlir")
    assert verifier.checked == 4  # the two returns, @g (one op fewer) and the module, not @f
