"""Folds what only bound inputs feed: data movement on weights is done once, at compile time.

Fusions can put work on weights into the program: ``fuse-shared-input-matmul`` concatenates
the weights of matmuls that share their input (Llama's gate and up projections) with an
``nn.concat`` that, left in place, copies megabytes on every call. Where every operand of such
an op is bound (``fusec.compile(params=...)``, an ONNX model's weights) or was folded itself,
the op runs here, on the numpy reference, and its result becomes a new bound input of the
function (an operand that is an `nn.constant` counts as bound, and goes once nothing reads it);
bound inputs that nothing reads any more leave the signature (and the weights to bind). Only ops
that move data, and products, are folded (`FOLDED`), so the folded values are the bits the
device would have made.

    %w = nn.concat %w_gate, %w_up {axis = 1 : i64} : ... -> tensor<768x4096xf32>
    %m = nn.matmul %x, %w : ...
  with %w_gate and %w_up bound becomes
    %m = nn.matmul %x, %fusec_folded0 : ...      (%fusec_folded0 bound to the concatenation)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Operation, SSAValue

from fusec.codegen.program import argument_name
from fusec.dialects import nn
from fusec.dialects.bound_inputs import MOVES_DATA
from fusec.reference.executor import declared, run_op
from fusec.reference.ops import from_host, to_host

FOLDED: tuple[type[Operation], ...] = (*MOVES_DATA, nn.MulOp)
"""Ops that only move elements (`known_at_compile_time` counts their results on bound values as
bound, so the fusions that ask it are those folded here), and the product (correctly rounded in
IEEE arithmetic, numpy's as the device's; `canonicalize-nn` scales a gathered table): their
folded result is exact."""

FOLDED_PREFIX = "fusec_folded"


def fold_bound_inputs(fn: func.FuncOp, params: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Folds `fn`'s ops of `FOLDED` whose operands are all bound (in `params`, by argument
    name) or folded, in place (see the module docstring); returns the bound inputs of the new
    signature: `params` less the folded ones' sources, plus one per folded value still read.

    A bound input is folded away only if nothing else reads it, so that binding it again
    cannot leave a stale copy behind (the name is gone: `bind` says so), and only if it is
    named (removing it renumbers no ``arg<i>`` after it)."""
    block = fn.body.block
    names = {arg: argument_name(arg, i) for i, arg in enumerate(block.args)}
    last_unnamed = max((a.index for a in block.args if not a.name_hint), default=-1)
    excluded: set[SSAValue] = {arg for arg in block.args if arg.index <= last_unnamed}
    while True:
        folded = _foldable(fn, {a for a, n in names.items() if n in params} - excluded)
        sources = {v for op in folded for v in op.operands if v in names}
        shared = {arg for arg in sources
                  if any(use.operation not in folded for use in arg.uses)}
        if shared <= excluded:
            break
        excluded |= shared
    if not folded:
        return dict(params)
    known: dict[SSAValue, np.ndarray] = {
        arg: from_host(np.asarray(params[names[arg]]), arg.type) for arg in sources
    }
    constants = [producer for op in folded for v in op.operands
                 if isinstance(producer := v.owner, nn.ConstantOp)]
    for const in constants:
        (known[const.result],) = run_op(const, [], None)
    for op in folded:
        (result,) = op.results
        (value,) = run_op(op, [known[v] for v in op.operands], None)
        known[result] = declared(op, result, value)
    bound = {name: value for name, value in params.items()
             if name not in {names[arg] for arg in sources}}
    taken = set(names.values())
    for op in folded:
        (result,) = op.results
        if all(use.operation in folded for use in result.uses):
            continue
        name = _fresh(taken)
        arg = block.insert_arg(result.type, len(block.args))
        arg.name_hint = name
        result.replace_all_uses_with(arg)
        bound[name] = to_host(known[result], result.type)
    for op in reversed(folded):
        op.detach()
        op.erase()
    for const in dict.fromkeys(constants):
        if not const.result.uses:
            const.detach()
            const.erase()
    for arg in sorted(sources, key=lambda a: a.index, reverse=True):
        block.erase_arg(arg)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args],
                                               fn.function_type.outputs.data)
    return bound


def _foldable(fn: func.FuncOp, bound: set[SSAValue]) -> list[Operation]:
    """The ops of `FOLDED` that only `bound` values and constants feed, through other such
    ops, in order (a concatenation of biases made constants by the importer is folded as one
    of weights is)."""
    known = set(bound)
    folded: list[Operation] = []
    for op in fn.body.block.ops:
        if isinstance(op, nn.ConstantOp):
            known.add(op.result)
            continue
        if isinstance(op, FOLDED) and op.operands and all(v in known for v in op.operands):
            known.update(op.results)
            folded.append(op)
    return folded


def _fresh(taken: set[str]) -> str:
    index = 0
    while f"{FOLDED_PREFIX}{index}" in taken:
        index += 1
    name = f"{FOLDED_PREFIX}{index}"
    taken.add(name)
    return name
