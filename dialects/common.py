"""Shape, type and property helpers shared by the ``nn`` and ``fused`` dialects.

Everything here is pure: it inspects types and raises ``VerifyException`` with a message that
names the op, the operand and the types involved, so that verifier errors read the same way in
every op.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

# Element types, by what an op may compute on.
HALF_TYPES: tuple[Attribute, ...] = (Float16Type(), BFloat16Type())
"""The 16-bit float types: held as such in memory, computed on as float32 by the kernels."""
FLOAT_TYPES: tuple[Attribute, ...] = (Float32Type(), *HALF_TYPES)
ARITH_TYPES: tuple[Attribute, ...] = (*FLOAT_TYPES, IntegerType(32))
ALL_TYPES: tuple[Attribute, ...] = (*ARITH_TYPES, i1)
I8 = IntegerType(8)
CAST_TYPES: tuple[Attribute, ...] = (*ALL_TYPES, I8)
"""What ``nn.cast`` converts between, and what a fused region may read and write: every type,
plus ``i8``, a storage type (quantized values) that only casts compute on."""


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value (the nn verifiers guarantee tensors)."""
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def element_of(value: SSAValue) -> Attribute:
    """The element type of a tensor value."""
    t = value.type
    assert isinstance(t, TensorType)
    return t.element_type


def type_name(t: Attribute) -> str:
    """The MLIR spelling of a type, for messages."""
    return str(t)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """numpy broadcasting of static shapes; ``None`` when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for i in range(rank):
        dim = 1
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            d = s[j]
            if d == 1:
                continue
            if dim not in (1, d):
                return None
            dim = d
        out.append(dim)
    return tuple(out)


def normalize_axis(axis: int, rank: int) -> int | None:
    """``axis`` in ``[-rank, rank)`` as a non-negative index, else ``None``."""
    if -rank <= axis < rank:
        return axis % rank if rank else 0
    return None


# --- property accessors -------------------------------------------------------------------


def int_prop(op: Operation, name: str) -> int:
    attr = op.properties[name]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def float_prop(op: Operation, name: str) -> float:
    attr = op.properties[name]
    assert isinstance(attr, FloatAttr)
    return attr.value.data


def str_prop(op: Operation, name: str) -> str:
    attr = op.properties[name]
    assert isinstance(attr, StringAttr)
    return attr.data


def bool_prop(op: Operation, name: str) -> bool:
    attr = op.properties[name]
    assert isinstance(attr, IntegerAttr)
    return bool(attr.value.data)


def ints_prop(op: Operation, name: str) -> tuple[int, ...]:
    attr = op.properties[name]
    assert isinstance(attr, DenseArrayBase)
    return tuple(attr.get_values())  # type: ignore[arg-type]


# Attributes are immutable, so ops share them: the passes build tens of thousands of fused ops
# with the same few parameters, and constructing an attribute checks it (~10 us). The cache key
# holds the value's type (True is not 1) and a float's sign (-0.0 == 0.0 in Python).


def i64_attr(value: int) -> IntegerAttr:
    return _i64_attr(type(value), value)


def f32_attr(value: float) -> FloatAttr:
    return _f32_attr(type(value), value, math.copysign(1.0, value))


def bool_attr(value: bool) -> BoolAttr:
    return _BOOL_ATTRS[bool(value)]


@lru_cache(maxsize=4096)
def _i64_attr(_kind: type, value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


@lru_cache(maxsize=4096)
def _f32_attr(_kind: type, value: float, _sign: float) -> FloatAttr:
    return FloatAttr(value, f32)


_BOOL_ATTRS: dict[bool, BoolAttr] = {False: IntegerAttr(0, i1), True: IntegerAttr(1, i1)}


def ints_attr(values: Iterable[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# --- checks that raise VerifyException -----------------------------------------------------


def tensor_type(op: Operation, what: str, value: SSAValue) -> TensorType:
    """The static ranked tensor type of ``value``, or a verifier error naming it."""
    t = value.type
    if not isinstance(t, TensorType):
        raise VerifyException(f"'{op.name}' {what} must be a ranked tensor, got {type_name(t)}")
    shape = t.get_shape()
    if any(d == DYNAMIC_INDEX or d < 0 for d in shape):
        raise VerifyException(
            f"'{op.name}' {what} has a dynamic dimension ({type_name(t)}); "
            "fusec needs static shapes"
        )
    elements = 1
    for d in shape:
        elements *= d
    if elements > MAX_ELEMENTS:
        raise VerifyException(
            f"'{op.name}' {what} ({type_name(t)}) has {elements:.3g} elements; fusec indexes "
            "at most 2^48"
        )
    return t


MAX_ELEMENTS = 1 << 48
"""The most elements a tensor may have (2^48: byte offsets of 8-byte elements stay far from
int64 overflow; 1 PiB of float32, beyond any device). Larger shapes are a verifier error, not
an overflow later in the lowering."""


def check_element_type(
    op: Operation, what: str, t: TensorType, allowed: tuple[Attribute, ...]
) -> None:
    if t.element_type not in allowed:
        names = ", ".join(type_name(a) for a in allowed)
        expected = f"one of {names}" if len(allowed) > 1 else names
        raise VerifyException(
            f"'{op.name}' {what} has element type {type_name(t.element_type)} "
            f"({type_name(t)}); expected {expected}"
        )


def check_same_element_type(op: Operation, named: Sequence[tuple[str, TensorType]]) -> None:
    first_name, first = named[0]
    for name, t in named[1:]:
        if t.element_type != first.element_type:
            raise VerifyException(
                f"'{op.name}' {name} ({type_name(t)}) must have the element type of "
                f"{first_name} ({type_name(first)})"
            )


def check_result_shape(op: Operation, result: TensorType, expected: Sequence[int]) -> None:
    if tuple(result.get_shape()) != tuple(expected):
        shape = ", ".join(str(d) for d in expected)
        raise VerifyException(
            f"'{op.name}' result type {type_name(result)} does not have the expected "
            f"shape [{shape}]"
        )


def check_axis(op: Operation, name: str, axis: int, rank: int) -> int:
    norm = normalize_axis(axis, rank)
    if norm is None:
        raise VerifyException(
            f"'{op.name}' {name} {axis} is out of range for an operand of rank {rank}"
        )
    return norm


def check_positive(op: Operation, name: str, value: float) -> None:
    if not value > 0:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        raise VerifyException(f"'{op.name}' {name} must be positive, got {shown}")


def check_choice(op: Operation, name: str, value: str, allowed: Iterable[str]) -> None:
    allowed = tuple(allowed)
    if value not in allowed:
        raise VerifyException(
            f"'{op.name}' {name} \"{value}\" is not one of " + ", ".join(f'"{a}"' for a in allowed)
        )


def check_vector(op: Operation, what: str, t: TensorType, size: int) -> None:
    """``t`` is a 1-D tensor of ``size`` elements (a norm's gamma or beta, a bias)."""
    if tuple(t.get_shape()) != (size,):
        raise VerifyException(
            f"'{op.name}' {what} ({type_name(t)}) must be a 1-D tensor of {size} elements"
        )


def broadcast_or_fail(op: Operation, named: Sequence[tuple[str, TensorType]]) -> tuple[int, ...]:
    shape = broadcast_shapes(*(t.get_shape() for _, t in named))
    if shape is None:
        parts = " and ".join(f"{n} ({type_name(t)})" for n, t in named)
        raise VerifyException(f"'{op.name}' operands do not broadcast: {parts}")
    return shape


def matmul_shape(
    op: Operation, a: TensorType, b: TensorType, a_name: str = "lhs", b_name: str = "rhs"
) -> tuple[int, ...]:
    """Result shape of ``a @ b`` with ``a: [..., M, K]`` and ``b: [K, N] | [..., K, N]``."""
    sa, sb = a.get_shape(), b.get_shape()
    if len(sa) < 2:
        raise VerifyException(
            f"'{op.name}' {a_name} ({type_name(a)}) must have rank >= 2, as [..., M, K]"
        )
    if len(sb) == 2:
        lead = tuple(sa[:-2])
    elif len(sb) == len(sa) and tuple(sb[:-2]) == tuple(sa[:-2]):
        lead = tuple(sa[:-2])
    else:
        raise VerifyException(
            f"'{op.name}' {b_name} ({type_name(b)}) must be [K, N] or have the leading "
            f"dimensions of {a_name} ({type_name(a)})"
        )
    if sa[-1] != sb[-2]:
        raise VerifyException(
            f"'{op.name}' contraction dimensions differ: {a_name} ({type_name(a)}) has K = "
            f"{sa[-1]}, {b_name} ({type_name(b)}) has K = {sb[-2]}"
        )
    if sa[-1] == 0:
        raise VerifyException(
            f"'{op.name}' contraction dimension K is 0 ({a_name} {type_name(a)}, {b_name} "
            f"{type_name(b)}); fusec's matmul needs K >= 1"
        )
    return (*lead, sa[-2], sb[-1])
