"""Where a weight lies in the buffer of a bound input made of it: the origins of the folded
inputs (`fold_params.Piece`) composed with the buffer's stored layout
(`ValueSpec.stored_axes`).

A bound input's buffer holds its value in `ValueSpec.stored` order: as it is, or transposed (a
``wgmma`` product's B ``[K, N]`` held ``[N, K]``, panels of one column). A weight folded into
it by transposes and concatenations lies in that buffer from some element on, with a stride
along each of its axes (`Placement`); where those strides are its own row-major ones, its
bytes are one range of the buffer, ``[offset, offset + nbytes)``, and a caller can hold the
weight as a view of the buffer (`fusec.compiler.torch_weights`):

    W [N, K] -> transpose -> folded [K, N] -> stored [N, K]: W at byte 0
    Wq [Nq, K], Wk [Nk, K], Wv [Nv, K] -> transposes -> concat on axis 1 -> folded
      [K, Nq + Nk + Nv] -> stored [Nq + Nk + Nv, K]: Wq at 0, Wk at Nq K e, Wv at (Nq + Nk) K e
    W [K, N] bound as it is (GPT-2's Conv1D) -> stored [N, K]: strides (1, K), no range
    Wg [F, K], Wu [F, K] of a SwiGLU product on wgmma -> transposes -> concat -> [K, 2F]
      -> stored [2F, K] (the kernel pairs their rows as it reads them): Wg at 0, Wu at F K e
    gate and up interleaved (`ValueSpec.interleaved`: a B read as it is), wider panels: no
      placement
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from fusec.codegen.plan import ValueSpec
from fusec.compiler.fold_params import Origins, Piece


@dataclass(frozen=True)
class Placement:
    """Where weight `source` (of `shape`) lies in the buffer of bound input `buffer`: its
    element ``i`` at element ``start + sum(i[a] * strides[a])`` of the buffer, whose elements
    are `itemsize` bytes."""

    source: str
    buffer: str
    shape: tuple[int, ...]
    start: int
    strides: tuple[int, ...]
    itemsize: int

    @property
    def contiguous(self) -> bool:
        """Whether the weight's elements, row-major, are consecutive in the buffer."""
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    @property
    def offset(self) -> int:
        """The byte of the buffer where the weight starts."""
        return self.start * self.itemsize

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.itemsize


def place(piece: Piece, spec: ValueSpec) -> Placement | None:
    """Where `piece` of the value of bound input `spec` lies in its buffer; None where the
    stored layout is no permutation of axes (`ValueSpec.stored_axes`)."""
    axes = spec.stored_axes
    if axes is None:
        return None
    stored_shape = [spec.shape[a] for a in axes]
    strides = [0] * len(piece.shape)
    start = 0
    step = 1
    for b in reversed(range(len(axes))):  # buffer axis b is value axis axes[b]
        value_axis = axes[b]
        start += piece.offset[value_axis] * step
        strides[piece.perm[value_axis]] = step
        step *= stored_shape[b]
    return Placement(piece.source, spec.name, piece.shape, start, tuple(strides),
                     spec.dtype.itemsize)


def ranges(spec: ValueSpec, pieces: Iterable[Piece]) -> list[Placement]:
    """The pieces of bound input `spec` (its origins) whose bytes are one range of its
    buffer, in order."""
    placed = (place(piece, spec) for piece in pieces)
    return [p for p in placed if p is not None and p.contiguous]


def placements(inputs: Iterable[ValueSpec], bound: Collection[str],
               origins: Origins) -> dict[str, list[Placement]]:
    """Per weight, where it lies in the buffers of a plan's bound inputs (`inputs`, of which
    those named in `bound` are bound): in the folded ones its `origins` name, and in its own
    where it is bound as it is. Strided placements included (`Placement.contiguous`)."""
    found: dict[str, list[Placement]] = {}
    for spec in inputs:
        if spec.name not in bound:
            continue
        pieces = origins.get(spec.name, (Piece.whole(spec.name, spec.shape),))
        for piece in pieces:
            placement = place(piece, spec)
            if placement is not None:
                found.setdefault(piece.source, []).append(placement)
    return found
