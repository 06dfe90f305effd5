"""How a ``fused.elementwise`` with index maps decomposes back into ``nn`` ops.

The result is built box by box (a box: a start and a size per result dimension). While a
concat's select (``arith.select`` on ``arith.cmpi slt (fused.index d), c``) is undecided in a
box, the box is cut at ``c`` along ``d`` and the two halves are joined by an ``nn.concat``.
In a box where every such select is decided, the body with each select replaced by its chosen
piece is an ordinary elementwise body (``scalar_ops.Decomposer``) over views of the inputs:
each input narrowed to what the box reads through its map (``nn.narrow``), its dimensions put
in the result's order (``nn.transpose``) and size-1 dimensions made where it broadcasts
(``nn.reshape``). Every read of a decided box is in bounds, so no clamp is needed.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue

from fusec.dialects import fused, nn
from fusec.dialects.common import element_of, shape_of
from fusec.dialects.index_maps import IndexMap
from fusec.dialects.scalar_ops import Decomposer, ScalarOpError

Box = tuple[tuple[int, ...], tuple[int, ...]]
"""Starts and sizes, one per result dimension."""

Cut = tuple[arith.CmpiOp, int, int]
"""A concat's piece test ``position(dim) < bound``: the compare, ``dim`` and ``bound``."""


def piece_tests(block: Block) -> list[Cut]:
    """The ``cmpi slt (fused.index d), c`` of the body, in order."""
    cuts: list[Cut] = []
    for op in block.ops:
        if not isinstance(op, arith.CmpiOp) or op.predicate.value.data != 2:  # slt
            continue
        lhs, rhs = op.lhs.owner, op.rhs.owner
        if isinstance(lhs, fused.IndexOp) and isinstance(rhs, arith.ConstantOp):
            bound = rhs.value
            assert isinstance(bound, IntegerAttr)
            cuts.append((op, lhs.dim.value.data, bound.value.data))
    return cuts


def decided(cut: Cut, box: Box) -> bool | None:
    """The test's value in every point of ``box``, or None when it differs."""
    _, dim, bound = cut
    start, size = box[0][dim], box[1][dim]
    if bound <= start:
        return False
    if bound >= start + size:
        return True
    return None


class BoxDecomposer:
    def __init__(self, op: fused.ElementwiseOp):
        self.op = op
        self.maps = op.input_maps()
        self.cuts = piece_tests(op.body.block)
        self.new_ops: list[Operation] = []

    def emit(self, new_op: Operation) -> SSAValue:
        self.new_ops.append(new_op)
        return new_op.results[0]

    def values(self, box: Box) -> list[SSAValue]:
        """The results over ``box``, each of the box's shape."""
        for cut in self.cuts:
            if decided(cut, box) is None:
                return self.split(box, cut[1], cut[2])
        return self.leaf(box)

    def split(self, box: Box, dim: int, bound: int) -> list[SSAValue]:
        starts, sizes = box
        low = (starts, (*sizes[:dim], bound - starts[dim], *sizes[dim + 1 :]))
        high = (
            (*starts[:dim], bound, *starts[dim + 1 :]),
            (*sizes[:dim], starts[dim] + sizes[dim] - bound, *sizes[dim + 1 :]),
        )
        joined: list[SSAValue] = []
        for a, b in zip(self.values(low), self.values(high), strict=True):
            t = TensorType(element_of(a), list(sizes))
            joined.append(self.emit(nn.ConcatOp([a, b], dim, t)))
        return joined

    def leaf(self, box: Box) -> list[SSAValue]:
        """The body with the decided selects resolved, over views of the inputs."""
        region = self.op.body.clone()
        block = region.block
        originals = piece_tests(self.op.body.block)
        for (cmp, _, _), cut in zip(piece_tests(block), originals, strict=True):
            value = decided(cut, box)
            assert value is not None
            for use in list(cmp.result.uses):
                select = use.operation
                if not isinstance(select, arith.SelectOp) or use.index != 0:
                    raise ScalarOpError(
                        "a fused.index compare must only choose between pieces", select
                    )
                chosen = select.lhs if value else select.rhs
                select.result.replace_all_uses_with(chosen)
        prune(block)
        for body_op in block.ops:
            if isinstance(body_op, fused.IndexOp):
                raise ScalarOpError(
                    "'fused.index' in a fused body has no nn form but a concat's select", body_op
                )
        inputs = [
            self.view(v, m, box) if arg.uses else v
            for v, m, arg in zip(self.op.inputs, self.maps, block.args, strict=True)
        ]
        decomposer = Decomposer(block, inputs)
        decomposer.new_ops = self.new_ops
        target = box[1]
        return [decomposer.broadcast(v, target) for v in decomposer.run_values()]

    def view(self, value: SSAValue, m: IndexMap, box: Box) -> SSAValue:
        """What ``box`` reads of ``value`` through ``m``, shaped to broadcast to the box."""
        starts, sizes = box
        shape = shape_of(value)
        current = value
        for j, (d, c) in enumerate(m):
            low, length = (c, 1) if d is None else (starts[d] + c, sizes[d])
            if low < 0 or low + length > shape[j]:
                raise ScalarOpError(
                    f"an index map reads [{low}, {low + length}) of dimension {j} of a "
                    f"{list(shape)} input outside a concat's select",
                    self.op,
                )
            if (low, length) != (0, shape[j]):
                current = self.emit(nn.NarrowOp(current, j, low, length))
        used = [j for j, (d, _) in enumerate(m) if d is not None]
        order = sorted(used, key=lambda j: m[j][0])  # type: ignore[arg-type, return-value]
        if order != used:
            perm = [*order, *(j for j in range(len(m)) if j not in used)]
            now = shape_of(current)
            t = TensorType(element_of(current), [now[j] for j in perm])
            current = self.emit(nn.TransposeOp(current, perm, t))
        target = [1] * len(sizes)
        for j in used:
            target[m[j][0]] = sizes[m[j][0]]  # type: ignore[index]
        now = shape_of(current)
        lead = len(target) - len(now)
        fits = lead >= 0 and list(now) == target[lead:] and all(t == 1 for t in target[:lead])
        if not fits:
            current = self.emit(nn.ReshapeOp(current, TensorType(element_of(current), target)))
        return current


def prune(block: Block) -> None:
    """Erases the body ops whose results nothing uses (the yield stays)."""
    for body_op in reversed(list(block.ops)):
        if body_op is block.last_op:
            continue
        if all(not r.uses for r in body_op.results):
            body_op.detach()
            body_op.erase()


def decompose_mapped(op: fused.ElementwiseOp) -> tuple[list[Operation], list[SSAValue]]:
    """New detached ``nn`` ops computing ``op``, and the values replacing its results."""
    shape = shape_of(op.results[0])
    decomposer = BoxDecomposer(op)
    values = decomposer.values(((0,) * len(shape), tuple(shape)))
    return decomposer.new_ops, values


__all__: Sequence[str] = ("decompose_mapped",)
