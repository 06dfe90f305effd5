"""Which attention mask a boolean tensor of an export is, found by running its data movement on
element identities rather than by matching how the exporter spelled it.

Exporters build the ``[B, 1, S_q, S_k]`` condition of an attention mask from the ``[B, S_k]``
key mask in many ways (TorchScript: Expand, GatherElements, Unsqueeze; dynamo: GatherND with a
constant index table; both combine it with a causal triangle by And or Where). After import
they are chains of copies: reshapes, transposes, narrows, gathers with constant indices, and
``where`` with a constant condition. `key_mask_layout` evaluates such a chain on an array of
identities (element ``i`` of the key mask is ``i``; constant true and false are `TRUE` and
`FALSE`), which gives, for every element of the condition, exactly which key-mask element or
constant it equals. Anything else in the chain (arithmetic on the mask, a gather with computed
indices) makes the answer None. So the attention pattern can then compare the layout with
"key mask broadcast over the queries" and "the same, below the diagonal only" exactly, for every
element, whatever the spelling.

`additive_key_mask` does the same for a float mask added to the scores (torch's
``MultiheadAttention``: ``where(key_padding_mask, -inf, 0)`` reshaped and expanded over the
heads): copies of a ``where(c, 0, -big)`` or ``where(c, -big, 0)`` of splats, ``c`` a key mask
read directly (the second form hides the keys where it is true: the polarity is returned).
`constant_additive_layout` judges a float mask that is a constant (the causal triangle of
``0`` and ``-big``, or all ``0``) by its values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import BlockArgument, OpResult, SSAValue

from fusec.dialects import nn
from fusec.dialects.common import shape_of

TRUE, FALSE = -2, -1
"""The identities of the constants true and false; key-mask elements are 0, 1, 2, ..."""

MAX_ELEMENTS = 1 << 24
"""Conditions, and values in their chains, larger than this are not evaluated (the pattern
then does not apply)."""

MAX_DEPTH = 64


@dataclass(frozen=True)
class KeyMaskLayout:
    """What a ``[B, 1, S_q, S_k]`` condition is in terms of a key mask ``source`` (``[B, S_k]``,
    nonzero = attend) and the causal triangle."""

    source: SSAValue | None
    """The key mask read (before its cast to bool), or None when the condition reads none."""

    causal: bool
    """Keys after the query are hidden too."""

    window: int | None = None
    """With `causal`: query ``i`` sees keys ``(i - window, i]`` only (a sliding window)."""


def key_mask_layout(cond: SSAValue, params: Mapping[str, np.ndarray]) -> KeyMaskLayout | None:
    """The key mask and causality that ``cond`` (boolean, ``[B or 1, 1, S_q, S_k]``) encodes
    exactly, or None when it is not such a mask."""
    shape = shape_of(cond)
    if len(shape) != 4 or shape[1] != 1 or math.prod(shape) > MAX_ELEMENTS:
        return None
    tracer = _Tracer(params)
    ids = tracer.identities(cond, 0)
    if ids is None:
        return None
    batch, _, queries, keys = shape
    if tracer.source is None:
        full = np.full(shape, TRUE)
    elif shape_of(tracer.source) != (batch, keys):
        return None
    else:
        full = np.broadcast_to(np.arange(batch * keys).reshape(batch, 1, 1, keys), shape)
    return layout_of(ids, full, tracer.source)


def layout_of(ids: np.ndarray, full: np.ndarray, source: SSAValue | None
              ) -> KeyMaskLayout | None:
    """The layout of a condition whose identities are ``ids`` (``[B, 1, S_q, S_k]``): the key
    mask ``source`` broadcast over the queries (``full``), alone or below the diagonal only
    (maybe a band of it); else None."""
    queries, keys = ids.shape[2:]
    if (ids == full).all():
        return KeyMaskLayout(source, False)
    below = np.tri(queries, keys, dtype=bool)[None, None]  # key <= query
    # the keys the last query sees: all of the triangle's row, or a window of them
    window = int((ids[0, 0, -1] != FALSE).sum())
    if window < min(queries, keys):
        below = below & ~np.tri(queries, keys, -window, dtype=bool)[None, None]
    if window and (ids == np.where(below, full, FALSE)).all():
        return KeyMaskLayout(source, True, window if window < min(queries, keys) else None)
    return None


def constant_additive_layout(value: SSAValue, keys: int, big_negative: float,
                             params: Mapping[str, np.ndarray]) -> KeyMaskLayout | None:
    """The causality (or nothing hidden) of a constant float mask ``[B|1, H|1, S_q|1, S_k]``
    (or fewer leading axes) added to the scores: 0 at the keys attended and at most
    ``big_negative`` at the others, the same for every batch and head (a mask computed from
    constants alone, as PyTorch's tracing leaves Hugging Face's eager causal mask when no
    padding mask is given); else None."""
    shape = shape_of(value)
    if not shape or len(shape) > 4 or shape[-1] != keys or math.prod(shape) > MAX_ELEMENTS:
        return None
    data = constant_array(value, params)
    if data is None or data.dtype.kind != "f":
        return None
    visible = (data == 0).reshape((1,) * (4 - len(shape)) + shape)
    if not (visible | (data <= big_negative).reshape(visible.shape)).all() or \
            (visible != visible[:1, :1]).any():
        return None
    if visible.all():
        return KeyMaskLayout(None, False)
    if visible.shape[2] == 1:  # one row for every query: a constant key mask, not causal
        return None
    ids = np.where(visible[:1, :1], TRUE, FALSE)
    return layout_of(ids, np.full(ids.shape, TRUE), None)


@dataclass(frozen=True)
class AdditiveKeyMask:
    """A float ``[B|1, H|1, S_q|1, S_k]`` mask added to the scores, as a key mask."""

    source: SSAValue
    """The ``[B, S_k]`` key mask it reads."""

    hides_where_true: bool
    """The key mask is nonzero at the keys hidden (a padding mask), not at those attended."""


def additive_key_mask(value: SSAValue, batch: int, keys: int, big_negative: float,
                      params: Mapping[str, np.ndarray]) -> AdditiveKeyMask | None:
    """The key mask that the float ``value``, added to ``[B, H, S_q, S_k]`` scores, applies
    exactly: 0 at the keys attended and at most ``big_negative`` at the others, the same for
    every head and query; else None."""
    shape = shape_of(value)
    if len(shape) != 4 or shape[3] != keys or shape[0] not in (1, batch) \
            or math.prod(shape) > MAX_ELEMENTS:
        return None
    tracer = _Tracer(params, big_negative)
    ids = tracer.identities(value, 0)
    if ids is None or tracer.source is None or tracer.hides is None \
            or shape_of(tracer.source) != (batch, keys):
        return None
    key = np.arange(batch * keys).reshape(batch, 1, 1, keys)
    if not (np.broadcast_to(ids, (batch, *shape[1:])) == np.broadcast_to(
            key, (batch, *shape[1:]))).all():
        return None
    return AdditiveKeyMask(tracer.source, tracer.hides)


class _Tracer:
    """Evaluates copy chains on identities; remembers the one key mask they read."""

    def __init__(self, params: Mapping[str, np.ndarray], big_negative: float = -math.inf
                 ) -> None:
        self.params = params
        self.source: SSAValue | None = None
        self.big_negative = big_negative
        self.hides: bool | None = None
        """For a float mask, whether its key mask is nonzero at the hidden keys."""

    def identities(self, value: SSAValue, depth: int) -> np.ndarray | None:
        if depth > MAX_DEPTH or math.prod(shape_of(value)) > MAX_ELEMENTS:
            return None  # (a chain through a huge value: found by fusec-fuzz --models)
        constant = self.constant_bools(value)
        if constant is not None:
            return np.where(constant, TRUE, FALSE)
        if isinstance(value, BlockArgument) and self.is_bool(value):
            return self.key_mask(value)
        if not isinstance(value, OpResult):
            return None
        op = value.op
        if isinstance(op, nn.CastOp) and self.is_bool(value):
            return self.key_mask(op.operands[0])
        if isinstance(op, nn.WhereOp):
            return self.where(op, depth)
        if not isinstance(op, (nn.ReshapeOp, nn.TransposeOp, nn.NarrowOp, nn.GatherOp)):
            return None
        ids = self.identities(op.operands[0], depth + 1)
        if ids is None:
            return None
        if isinstance(op, nn.ReshapeOp):
            return ids.reshape(shape_of(value))
        if isinstance(op, nn.TransposeOp):
            return ids.transpose(list(op.perm.get_values()))  # type: ignore[attr-defined]
        axis = op.axis.value.data  # type: ignore[attr-defined]
        if isinstance(op, nn.NarrowOp):
            start = op.start.value.data  # type: ignore[attr-defined]
            length = op.length.value.data  # type: ignore[attr-defined]
            return np.take(ids, range(start, start + length), axis=axis)
        indices = self.constant_ints(op.indices)  # a gather with constant indices
        dim = ids.shape[axis]
        if indices is None or ((indices < -dim) | (indices >= dim)).any():
            return None  # out of range: nn.gather's verifier refuses it
        return np.take(ids, indices, axis=axis)

    def where(self, op: nn.WhereOp, depth: int) -> np.ndarray | None:
        """``where(c, a, b)`` with a constant ``c``, or with constant ``a`` and ``b`` (then
        ``c`` itself, or its negation, when they are true and false)."""
        cond, a, b = op.operands
        shape = shape_of(op.results[0])
        select = self.constant_bools(cond)
        if select is not None:
            ids_a, ids_b = self.identities(a, depth + 1), self.identities(b, depth + 1)
            if ids_a is None or ids_b is None:
                return None
            return np.broadcast_to(np.where(select, ids_a, ids_b), shape)
        if not self.is_bool(a):
            return self.additive(cond, a, b, shape, depth)
        const_a, const_b = self.constant_bools(a), self.constant_bools(b)
        if const_a is None or const_b is None or const_a.size != 1 or const_b.size != 1:
            return None
        if bool(const_a.reshape(-1)[0]) and not bool(const_b.reshape(-1)[0]):
            ids = self.identities(cond, depth + 1)
            return None if ids is None else np.broadcast_to(ids, shape)
        return None

    def additive(self, cond: SSAValue, a: SSAValue, b: SSAValue, shape: tuple[int, ...],
                 depth: int) -> np.ndarray | None:
        """``where(cond, 0, -big)`` or ``where(cond, -big, 0)`` of float splats: the
        identities of ``cond``, the polarity noted (one per mask)."""
        values = [constant_array(x, self.params) for x in (a, b)]
        if any(v is None or v.size == 0 or (v != v.reshape(-1)[0]).any() for v in values):
            return None
        first, second = (float(v.reshape(-1)[0]) for v in values)  # type: ignore[union-attr]
        if first == 0.0 and second <= self.big_negative:
            hides = False
        elif first <= self.big_negative and second == 0.0:
            hides = True
        else:
            return None
        if self.hides is not None and self.hides != hides:
            return None
        self.hides = hides
        ids = self.identities(cond, depth + 1)
        return None if ids is None else np.broadcast_to(ids, shape)

    def key_mask(self, value: SSAValue) -> np.ndarray | None:
        """The identities of the key mask ``value`` (an argument of the function); one per
        condition."""
        if not isinstance(value, BlockArgument) or value.name_hint in self.params:
            return None
        if self.source is not None and self.source is not value:
            return None
        self.source = value
        return np.arange(math.prod(shape_of(value))).reshape(shape_of(value))

    def is_bool(self, value: SSAValue) -> bool:
        elem = value.type.element_type  # type: ignore[attr-defined]
        return isinstance(elem, IntegerType) and elem.width.data == 1

    def constant_bools(self, value: SSAValue) -> np.ndarray | None:
        data = constant_array(value, self.params)
        return None if data is None or not self.is_bool(value) else data.astype(bool)

    def constant_ints(self, value: SSAValue) -> np.ndarray | None:
        data = constant_array(value, self.params)
        return None if data is None or data.dtype.kind not in "iu" else data.astype(np.int64)


def constant_array(value: SSAValue, params: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The data of an ``nn.constant`` (a splat broadcast to its shape) or of a weight argument
    (by its name in ``params``); None for anything computed."""
    if isinstance(value, OpResult) and isinstance(value.op, nn.ConstantOp):
        attr = value.op.value  # type: ignore[attr-defined]
        data = np.array(attr.get_values())
        if attr.is_splat():
            return np.broadcast_to(data.reshape(-1)[:1].reshape(()), attr.get_shape())
        return data.reshape(attr.get_shape())
    if isinstance(value, BlockArgument) and value.name_hint in params:
        return np.asarray(params[value.name_hint])
    return None
