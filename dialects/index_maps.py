"""Index maps: how a ``fused.elementwise`` reads an input at a point of its iteration space.

A map has one term per input dimension: ``(d, c)`` reads index ``i_d + c`` (iteration
dimension ``d`` plus an offset), ``(None, c)`` reads the constant index ``c``. Numpy
broadcasting is the map of a right-aligned input whose size-1 dimensions read ``0``; a
transpose permutes the terms, a narrow adds its start to an offset, a concat piece subtracts
its start. Every read index is clamped into the input's bounds: only reads that a concat's
select discards ever leave them (``i_d - start`` before the piece starts).

In the IR a map is an ``affine_map`` whose results are ``d_k``, ``d_k + c`` or ``c``::

    fused.elementwise %x, %y {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                              affine_map<(d0, d1) -> (d0, (d1 + 4))>]} ...
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

IndexTerm = tuple[int | None, int]
"""``(d, c)``: iteration dimension ``d`` plus ``c``; ``(None, c)``: the constant ``c``."""

IndexMap = tuple[IndexTerm, ...]
"""One term per dimension of the tensor read."""


def identity_map(rank: int) -> IndexMap:
    return tuple((d, 0) for d in range(rank))


def broadcast_map(shape: Sequence[int], out_shape: Sequence[int]) -> IndexMap:
    """Reading ``shape`` broadcast (numpy rules) to ``out_shape``."""
    lead = len(out_shape) - len(shape)
    return tuple(
        (None, 0) if size == 1 and out_shape[lead + i] != 1 else (lead + i, 0)
        for i, size in enumerate(shape)
    )


def shifted(m: IndexMap, axis: int, by: int) -> IndexMap:
    """``m`` with ``by`` added to the index of dimension ``axis``."""
    d, c = m[axis]
    return (*m[:axis], (d, c + by), *m[axis + 1 :])


def through_transpose(m: IndexMap, perm: Sequence[int]) -> IndexMap:
    """The map of a transpose's input, given the map ``m`` of its result (result dimension
    ``k`` is input dimension ``perm[k]``)."""
    terms: list[IndexTerm] = [(None, 0)] * len(perm)
    for k, p in enumerate(perm):
        terms[p] = m[k]
    return tuple(terms)


def compose_broadcast(m: IndexMap, shape: Sequence[int], out_shape: Sequence[int]) -> IndexMap:
    """The map of an operand of ``shape`` that an elementwise op broadcasts to its result of
    ``out_shape``, given the map ``m`` of that result."""
    lead = len(out_shape) - len(shape)
    return tuple(
        (None, 0) if size == 1 and out_shape[lead + i] != 1 else m[lead + i]
        for i, size in enumerate(shape)
    )


def clamp_bounds(m: IndexMap, shape: Sequence[int], space: Sequence[int]) -> tuple[int, ...]:
    """Per dimension of ``shape``: its size where some point of the iteration ``space`` reads
    ``m`` outside it (the read must be clamped), else 0; ``()`` when no read leaves ``shape``."""
    bounds = []
    for (d, c), size in zip(m, shape, strict=True):
        low, high = (c, c) if d is None else (c, c + space[d] - 1)
        bounds.append(size if low < 0 or high > size - 1 else 0)
    return tuple(bounds) if any(bounds) else ()


# --- the IR form -------------------------------------------------------------------------------


def to_affine(m: IndexMap, rank: int) -> AffineMapAttr:
    results: list[AffineExpr] = []
    for d, c in m:
        if d is None:
            results.append(AffineExpr.constant(c))
        elif c:
            results.append(AffineExpr.dimension(d) + c)
        else:
            results.append(AffineExpr.dimension(d))
    return AffineMapAttr(AffineMap(rank, 0, tuple(results)))


def from_affine(attr: AffineMapAttr) -> IndexMap | None:
    """The terms of an ``affine_map`` of the allowed form, else None."""
    terms: list[IndexTerm] = []
    for e in attr.data.results:
        term = _term(e)
        if term is None:
            return None
        terms.append(term)
    return tuple(terms)


def _term(e: AffineExpr) -> IndexTerm | None:
    if isinstance(e, AffineDimExpr):
        return (e.position, 0)
    if isinstance(e, AffineConstantExpr):
        return (None, e.value)
    if isinstance(e, AffineBinaryOpExpr) and e.kind == AffineBinaryOpKind.Add:
        for dim, const in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if isinstance(dim, AffineDimExpr) and isinstance(const, AffineConstantExpr):
                return (dim.position, const.value)
    return None
