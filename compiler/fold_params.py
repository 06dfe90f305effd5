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

`fold_bound` also says where the elements of each bound input that was folded away landed in
the folded values made of it by data movement alone, transposes and concatenations (chains of
them; an operand that is a constant adds no piece): its `origins`, one `Piece` per source in a
folded value, for a caller that would hold a weight once (`fusec.compiler.torch_weights`, with
the buffer's stored layout: `fusec.compiler.weight_placement`). A folded value that any other
op made (a narrow, a reshape, a gather, a product) has none.

    %wq_t = nn.transpose %wq {perm = array<i64: 1, 0>} : tensor<64x32xf32> -> tensor<32x64xf32>
    %wk_t = nn.transpose %wk {perm = array<i64: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
    %w = nn.concat %wq_t, %wk_t {axis = 1 : i64} : ... -> tensor<32x80xf32>
  origins: fusec_folded0 = (Piece(wq, (64, 32), perm (1, 0), offset (0, 0)),
                            Piece(wk, (16, 32), perm (1, 0), offset (0, 64)))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Operation, SSAValue

from fusec.codegen.program import argument_name
from fusec.dialects import nn
from fusec.dialects.common import int_prop, ints_prop
from fusec.dialects.bound_inputs import MOVES_DATA
from fusec.reference.executor import declared, run_op
from fusec.reference.ops import from_host, to_host

FOLDED: tuple[type[Operation], ...] = (*MOVES_DATA, nn.MulOp)
"""Ops that only move elements (`known_at_compile_time` counts their results on bound values as
bound, so the fusions that ask it are those folded here), and the product (correctly rounded in
IEEE arithmetic, numpy's as the device's; `canonicalize-nn` scales a gathered table): their
folded result is exact."""

FOLDED_PREFIX = "fusec_folded"


@dataclass(frozen=True)
class Piece:
    """Where the elements of one bound input (`source`, of `shape`) lie in a folded value:
    element ``i`` of the source is element ``j`` of the value with ``j[a] = i[perm[a]] +
    offset[a]`` along each axis ``a`` of the value."""

    source: str
    shape: tuple[int, ...]
    perm: tuple[int, ...]
    """Axis ``a`` of the value runs along axis ``perm[a]`` of the source."""
    offset: tuple[int, ...]
    """Where the source's element 0 lies in the value."""

    @staticmethod
    def whole(source: str, shape: Sequence[int]) -> Piece:
        """A bound input as it is: the whole of its own value."""
        return Piece(source, tuple(shape), tuple(range(len(shape))), (0,) * len(shape))

    def transposed(self, perm: Sequence[int]) -> Piece:
        """The piece in a value permuted by `perm` (result axis ``a`` is axis ``perm[a]``)."""
        return Piece(self.source, self.shape, tuple(self.perm[p] for p in perm),
                     tuple(self.offset[p] for p in perm))

    def shifted(self, axis: int, by: int) -> Piece:
        """The piece moved `by` elements along `axis` (an operand after others in a concat)."""
        offset = list(self.offset)
        offset[axis] += by
        return Piece(self.source, self.shape, self.perm, tuple(offset))


Origins = dict[str, tuple[Piece, ...]]
"""Folded bound input -> the bound inputs folded into it, where each lies (see `Piece`); only
for values made by data movement alone (`origin`)."""


@dataclass
class Folded:
    """`fold_bound`'s result: the bound inputs of the new signature and where the sources of
    the folded ones lie in them."""

    params: dict[str, np.ndarray]
    origins: Origins = field(default_factory=dict)


def fold_bound_inputs(fn: func.FuncOp, params: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`fold_bound`'s bound inputs of the new signature."""
    return fold_bound(fn, params).params


def fold_bound(fn: func.FuncOp, params: Mapping[str, np.ndarray]) -> Folded:
    """Folds `fn`'s ops of `FOLDED` whose operands are all bound (in `params`, by argument
    name) or folded, in place (see the module docstring); returns the bound inputs of the new
    signature (`params` less the folded ones' sources, plus one per folded value still read)
    and the origins of the folded ones.

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
        return Folded(dict(params))
    known: dict[SSAValue, np.ndarray] = {
        arg: from_host(np.asarray(params[names[arg]]), arg.type) for arg in sources
    }
    constants = [producer for op in folded for v in op.operands
                 if isinstance(producer := v.owner, nn.ConstantOp)]
    for const in constants:
        (known[const.result],) = run_op(const, [], None)
    pieces: dict[SSAValue, tuple[Piece, ...] | None] = {
        arg: (Piece.whole(names[arg], arg.type.get_shape()),)  # type: ignore[attr-defined]
        for arg in sources}
    for const in constants:
        pieces[const.result] = ()
    for op in folded:
        (result,) = op.results
        (value,) = run_op(op, [known[v] for v in op.operands], None)
        known[result] = declared(op, result, value)
        pieces[result] = origin(op, [pieces[v] for v in op.operands])
    bound = {name: value for name, value in params.items()
             if name not in {names[arg] for arg in sources}}
    origins: Origins = {}
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
        if pieces[result]:
            origins[name] = pieces[result]  # type: ignore[assignment]
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
    return Folded(bound, origins)


def origin(op: Operation, operands: Sequence[tuple[Piece, ...] | None]
           ) -> tuple[Piece, ...] | None:
    """Where the bound inputs in `op`'s operands (`operands`: their pieces, None where not
    known) lie in its result: for a transpose and a concatenation; None for any other op."""
    if any(p is None for p in operands):
        return None
    if isinstance(op, nn.TransposeOp):
        (inner,) = operands
        perm = ints_prop(op, "perm")
        return tuple(p.transposed(perm) for p in inner)  # type: ignore[union-attr]
    if isinstance(op, nn.ConcatOp):
        rank = len(op.result.type.get_shape())  # type: ignore[attr-defined]
        axis = int_prop(op, "axis") % rank
        placed: list[Piece] = []
        start = 0
        for value, inner in zip(op.inputs, operands, strict=True):
            placed.extend(p.shifted(axis, start) for p in inner)  # type: ignore[union-attr]
            start += value.type.get_shape()[axis]  # type: ignore[attr-defined]
        return tuple(placed)
    return None


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
