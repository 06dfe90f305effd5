"""Views that cancel around a region: ``V⁻¹(f(V(x)))`` is ``f`` computed on ``x`` itself.

A region of ``nn`` arithmetic entered through a view ``V`` of its inputs and left through the
inverse view computes, element for element, what the same region computes on the inputs in
their own layout, with its axes renamed: a transpose by ``p`` and back by ``p⁻¹`` renames axis
``a`` of the region to ``p[a]`` (a keepdims reduction over ``a`` reduces ``p[a]``); a reshape
that splits or merges axes and the reshape back leave an elementwise region's axes grouped
the other way. So the views are dropped and the region rebuilt on ``x`` (``canonicalize-nn``'s
rule ``views that cancel around a region``)::

    %t = nn.transpose %x {perm = [1, 0]}                %m = nn.reduce_mean %x {axes = [0]}
    %m = nn.reduce_mean %t {axes = [1], keepdims}   ->  %d = nn.sub %x, %m
    %d = nn.sub %t, %m                                  (the transposes gone)
    %y = nn.transpose %d {perm = [1, 0]}

Transposes around arithmetic alone stay: ``fuse-elementwise`` reads them as index maps of one
kernel already. What the fusions then see is the spelling without the views: a column
statistic over axis 0 (``fuse-row-reduce``'s reduce-then-broadcast over any axis), an
elementwise region over the unflattened shape (``fuse-elementwise``'s view regions). Where a
view stays inside a region the index maps of ``fuse-elementwise`` read it; this rule is for
views that leave the region, which no load of a region can express (a reshape splitting an
axis; a transpose around a reduction).

A reduction can leave the region in the exit view's place (``canonicalize-nn``'s rule
``transposed reduction``): where the axes it keeps stay in the input's order, the reduced value
is the same without the transpose, so ``sum(exp(transpose(x)), axis=-1)`` of a matrix is
``sum(exp(x), axis=0)``, one column reduction (a keepdims result is read through a reshape
that moves only its size-1 axes). Kept axes out of order would need a transpose of the result:
the rule leaves those alone.

The region is every op between the entry views and the exit view: ``nn`` ops of the
elementwise kind, narrows and concats (around a reshape, of the outermost axis of a group of
reshaped axes, the others whole: ``narrow(reshape(x, (.., 2, h)), 2, 1, 1)`` is
``narrow(x, 2, h, h)``), and, around a transpose, reductions with keepdims; whose results only
the region (or the exit, for the root) reads. Its other operands come from outside: each is
read through a reshape in the new layout, of an argument, a constant or a reshape (a reshape of
a computed value would be a boundary of its own), that keeps the order of its axes longer than
1 and, around a reshape, reads each group of axes broadcast, whole, or as its member's result
does. Otherwise the rule is blocked, with a missed remark naming the operand. A region is at
most `MAX_REGION` ops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusec.dialects import nn
from fusec.dialects.common import bool_prop, int_prop, ints_attr, ints_prop, shape_of
from fusec.dialects.op_kinds import OpKind, op_kind
from fusec.passes._util import producer
from fusec.passes.remarks import may_fuse, missed

PASS = "canonicalize-nn"
RULE = "views that cancel around a region"

MAX_REGION = 64
"""Ops of the largest region rebuilt (the spellings this reads are a few ops between views)."""

Shape = tuple[int, ...]


def axis_groups(outer: Sequence[int], inner: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """The reshape between ``outer`` and ``inner`` as groups of axes of equal size: ``(axes of
    outer, axes of inner)``, in order (``(2, 4, 3)`` and ``(8, 3)``: ``[0, 1] <-> [0]``,
    ``[2] <-> [1]``). Size-1 axes join a neighbouring group."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(outer) and j < len(inner):
        a, b = [i], [j]
        p, q = outer[i], inner[j]
        i, j = i + 1, j + 1
        while p != q:
            if p < q and i < len(outer):
                a.append(i)
                p, i = p * outer[i], i + 1
            elif j < len(inner):
                b.append(j)
                q, j = q * inner[j], j + 1
            else:
                break
        groups.append((a, b))
    if groups:
        groups[-1][0].extend(range(i, len(outer)))
        groups[-1][1].extend(range(j, len(inner)))
    return groups


def outermost(sizes: Sequence[int]) -> int:
    """The first of ``sizes`` longer than 1 (0 when none is)."""
    return next((k for k, n in enumerate(sizes) if n != 1), 0)


@dataclass(frozen=True)
class Layout:
    """How a region's values are laid out inside the views (``inner``) and outside them:
    a transpose (``perm``: outer axis ``k`` is inner axis ``perm[k]``, the exit's perm) or a
    reshape (``outer``, ``inner``: the shapes of the input and of the region)."""

    perm: tuple[int, ...] | None
    outer: Shape
    inner: Shape

    def entry(self, value: SSAValue) -> SSAValue | None:
        """The tensor ``value`` views through the inverse of the exit, else None."""
        owner = producer(value)
        if self.perm is not None:
            if not isinstance(owner, nn.TransposeOp) or shape_of(owner.input) != self.outer:
                return None
            p = ints_prop(owner, "perm")
            inverse = len(p) == len(self.perm) and all(
                p[self.perm[k]] == k for k in range(len(p)))
            return owner.input if inverse else None
        if isinstance(owner, nn.ReshapeOp) and shape_of(owner.input) == self.outer and shape_of(
                owner.result) == self.inner:
            return owner.input
        return None

    def takes(self, op: Operation) -> bool:
        """Whether ``op`` may be a member (`region_member` at the inner rank)."""
        return region_member(op, len(self.inner), transposed=self.perm is not None)

    def shape(self, inner: Shape) -> Shape | None:
        """A region value's shape outside the views (``inner`` being its shape inside); None
        when a reshape cannot give it. Around a reshape, each group of axes is spanned whole,
        broadcast (all size 1), or, where it is one axis outside, cut along its outermost axis
        (a narrow's or a concat piece's extent) with the axes inside it whole."""
        if self.perm is not None:
            return tuple(inner[p] for p in self.perm)
        out: list[int] = []
        for a, b in axis_groups(self.outer, self.inner):
            dims, full = [inner[j] for j in b], [self.inner[j] for j in b]
            k = outermost(full)
            if all(n == 1 for n in dims):
                out.extend(1 for _ in a)
            elif dims == full:
                out.extend(self.outer[i] for i in a)
            elif len(a) == 1 and dims[k + 1:] == full[k + 1:]:
                out.append(dims[k] * math.prod(full[k + 1:]))
            else:
                return None
        return tuple(out)

    def operand(self, shape: Sequence[int], result: Shape) -> Shape | None:
        """The shape an operand of ``shape`` of an elementwise member whose result is of
        ``result`` (both inside the views) is read as outside them; None when a reshape does
        not give it: around a transpose, one that would reorder axes longer than 1; around a
        reshape, one that spans part of a group of axes that the result spans otherwise (each
        group of it is broadcast, all size 1, or the result's)."""
        padded = (1,) * (len(self.inner) - len(shape)) + tuple(shape)
        if self.perm is not None:
            moved = [p for p in self.perm if padded[p] != 1]  # its longer axes, in new order
            return self.shape(padded) if moved == sorted(moved) else None
        outer = self.shape(result)
        if outer is None:
            return None
        out: list[int] = []
        for a, b in axis_groups(self.outer, self.inner):
            dims = [padded[j] for j in b]
            if all(n == 1 for n in dims):
                out.extend(1 for _ in a)
            elif dims == [result[j] for j in b]:
                out.extend(outer[i] for i in a)
            else:
                return None
        return tuple(out)

    def view_axis(self, axis: int, sizes: Sequence[Shape]) -> tuple[int, int] | None:
        """A narrow's or concat's axis outside the views, and how many elements there one
        element of it is; None when it is not the outermost axis of a group that is one axis
        outside, with the axes inside it whole in every value of ``sizes`` (its operands and
        result)."""
        if self.perm is not None:
            return self.perm.index(axis), 1
        for a, b in axis_groups(self.outer, self.inner):
            if axis in b:
                full = [self.inner[j] for j in b]
                k = outermost(full)
                inside = b[k + 1:]
                whole = all(shape[j] == self.inner[j] for shape in sizes for j in inside)
                if len(a) != 1 or b[k] != axis or not whole:
                    return None
                return a[0], math.prod(full[k + 1:])
        return None

    def axes(self, axes: Sequence[int]) -> list[int]:
        """A reduction's axes outside the views (around a transpose)."""
        assert self.perm is not None
        rank = len(self.perm)
        return sorted(self.perm.index(a % rank) for a in axes)


def region_member(op: Operation, rank: int, transposed: bool) -> bool:
    """Whether ``op`` may be a member of a region of ``rank`` inside views: ``nn`` arithmetic
    of one result of that rank, a narrow or a concat (a reduction keeps its axes, and only
    renames them: around a transpose, ``transposed``)."""
    if not op.name.startswith("nn.") or len(op.results) != 1 or len(op.regions):
        return False
    t = op.results[0].type
    if not isinstance(t, TensorType) or len(t.get_shape()) != rank:
        return False
    if op_kind(op) is OpKind.ELEMENTWISE or isinstance(op, nn.NarrowOp | nn.ConcatOp):
        return True
    return transposed and isinstance(op, nn.ReduceOp) and bool_prop(op, "keepdims")


def layout_of(exit_op: Operation) -> Layout | None:
    if isinstance(exit_op, nn.TransposeOp):
        return Layout(ints_prop(exit_op, "perm"), shape_of(exit_op.result),
                      shape_of(exit_op.input))
    if isinstance(exit_op, nn.ReshapeOp):
        return Layout(None, shape_of(exit_op.result), shape_of(exit_op.input))
    return None


@dataclass
class Region:
    members: list[Operation]
    """Operands first (a valid program order)."""
    entries: dict[SSAValue, SSAValue]
    """Each view read, and the tensor it views."""


def find_region(exit_op: Operation, layout: Layout) -> Region | None:
    """The region the exit's input is the root of, or None (no member, no entry, too large)."""
    root = producer(exit_op.operands[0])
    if root is None or root.parent is not exit_op.parent or not layout.takes(root):
        return None
    if not root.results[0].has_one_use():
        return None
    members: dict[Operation, None] = {}
    entries: dict[SSAValue, SSAValue] = {}
    stack = [root]
    while stack:
        op = stack.pop()
        if op in members:
            continue
        members[op] = None
        if len(members) > MAX_REGION:
            return None
        for v in op.operands:
            source = layout.entry(v)
            owner = producer(v)
            if source is not None:
                entries[v] = source
            elif owner is not None and owner.parent is root.parent and layout.takes(owner):
                stack.append(owner)
    changed = True  # a member read from outside the region is an outside operand
    while changed:
        changed = False
        for op in list(members):
            if op is not root and any(u.operation not in members for u in op.results[0].uses):
                del members[op]
                changed = True
    read = {v for op in members for v in op.operands}
    entries = {v: x for v, x in entries.items() if v in read}
    if not entries:
        return None
    order: list[Operation] = []
    seen: set[Operation] = set()

    def visit(op: Operation) -> None:  # operands first; regions are small (MAX_REGION)
        if op in seen:
            return
        seen.add(op)
        for v in op.operands:
            owner = producer(v)
            if owner in members and v not in entries:
                visit(owner)
        order.append(op)

    visit(root)
    return Region([op for op in order if op in members], entries)


def read_as_is(own: Sequence[int], shape: Shape) -> bool:
    """Whether an operand of shape ``own`` broadcasts (numpy rules) as one of ``shape``."""
    own = tuple(own)
    return len(own) <= len(shape) and (1,) * (len(shape) - len(own)) + own == shape


def cheaply_reshaped(v: SSAValue) -> bool:
    """A reshape of ``v`` is a free view that no region boundary cuts: ``v`` is an argument, a
    constant or a reshape itself."""
    return isinstance(producer(v), nn.ConstantOp | nn.ReshapeOp | None)


def view_sizes(op: Operation) -> list[Shape]:
    return [tuple(shape_of(v)) for v in (*op.operands, op.results[0])]


def blocked(region: Region, layout: Layout) -> str | None:
    """Why the region cannot be rebuilt outside the views, or None."""
    members = set(region.members)
    for op in region.members:
        result = tuple(shape_of(op.results[0]))
        if layout.shape(result) is None:
            return f"the {op.name} result {list(result)} spans part of a group of reshaped axes"
        is_view = isinstance(op, nn.NarrowOp | nn.ConcatOp)
        if is_view and layout.view_axis(int_prop(op, "axis") % len(layout.inner),
                                        view_sizes(op)) is None:
            return f"the {op.name} axis is not the outermost of a group of reshaped axes, " \
                "the others whole"
        for v in op.operands:
            inside = v in region.entries or producer(v) in members
            reshaped = layout.perm is None and not is_view
            if inside and reshaped and layout.operand(shape_of(v), result) is None:
                return (f"the {op.name} operand {list(shape_of(v))} spans part of a group of "
                        "reshaped axes")
            if inside:
                continue
            if is_view:
                return f"the {op.name} reads {list(shape_of(v))} from outside the region"
            shape = layout.operand(shape_of(v), result)
            if shape is None:
                return (f"the operand {list(shape_of(v))} of {op.name} from outside cannot be "
                        "read through a reshape of it (it would need a transpose, or spans part "
                        "of a group of reshaped axes)")
            if not read_as_is(shape_of(v), shape) and not cheaply_reshaped(v):
                return (f"the operand {list(shape_of(v))} of {op.name} is computed outside the "
                        "region: reshaped, it would be a boundary of its own")
    return None


def rebuild(exit_op: Operation, region: Region, layout: Layout,
            rewriter: PatternRewriter) -> SSAValue:
    """The region's ops rebuilt on the viewed tensors, inserted before ``exit_op``; the new
    root's value."""
    new: dict[SSAValue, SSAValue] = dict(region.entries)
    reshaped: dict[tuple[SSAValue, Shape], SSAValue] = {}

    def outside(v: SSAValue, result: Shape) -> SSAValue:
        shape = layout.operand(shape_of(v), result)
        assert shape is not None
        if read_as_is(shape_of(v), shape):
            return v  # numpy broadcasting reads it as it is
        if (v, shape) not in reshaped:
            t = TensorType(v.type.element_type, list(shape))  # type: ignore[attr-defined]
            reshape = nn.ReshapeOp(v, t)
            reshape.location = exit_op.location
            rewriter.insert(reshape)
            reshaped[(v, shape)] = reshape.result
        return reshaped[(v, shape)]

    for op in region.members:
        result = op.results[0]
        inner = tuple(shape_of(result))
        operands = [new[v] if v in new else outside(v, inner) for v in op.operands]
        t = TensorType(result.type.element_type,  # type: ignore[attr-defined]
                       list(layout.shape(inner)))  # type: ignore[arg-type]
        if isinstance(op, nn.NarrowOp | nn.ConcatOp):
            rebuilt = moved_view(op, operands, t, layout)
        else:
            rebuilt = recreated(op, operands, t, layout)
        rebuilt.location = op.location
        rewriter.insert(rebuilt)
        new[result] = rebuilt.results[0]
    return new[region.members[-1].results[0]]


def moved_view(op: nn.NarrowOp | nn.ConcatOp, operands: list[SSAValue], t: TensorType,
               layout: Layout) -> Operation:
    """A narrow or concat on the axis outside the views that its axis is part of."""
    found = layout.view_axis(int_prop(op, "axis") % len(layout.inner), view_sizes(op))
    assert found is not None
    axis, scale = found
    if isinstance(op, nn.NarrowOp):
        return nn.NarrowOp(operands[0], axis, int_prop(op, "start") * scale,
                           int_prop(op, "length") * scale)
    return nn.ConcatOp(operands, axis, t)


def recreated(op: Operation, operands: list[SSAValue], t: TensorType,
              layout: Layout) -> Operation:
    """``op`` on the new operands, of type ``t`` (a reduction's axes renamed)."""
    properties = dict(op.properties)
    if isinstance(op, nn.ReduceOp):
        properties["axes"] = ints_attr(layout.axes(ints_prop(op, "axes")))
    return type(op).create(operands=operands, result_types=[t], properties=properties,
                           attributes=dict(op.attributes))


def erase_dead(ops: Sequence[Operation], rewriter: PatternRewriter) -> None:
    """Erases ``ops`` (consumers first) as far as nothing reads them."""
    for op in reversed(ops):
        if op.parent is not None and all(not r.uses for r in op.results):
            rewriter.erase(op)


def approved(op: Operation, region: Region | None, layout: Layout, rule: str) -> bool:
    """Whether ``rule`` may rewrite at ``op``: its region (if any) is not `blocked` (else a
    missed remark says why) and the rewrite limit allows it (`may_fuse`)."""
    why = None if region is None else blocked(region, layout)
    if why is not None:
        missed(PASS, op, f"canonical form '{rule}' not applied: {why}")
        return False
    return may_fuse(PASS, op, f"canonical form '{rule}'", verb="rewrote")


class CancellingViews(RewritePattern):
    """``V⁻¹(f(V(x)))`` -> ``f(x)`` for a transpose or reshape ``V`` (see the module)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        layout = layout_of(op)
        if layout is None or layout.outer == layout.inner and layout.perm is None:
            return
        region = find_region(op, layout)
        if region is None or layout.perm is not None and not any(
                isinstance(m, nn.ReduceOp) for m in region.members):
            return  # transposes around arithmetic alone: fuse-elementwise's index maps
        if not approved(op, region, layout, RULE):
            return
        value = rebuild(op, region, layout, rewriter)
        views = [producer(v) for v in region.entries]
        rewriter.replace(op, [], [value])
        erase_dead(region.members, rewriter)
        erase_dead([v for v in views if v is not None], rewriter)


REDUCTION_RULE = "transposed reduction"


def entry_transpose(root: nn.ReduceOp) -> nn.TransposeOp | None:
    """The first transpose that the region ending in ``root`` reads (through its members:
    elementwise ops and keepdims reductions of its rank, each read only by the region), or
    None."""
    rank = len(shape_of(root.input))
    stack, seen = [root.input], set()
    while stack and len(seen) <= MAX_REGION:
        owner = producer(stack.pop())
        if owner is None or owner in seen or owner.parent is not root.parent:
            continue
        seen.add(owner)
        if isinstance(owner, nn.TransposeOp):
            return owner
        if region_member(owner, rank, transposed=True) and all(u.operation in seen or u.operation is root
                         for u in owner.results[0].uses):
            stack.extend(owner.operands)
    return None


class TransposedReduction(RewritePattern):
    """``reduce(f(transpose(x, q)), axes)`` -> ``reduce(f(x), q[axes])`` where the axes the
    reduction keeps stay in ``x``'s order, so that the reduced value is the same without the
    transpose: a reduction that leaves the region plays the exit view's part (a column sum
    spelled as a transpose and a row sum; ``f`` elementwise ops and keepdims reductions, as
    around a transpose and its inverse). A keepdims result is read through a reshape that moves
    only its size-1 axes (a free view). A reduction read back by the region's arithmetic is not
    a root: the views around that region may cancel (`CancellingViews`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.ReduceOp):
            return
        rank = len(shape_of(op.input))
        if any(region_member(u.operation, rank, transposed=True) for u in op.result.uses):
            return  # broadcast back into the region: the views around it may cancel instead
        entry = entry_transpose(op)
        if entry is None:
            return
        q = ints_prop(entry, "perm")
        axes = sorted(a % rank for a in ints_prop(op, "axes"))
        kept = [q[i] for i in range(rank) if i not in axes]
        if kept != sorted(kept):
            return  # the reduced value would need a transpose of its own
        # the exit view a transpose back would be: outer axis k is the region's axis q⁻¹[k]
        layout = Layout(tuple(q.index(k) for k in range(rank)), shape_of(entry.input),
                        shape_of(entry.result))
        region = None if producer(op.input) is entry else find_region(op, layout)
        if region is None and producer(op.input) is not entry:
            return
        if not approved(op, region, layout, REDUCTION_RULE):
            return
        value = entry.input if region is None else rebuild(op, region, layout, rewriter)
        keepdims = bool_prop(op, "keepdims")
        new_axes = layout.axes(axes)
        outer = shape_of(value)
        shape = [1 if k in new_axes else n for k, n in enumerate(outer) if keepdims
                 or k not in new_axes]
        element = op.result.type.element_type  # type: ignore[attr-defined]
        reduced = type(op)(value, new_axes, TensorType(element, shape), keepdims)
        reduced.location = op.location
        rewriter.insert(reduced)
        result = reduced.result
        if tuple(shape) != tuple(shape_of(op.result)):
            reshape = nn.ReshapeOp(result, op.result.type)
            reshape.location = op.location
            rewriter.insert(reshape)
            result = reshape.result
        rewriter.replace(op, [], [result])
        if region is not None:
            erase_dead(region.members, rewriter)
        erase_dead([entry], rewriter)
