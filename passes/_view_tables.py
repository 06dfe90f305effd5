"""Chains of data movement read by their values: which element of the source each element of
the result is, as a table of flat indices computed by running the chain on ``arange``.

A chain of views (``nn.reshape``, ``nn.transpose``, ``nn.narrow``, ``nn.gather`` with constant
indices, ``nn.where`` whose condition is a constant all true: a broadcast) from a ``source`` to a
``value`` computes ``value = source.flat[table]``. Two chains spelled differently (a key/value
head repeat written as Unsqueeze/Expand/Reshape, as a Gather of ``[0, 0, 1, 1]`` or as Tile)
have the same table; `strided_view` finds, for a table that is a strided box of the source (any
axis order, any offsets, positive strides that divide each other: a step of 2 too), the
canonical chain that reads it: the source reshaped, narrowed, transposed and reshaped to the
result (`ViewChain`), checked by running it on ``arange`` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from fusec.dialects import nn
from fusec.dialects.common import int_prop, ints_prop
from fusec.passes._util import producer, shape_of

MAX_TABLE = 1 << 20
"""Elements of the largest source whose table is computed (the chains this reads are a layer's
key and value projections; a larger one is left as written)."""


def constant_data(value: SSAValue) -> np.ndarray | None:
    """The elements of an ``nn.constant``, else None."""
    owner = producer(value)
    if not isinstance(owner, nn.ConstantOp):
        return None
    attr = owner.value  # type: ignore[attr-defined]
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        return None
    data = np.array(attr.get_values())
    shape = shape_of(value)
    if attr.is_splat():
        return np.broadcast_to(data.reshape(-1)[:1].reshape(()), shape)
    return data.reshape(shape)


def view_input(op: Operation) -> SSAValue | None:
    """The one tensor ``op`` moves data of, when it is a view this module reads."""
    if isinstance(op, nn.ReshapeOp | nn.TransposeOp | nn.NarrowOp):
        return op.operands[0]
    if isinstance(op, nn.GatherOp):
        indices = constant_data(op.indices)
        return op.data if indices is not None and indices.dtype.kind in "iu" else None
    if isinstance(op, nn.WhereOp):
        cond = op.cond.type
        bools = isinstance(cond, TensorType) and cond.element_type == IntegerType(1)
        data = constant_data(op.cond) if bools else None
        if data is not None and data.size and bool(np.all(data)):
            return op.lhs
    return None


def apply_view(op: Operation, table: np.ndarray) -> np.ndarray:
    """``op`` run on ``table`` (its input's table)."""
    out_shape = shape_of(op.results[0])
    if isinstance(op, nn.ReshapeOp):
        return table.reshape(out_shape)
    if isinstance(op, nn.TransposeOp):
        return table.transpose(ints_prop(op, "perm"))
    if isinstance(op, nn.NarrowOp):
        axis = int_prop(op, "axis") % table.ndim
        start, length = int_prop(op, "start"), int_prop(op, "length")
        return np.take(table, range(start, start + length), axis=axis)
    if isinstance(op, nn.GatherOp):
        indices = constant_data(op.indices)
        assert indices is not None
        axis = int_prop(op, "axis") % table.ndim
        return np.take(table, indices.astype(np.int64) % table.shape[axis], axis=axis)
    assert isinstance(op, nn.WhereOp)
    return np.broadcast_to(table, out_shape)


def view_table(value: SSAValue) -> tuple[SSAValue, np.ndarray] | None:
    """The source the chain of views ending at ``value`` reads and the table of ``value`` (flat
    indices into the source); None when ``value`` is not a view of something (or its source
    is larger than `MAX_TABLE`)."""
    chain: list[Operation] = []
    source = value
    while (owner := producer(source)) is not None and (read := view_input(owner)) is not None:
        chain.append(owner)
        source = read
    shape = shape_of(source)
    if not chain or math.prod(shape) > MAX_TABLE:
        return None
    table = np.arange(math.prod(shape)).reshape(shape)
    for op in reversed(chain):
        table = apply_view(op, table)
    return source, table


@dataclass(frozen=True)
class ViewChain:
    """``reshape(transpose(narrow(reshape(source, shape)), perm), result)``: a strided box of
    the source. ``narrows`` are ``(axis, start, length)``; empty parts are left out when built."""

    shape: tuple[int, ...]
    narrows: tuple[tuple[int, int, int], ...]
    perm: tuple[int, ...]
    result: tuple[int, ...]

    def table(self, size: int) -> np.ndarray:
        table = np.arange(size).reshape(self.shape)
        for axis, start, length in self.narrows:
            table = np.take(table, range(start, start + length), axis=axis)
        return table.transpose(self.perm).reshape(self.result)

    def build(self, source: SSAValue) -> list[Operation]:
        """The ops reading the box from ``source`` (the last one's result is the view; none
        when it is ``source`` itself)."""
        elem = source.type.element_type  # type: ignore[attr-defined]
        ops: list[Operation] = []
        value, shape = source, list(shape_of(source))

        def reshaped(to: list[int]) -> None:
            nonlocal value, shape
            if to != shape:
                ops.append(nn.ReshapeOp(value, TensorType(elem, to)))
                value, shape = ops[-1].results[0], to

        if self.narrows or list(self.perm) != sorted(self.perm):
            reshaped(list(self.shape))
        for axis, start, length in self.narrows:
            ops.append(nn.NarrowOp(value, axis, start, length))
            shape[axis] = length
            value = ops[-1].results[0]
        if list(self.perm) != sorted(self.perm):
            shape = [shape[p] for p in self.perm]
            ops.append(nn.TransposeOp(value, list(self.perm), TensorType(elem, shape)))
            value = ops[-1].results[0]
        reshaped(list(self.result))
        return ops


def strided_view(table: np.ndarray, source_shape: tuple[int, ...], dims: tuple[int, ...],
                 result: tuple[int, ...]) -> ViewChain | None:
    """The canonical chain reading ``table`` (viewed as ``dims``) from a contiguous source of
    ``source_shape``, read as ``result``; None when the table is not a strided box of it."""
    box = table.reshape(dims)
    size = math.prod(source_shape)
    offset = int(box.flat[0])
    strides = []
    for axis, n in enumerate(dims):
        step = [0] * len(dims)
        step[axis] = 1 if n > 1 else 0
        strides.append(int(box[tuple(step)]) - offset if n > 1 else 0)
    grid = np.indices(dims).reshape(len(dims), -1)
    if not np.array_equal(box.reshape(-1), offset + np.asarray(strides) @ grid):
        return None
    chain = (_on_source_axes(source_shape, dims, strides, offset, result)
             or _on_new_axes(size, dims, strides, offset, result))
    if chain is None or not np.array_equal(chain.table(size), table.reshape(result)):
        return None
    return chain


def _contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return strides[::-1]


def _narrows(shape: tuple[int, ...], starts: list[int], lengths: list[int]
             ) -> tuple[tuple[int, int, int], ...] | None:
    if any(s + n > m for s, n, m in zip(starts, lengths, shape, strict=True)):
        return None
    return tuple((a, s, n) for a, (s, n, m) in enumerate(zip(starts, lengths, shape, strict=True))
                 if n != m)


def _on_source_axes(shape: tuple[int, ...], dims: tuple[int, ...], strides: list[int],
                    offset: int, result: tuple[int, ...]) -> ViewChain | None:
    """The box as narrows and a transpose of the source's own axes (so that a transpose the
    elementwise fusion takes into its producer's stores stays one)."""
    if len(shape) != len(dims):
        return None
    source_strides = _contiguous_strides(shape)
    axis_of: dict[int, int] = {}
    for j, n in enumerate(dims):
        if n > 1:
            match = [a for a, m in enumerate(shape) if m > 1 and source_strides[a] == strides[j]]
            if len(match) != 1 or match[0] in axis_of.values():
                return None
            axis_of[j] = match[0]
    free = [a for a in range(len(shape)) if a not in axis_of.values()]
    for j in range(len(dims)):
        if j not in axis_of:
            axis_of[j] = free.pop(0)
    perm = tuple(axis_of[j] for j in range(len(dims)))
    starts = [(offset // source_strides[a]) % shape[a] for a in range(len(shape))]
    lengths = [dims[perm.index(a)] for a in range(len(shape))]
    narrows = _narrows(shape, starts, lengths)
    return None if narrows is None else ViewChain(shape, narrows, perm, result)


def _on_new_axes(size: int, dims: tuple[int, ...], strides: list[int], offset: int,
                 result: tuple[int, ...]) -> ViewChain | None:
    """The box on the source reshaped to one axis per dimension of the box, the one with the
    largest stride first; needs each stride to divide the next larger one. When the smallest
    stride is a step ``k > 1`` (every other element), one more axis of size ``k`` comes last,
    read at one place (``offset mod k``) and dropped by the last reshape."""
    moving = sorted((j for j, n in enumerate(dims) if n > 1), key=lambda j: -strides[j])
    if not moving or strides[moving[-1]] < 1:
        return None
    radix = [strides[j] for j in moving]
    lengths = [dims[j] for j in moving]
    stepped = radix[-1] != 1
    if stepped:
        radix.append(1)
        lengths.append(1)
    if size % radix[0] or any(a % b for a, b in zip(radix, radix[1:], strict=False)):
        return None
    shape = (size // radix[0], *(a // b for a, b in zip(radix, radix[1:], strict=False)))
    starts = [(offset // r) % m for r, m in zip(radix, shape, strict=True)]
    narrows = _narrows(shape, starts, lengths)
    if narrows is None:
        return None
    perm = tuple(sorted(range(len(moving)), key=lambda k: moving[k]))  # back to the box's order
    return ViewChain(shape, narrows, (*perm, len(moving)) if stepped else perm, result)
