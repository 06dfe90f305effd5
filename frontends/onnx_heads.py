"""Which heads layout an operand of an exported attention is, found by running its data movement
on element identities rather than by matching how the exporter spelled it.

An attention's q, k and v reach the score and context MatMuls heads-first (``[B, H, S, D]``,
k also as ``kᵀ``: ``[B, H, D, S]``) through a chain of copies: reshapes and transposes that
split the heads, Expand (``where(true, x, x)`` after import) and reshapes that repeat key/value
heads for grouped-query attention, transposes ``[0, 2, 1]`` on a ``[B*H, S, D]`` view. Exporters
differ in every step. `packed_operand` walks up such a chain to the first value that is not a
copy (the source), evaluates the chain on an array of identities (element ``i`` of the source is
``i``) and compares the result, element by element, with the layouts ``nn.attention`` can take
cheaply: the source itself reshaped (the heads split off a ``[B, S, H*D]`` projection), a
last-axis slice of it (q, k and v split off one packed ``[B, S, 3*H*D]`` projection, as torch's
``MultiheadAttention`` writes with its ``in_proj``: a Narrow read in place), or a heads-first
source (after a rotary embedding) with its heads repeated by a gather. Whatever the
chain is, the answer is exact for every element, or there is none and the operand is packed
from the heads-first value as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, OpResult, SSAValue

from fusec.dialects import nn
from fusec.dialects.common import int_prop, shape_of
from fusec.frontends.onnx_mask import constant_array

MAX_ELEMENTS = 1 << 24
"""Operands larger than this are not traced (they are packed as they are)."""

MAX_DEPTH = 32


@dataclass
class Packed:
    """An operand as ``[B, S, H*D]`` and the new ops that compute it (in order)."""

    value: SSAValue
    ops: list[Operation]


def is_expand(op: Operation) -> bool:
    """``where(true, x, x)``: how the importer writes Expand (a broadcast copy)."""
    if not isinstance(op, nn.WhereOp) or op.operands[1] is not op.operands[2]:
        return False
    cond = constant_array(op.operands[0], {})
    return cond is not None and bool(np.all(cond))


def copy_chain_source(value: SSAValue) -> tuple[SSAValue, list[Operation]]:
    """The first value up ``value``'s chain of copies that is not a copy, and the copies from
    it down to ``value`` (in order)."""
    chain: list[Operation] = []
    while isinstance(value, OpResult) and len(chain) < MAX_DEPTH:
        op = value.op
        if not (isinstance(op, (nn.ReshapeOp, nn.TransposeOp, nn.NarrowOp)) or is_expand(op)):
            break
        chain.append(op)
        value = op.operands[1] if isinstance(op, nn.WhereOp) else op.operands[0]
    return value, chain[::-1]


def identities(source: SSAValue, chain: list[Operation]) -> np.ndarray:
    """The source's element identities moved as ``chain`` moves its data."""
    ids = np.arange(math.prod(shape_of(source))).reshape(shape_of(source))
    for op in chain:
        out = shape_of(op.results[0])
        if isinstance(op, nn.ReshapeOp):
            ids = ids.reshape(out)
        elif isinstance(op, nn.TransposeOp):
            ids = ids.transpose(list(op.perm.get_values()))  # type: ignore[attr-defined]
        elif isinstance(op, nn.NarrowOp):
            axis, start = int_prop(op, "axis") % ids.ndim, int_prop(op, "start")
            ids = np.take(ids, range(start, start + int_prop(op, "length")), axis=axis)
        else:
            ids = np.broadcast_to(ids, out)
    return ids


def repeated_heads(ids: np.ndarray, source_shape: tuple[int, ...]) -> np.ndarray | None:
    """``idx`` when ``ids`` (``[B, H, S, D]``) is ``source[:, idx]`` of a heads-first source
    ``[B, H_s, S, D]``, else None."""
    if len(source_shape) != 4:
        return None
    b, h, s, d = ids.shape
    if (source_shape[0], source_shape[2], source_shape[3]) != (b, s, d):
        return None
    stride = s * d
    idx = ids[0, :, 0, 0] // stride
    if (idx >= source_shape[1]).any():
        return None
    expected = np.arange(math.prod(source_shape)).reshape(source_shape)[:, idx]
    return idx if np.array_equal(ids, expected) else None


def packed_operand(value: SSAValue, transposed: bool) -> Packed:
    """``value`` (heads-first ``[B, H, S, D]``, or ``[B, H, D, S]`` when ``transposed``) as
    ``[B, S, H*D]``: the source of its copy chain reshaped when that is what the chain does,
    the source's heads gathered when the chain repeats them, else the value packed by a
    transpose and a reshape."""
    shape = shape_of(value)
    elem = value.type.element_type  # type: ignore[attr-defined]
    b, h = shape[0], shape[1]
    s, d = (shape[3], shape[2]) if transposed else (shape[2], shape[3])
    packed_type = TensorType(elem, [b, s, h * d])
    source, chain = copy_chain_source(value)
    if chain and math.prod(shape_of(source)) <= MAX_ELEMENTS and math.prod(shape) <= MAX_ELEMENTS:
        ids = identities(source, chain)
        heads_first = ids.transpose(0, 1, 3, 2) if transposed else ids
        tokens = heads_first.transpose(0, 2, 1, 3).reshape(b, s, h * d)
        sliced = packed_slice(tokens, shape_of(source))
        if sliced is not None:
            return slice_of(source, packed_type, *sliced)
        idx = repeated_heads(heads_first, shape_of(source))
        if idx is not None:
            ops: list[Operation] = []
            heads = source
            if not np.array_equal(idx, np.arange(shape_of(source)[1])):
                from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, i32

                table = nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(
                    TensorType(i32, [h]), [int(i) for i in idx]))
                gather = nn.GatherOp(source, table.result, 1, TensorType(elem, [b, h, s, d]))
                ops, heads = [table, gather], gather.result
            return pack(heads, [0, 2, 1, 3], packed_type, ops)
    return pack(value, [0, 3, 1, 2] if transposed else [0, 2, 1, 3], packed_type, [])


def packed_slice(tokens: np.ndarray, source_shape: tuple[int, ...]) -> tuple[int, int] | None:
    """``(width, start)`` when ``tokens`` (``[B, S, H*D]`` identities) are the columns
    ``[start, start + H*D)`` of the source read as ``[B, S, width]``, else None."""
    b, s, hd = tokens.shape
    if math.prod(source_shape) % (b * s):
        return None
    width = math.prod(source_shape) // (b * s)
    start = int(tokens.flat[0])
    if start + hd > width:
        return None
    rows = np.arange(b * s).reshape(b, s, 1) * width
    expected = rows + start + np.arange(hd).reshape(1, 1, hd)
    return (width, start) if np.array_equal(tokens, expected) else None


def slice_of(source: SSAValue, packed_type: TensorType, width: int, start: int) -> Packed:
    """The columns ``[start, start + H*D)`` of ``source`` read as ``[B, S, width]``."""
    b, s, hd = packed_type.get_shape()
    ops: list[Operation] = []
    value = source
    if shape_of(source) != (b, s, width):
        ops.append(nn.ReshapeOp(source, TensorType(packed_type.element_type, [b, s, width])))
        value = ops[-1].results[0]
    if width != hd:
        ops.append(nn.NarrowOp(value, 2, start, hd))
        value = ops[-1].results[0]
    return Packed(value, ops)


def pack(value: SSAValue, perm: list[int], packed_type: TensorType,
         ops: list[Operation]) -> Packed:
    elem = packed_type.element_type
    b, s, _ = packed_type.get_shape()
    shape = shape_of(value)
    tokens = [shape[p] for p in perm]
    transpose = nn.TransposeOp(value, perm, TensorType(elem, tokens))
    reshape = nn.ReshapeOp(transpose.result, packed_type)
    return Packed(reshape.result, [*ops, transpose, reshape])
