"""Op kinds: what an op does with the index space, which is what decides what it may fuse with.

Every ``nn`` and ``fused`` op declares one as the class attribute ``FUSION_KIND`` (the op
families of ``nn.py`` declare it once for all their members), and the fusion passes read it
through `op_kind` rather than testing op names. The kinds are TVM's op patterns (FuseOps)::

    ELEMENTWISE  result[i] = f(operands[i]), numpy broadcasting (add, exp, cast, where, ...)
    BROADCAST    result[i] = f(operand[g(i)]) for a many-to-one g (an explicit expand)
    INJECTIVE    result[i] = operand[g(i)], g one-to-one: data movement only (transpose, narrow,
                 concat, reshape, gather)
    REDUCTION    folds axes, possibly broadcasting the result back (reduce_*, norms, softmax)
    GEMM         a contraction whose stored elements may go through an elementwise epilogue
                 (matmul, attention)
    OPAQUE       anything else: the fusers leave it as it is (constants, whole layers, the
                 scalar ops inside fused bodies)

A new op declares its kind when it is written; ``tests/dialects/test_op_kinds.py`` fails for a
registered op that has none.

A GEMM-kind op may also declare ``COLUMN_OPERANDS``: the names of its operands whose last axis is
its result's last axis (a weight's columns, a bias), its first operand being the input every
output column reads whole. Such ops of one input split by columns: siblings with equal
properties merge into one op of those operands concatenated along their last axes
(``fuse-shared-input-matmul``), whatever the op.
"""

from __future__ import annotations

from enum import Enum

from xdsl.ir import Operation


class OpKind(Enum):
    """An op's fusion pattern, from the most to the least fusible."""

    ELEMENTWISE = "elementwise"
    BROADCAST = "broadcast"
    INJECTIVE = "injective"
    REDUCTION = "reduction"
    GEMM = "gemm"
    OPAQUE = "opaque"


def op_kind(op: Operation) -> OpKind:
    """The declared kind of ``op``; an op of another dialect (``func.return``, ``arith``) is
    ``OPAQUE``."""
    kind = getattr(type(op), "FUSION_KIND", None)
    return kind if isinstance(kind, OpKind) else OpKind.OPAQUE


def declared_kind(cls: type[Operation]) -> OpKind | None:
    """What ``cls`` declares, or None (for the test that every op declares one)."""
    kind = getattr(cls, "FUSION_KIND", None)
    return kind if isinstance(kind, OpKind) else None


def column_operands(op: Operation) -> tuple[str, ...]:
    """The operands ``op`` declares column-indexed (see the module docstring); () when it
    declares none."""
    names = getattr(type(op), "COLUMN_OPERANDS", ())
    return tuple(names) if op_kind(op) is OpKind.GEMM else ()
