"""Sibling regions over adjacent slices of one tensor become one region, and reshapes of slices
become slices of reshapes, so that slices stay index maps and in-place reads
(``fuse-elementwise`` runs these around its regions, see ``fuse_elementwise.py``).

**Narrow last.** ``reshape(narrow(x))`` is ``narrow(reshape(x))`` when the sliced elements are
one slice of ``x`` reshaped (the reshape splits the sliced axis with the slice on whole outer
rows, or merges it with whole inner axes). A reshape of a whole tensor is a free view; a narrow
is an index map of the region that reads it, or read in place by attention (a slice of the
last axis), where a narrow before a reshape was a copy kernel. Checked on the index table of
both forms (``_view_tables.py``)::

    %q = nn.narrow %qkv {axis = 2, start = 0, length = 32} : 1x8x64 -> 1x8x32
    %h = nn.reshape %q : 1x8x32 -> 1x8x4x8
  becomes
    %r = nn.reshape %qkv : 1x8x64 -> 1x8x8x8
    %h = nn.narrow %r {axis = 2, start = 0, length = 4} : 1x8x8x8 -> 1x8x4x8

**Sibling slices.** Two ``fused.elementwise`` with the same body (a rotary embedding of the
query heads and of the key heads of one packed projection) whose iteration spaces differ along
one axis ``a`` only, and whose inputs are the same tensors read through maps that either do
not use ``a`` and are equal (cos and sin) or use it and continue each other (the second reads
at ``d_a`` what the first would read at ``d_a + n1``), are one region over the joined extent;
each is a narrow of it (in either program order). The joined region stands where the earlier
stood (the later reads nothing else). A body that reads its position along ``a``
(``fused.index``) is not joined, nor a region the function returns (GPT-2's keys and values
put out head-major for its cache: joined, each would be copied out of the joined result again;
apart, each stores its own, and launch fusion runs the two as one launch).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from fusec.dialects import fused, nn
from fusec.dialects.common import int_prop
from fusec.dialects.index_maps import IndexMap, to_affine
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.remarks import may_fuse


def narrow_of_reshape(op: nn.ReshapeOp) -> tuple[list[int], int, int] | None:
    """For ``op = reshape(narrow(x))``: the shape to reshape ``x`` to and the axis and start of
    the one narrow of it that gives ``op``'s result; None when there is none."""
    narrow = producer(op.input)
    if not isinstance(narrow, nn.NarrowOp):
        return None
    full_x, full_result = shape_of(narrow.input), shape_of(op.result)
    axis = int_prop(narrow, "axis") % len(full_x)
    # Leading axes that the reshape keeps and the narrow does not slice are checked at size 1
    # (the index tables only repeat along them), so a whole model's tensors are checked too.
    kept = 0
    while (kept < min(axis, len(full_x), len(full_result))
           and full_x[kept] == full_result[kept]):
        kept += 1
    x_shape = [1] * kept + list(full_x[kept:])
    result = [1] * kept + list(full_result[kept:])
    found = _narrow_of_reshape(x_shape, result, axis, int_prop(narrow, "start"),
                               int_prop(narrow, "length"), kept)
    if found is None:
        return None
    shape, b, begin = found
    return [*full_result[:kept], *shape[kept:]], b, begin


def _narrow_of_reshape(x_shape: list[int], result: list[int], axis: int, start: int,
                       length: int, first: int = 0) -> tuple[list[int], int, int] | None:
    """`narrow_of_reshape` on shapes, checked on index tables of ``x_shape``; the narrow of the
    reshaped ``x`` is along an axis from ``first`` on (the axes before are kept ones)."""
    size = math.prod(x_shape)
    if size == 0 or size > (1 << 22):
        return None
    table = np.take(np.arange(size).reshape(x_shape), range(start, start + length),
                    axis=axis).reshape(result)
    offset = int(table.flat[0])
    for b, n in enumerate(result):
        if b < first or n == 0 or (n * x_shape[axis]) % length:
            continue
        shape = [*result[:b], n * x_shape[axis] // length, *result[b + 1:]]
        if math.prod(shape) != size or shape == list(result):
            continue
        begin = (offset // math.prod(shape[b + 1:])) % shape[b]
        if begin + n > shape[b]:
            continue
        candidate = np.take(np.arange(size).reshape(shape), range(begin, begin + n), axis=b)
        if np.array_equal(candidate, table):
            return shape, b, begin
    return None


def narrow_last(ops: Sequence[Operation], pass_name: str) -> None:
    """Rewrites each ``reshape(narrow(x))`` whose narrow only reshapes read, or ops that read
    the slice in place (attention's q, k, v: `nn.slice_read_in_place`, so the narrow stays a
    free read for them); see the module docstring. One reshape of a tensor to a shape serves
    all its narrows."""
    reshaped: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
    for op in ops:
        if not isinstance(op, nn.ReshapeOp) or op.parent is None:
            continue
        narrow = producer(op.input)
        if not isinstance(narrow, nn.NarrowOp) or not all(
                isinstance(u.operation, nn.ReshapeOp)
                or nn.slice_read_in_place(narrow, u.operation, u.index)
                for u in narrow.result.uses):
            continue
        found = narrow_of_reshape(op)
        if found is None or not may_fuse(pass_name, op, "narrow(reshape(x)) for "
                                         "reshape(narrow(x))", verb="rewrote"):
            continue
        shape, axis, start = found
        elem = op.result.type.element_type  # type: ignore[attr-defined]
        source = narrow.input
        if list(shape_of(source)) != shape:
            key = (source, tuple(shape))
            if key not in reshaped:
                reshape = located_at(nn.ReshapeOp(source, TensorType(elem, shape)), op)
                owner = producer(source)  # right after the source: before every reader
                Rewriter.insert_op(reshape, InsertPoint.after(owner) if owner is not None
                                   else InsertPoint.at_start(narrow.parent))  # type: ignore
                reshaped[key] = reshape.result
            source = reshaped[key]
        # where the old narrow stood: sibling narrows stay adjacent, one launch after fusion
        new = located_at(nn.NarrowOp(source, axis, start, shape_of(op.result)[axis]), op)
        Rewriter.insert_op(new, InsertPoint.before(narrow))
        Rewriter.replace_op(op, [], [new.result])
        if not narrow.result.uses:
            Rewriter.erase_op(narrow)


def uses_axis(m: IndexMap, axis: int) -> bool:
    return any(d == axis for d, _ in m)


def continued(m: IndexMap, axis: int, by: int) -> IndexMap:
    """``m`` reading at ``d_axis + by``."""
    return tuple((d, c + by) if d == axis else (d, c) for d, c in m)


def join_axis(first: fused.ElementwiseOp, second: fused.ElementwiseOp) -> int | None:
    """The axis along which ``second`` continues ``first`` (see the module docstring)."""
    if len(first.results) != 1 or len(second.results) != 1 or first.indexing_maps is None:
        return None
    if first.result.type.element_type != second.result.type.element_type:  # type: ignore
        return None
    if len(first.inputs) != len(second.inputs) or second.indexing_maps is None:
        return None
    a_shape, b_shape = shape_of(first.result), shape_of(second.result)
    if len(a_shape) != len(b_shape):
        return None
    differ = [i for i, (p, q) in enumerate(zip(a_shape, b_shape, strict=True)) if p != q]
    if len(differ) > 1:
        return None
    if not first.body.is_structurally_equivalent(second.body):
        return None
    candidates = differ or list(range(len(a_shape)))
    for axis in candidates:
        if any(isinstance(o, fused.IndexOp) and int_prop(o, "dim") == axis
               for o in first.body.block.ops):
            continue
        extent = a_shape[axis]
        if all(
            v is w and ((not uses_axis(m, axis) and m == n)
                        or (uses_axis(m, axis) and continued(m, axis, extent) == n))
            for v, w, m, n in zip(first.inputs, second.inputs, first.input_maps(),
                                  second.input_maps(), strict=True)
        ) and any(uses_axis(m, axis) for m in first.input_maps()):
            return axis
    return None


def join(first: fused.ElementwiseOp, second: fused.ElementwiseOp, axis: int,
         at: Operation) -> fused.ElementwiseOp:
    """One region over both extents along ``axis`` (``first``'s slice, then ``second``'s),
    inserted before ``at`` (the earlier of the two); both become narrows of it."""
    shape = list(shape_of(first.result))
    n1, n2 = shape[axis], shape_of(second.result)[axis]
    shape[axis] = n1 + n2
    elem = first.result.type.element_type  # type: ignore[attr-defined]
    body = first.body.clone()
    maps = [to_affine(m, len(shape)) for m in first.input_maps()]
    joined = located_at(fused.ElementwiseOp(list(first.inputs), TensorType(elem, shape),
                                            body, maps), at)
    Rewriter.insert_op(joined, InsertPoint.before(at))
    for old, start, length in ((first, 0, n1), (second, n1, n2)):
        piece = located_at(nn.NarrowOp(joined.result, axis, start, length), old)
        Rewriter.insert_op(piece, InsertPoint.before(at))
        old.result.replace_all_uses_with(piece.result)
    Rewriter.erase_op(second)
    Rewriter.erase_op(first)
    return joined


def sliced_input(op: fused.ElementwiseOp) -> SSAValue | None:
    """The first input read through a map that moves with the iteration (the key that sibling
    candidates share)."""
    for v, m in zip(op.inputs, op.input_maps(), strict=True):
        if any(d is not None for d, _ in m):
            return v
    return None


def join_sibling_slices(ops: Sequence[Operation], pass_name: str) -> None:
    """Joins sibling regions over adjacent slices (see the module docstring), in program order:
    each region with the last joined region of the tensor it slices, when they continue."""
    last: dict[SSAValue, fused.ElementwiseOp] = {}
    for op in ops:
        if not isinstance(op, fused.ElementwiseOp) or op.indexing_maps is None:
            continue
        key = sliced_input(op)
        if key is None:
            continue
        first = last.get(key)
        last[key] = op
        if first is None or first.parent is not op.parent:
            continue
        low, high = first, op
        axis = join_axis(low, high)
        if axis is None:
            low, high = op, first
            axis = join_axis(low, high)
        if axis is None or returned(first) or returned(op):
            continue
        if not may_fuse(pass_name, op, f"fused.elementwise joined with its sibling over "
                        f"the adjacent slice along dimension {axis}"):
            continue
        last[key] = join(low, high, axis, first)


def returned(op: fused.ElementwiseOp) -> bool:
    """Whether the function returns the region's result: a slice of a joined region would
    then be copied out of it (a narrow that is not along the last axis is no free read), where
    the two regions apart store their results directly (and run as one launch after launch
    fusion, their iteration spaces equal)."""
    return any(isinstance(use.operation, func.ReturnOp) for use in op.results[0].uses)
