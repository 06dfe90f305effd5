"""Bound inputs: function arguments whose values are fixed when the program is compiled.

``fusec.compile(..., params=...)`` (and ``fusec-run`` with an imported model's weights) binds
arguments to arrays once; before the fusion pipeline runs it marks each bound argument with the
unit attribute ``fusec.bound``::

    func.func @main(%x: tensor<8x32xf32>, %wq: tensor<32x32xf32> {fusec.bound}, ...)

A pass whose rewrite pays only when work on a value is done once (concatenating weights, which
``compiler/fold_params.py`` then folds) asks `known_at_compile_time`: an ``nn.constant``, a
bound argument, or the result of an op that only moves data (`MOVES_DATA`, the ops
``fold_params`` folds) on such values: PyTorch's ``nn.Linear`` weights reach the IR as
``nn.transpose`` of a bound ``[out, in]`` argument. The mark changes no semantics: the argument
is still passed at every call.
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from fusec.dialects import nn

BOUND_INPUT = "fusec.bound"
"""The argument attribute marking an argument bound at compile time."""


def mark_bound(fn: func.FuncOp, names: Collection[str]) -> None:
    """Marks the arguments of ``fn`` named (``name_hint``) in ``names`` as bound (no change
    where none is)."""
    args = fn.body.block.args
    if not any(arg.name_hint in names for arg in args):
        return
    attrs = ([dict(a.data) for a in fn.arg_attrs.data] if fn.arg_attrs is not None
             else [{} for _ in args])
    for arg, entry in zip(args, attrs, strict=True):
        if arg.name_hint in names:
            entry[BOUND_INPUT] = UnitAttr()
    fn.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in attrs])


MOVES_DATA: tuple[type[Operation], ...] = (
    nn.ConcatOp, nn.TransposeOp, nn.NarrowOp, nn.ReshapeOp, nn.GatherOp,
)
"""Ops that only move elements: on values known at compile time, their result is known too
(and ``compiler/fold_params.py`` computes it once, exactly)."""


def known_at_compile_time(value: SSAValue) -> bool:
    """``value`` is an ``nn.constant``, an argument of a function that marks it bound, or the
    result of a `MOVES_DATA` op whose operands all are."""
    if not isinstance(value, BlockArgument):
        owner = value.owner
        if isinstance(owner, MOVES_DATA):
            return all(known_at_compile_time(v) for v in owner.operands)
        return isinstance(owner, nn.ConstantOp)
    fn = value.block.parent_op()
    if not isinstance(fn, func.FuncOp) or fn.arg_attrs is None:
        return False
    return BOUND_INPUT in fn.arg_attrs.data[value.index].data
