"""numpy semantics of the scalar ``arith``/``math`` bodies of ``fused.elementwise`` and
``fused.reduce``.

A body is evaluated ONCE on whole arrays: each block argument is bound to its input's array
(numpy broadcasting does the rest), and each scalar op maps to a numpy function in
``SCALAR_IMPLS``, keyed by op name. Every op's result is rounded to its declared scalar type
(``f32`` results to float32, ``i32`` results wrap to 32 bits), so a body computes what the
equivalent chain of ``nn`` ops computes.

Integers are signless; an op's signedness comes from its name (``divsi`` vs ``divui``).
``arith.divsi``/``remsi`` truncate toward zero (C); a zero divisor gives 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from fusec.dialects import fused
from fusec.dialects.common import bool_prop, str_prop
from fusec.reference.ops import (
    Array,
    OpImpl,
    UnsupportedOpError,
    erf,
    int_div,
    location_prefix,
    compute_dtype,
    matmul,
    maximum,
    minimum,
    numpy_dtype,
    round_to_type,
    reduce,
    rsqrt,
    wide,
)
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

ScalarImpl = Callable[[Operation, Sequence[Array]], Array]


def to_scalar_type(x: Array, t: Attribute) -> Array:
    """``x`` rounded (floats) or wrapped (integers, ``i1`` modulo 2) to the type ``t``."""
    dtype = compute_dtype(t)
    x = np.asarray(x)
    if dtype == np.bool_ and x.dtype != np.bool_:
        return (x.astype(np.int64) & 1).astype(np.bool_)
    return round_to_type(x, t)


def signed(x: Array) -> Array:
    """``x`` as float64 or int64 values; an ``i1`` true is -1, as a signed 1-bit integer."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return np.where(x, -1, 0).astype(np.int64)
    return wide(x)


def width(op: Operation, index: int = 0) -> int:
    t = op.operands[index].type
    assert isinstance(t, IntegerType)
    return t.width.data


def unsigned(x: Array, bits: int) -> Array:
    """The unsigned value of a ``bits``-wide signless integer."""
    if bits >= 64:
        return np.asarray(x).astype(np.uint64)
    return np.asarray(x).astype(np.int64) & ((1 << bits) - 1)


def binary(fn: Callable[[Array, Array], Array]) -> ScalarImpl:
    return lambda op, a: fn(signed(a[0]), signed(a[1]))


def unary(fn: Callable[[Array], Array]) -> ScalarImpl:
    return lambda op, a: fn(signed(a[0]))


def unsigned_binary(fn: Callable[[Array, Array], Array]) -> ScalarImpl:
    return lambda op, a: fn(unsigned(a[0], width(op)), unsigned(a[1], width(op)))


def round_half_away(x: Array) -> Array:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def ipowi(a: Array, b: Array) -> Array:
    """Integer power; a negative exponent gives ``1/a^-b`` truncated (0 unless ``|a| == 1``)."""
    positive = np.power(a, np.maximum(b, 0))
    odd = (np.abs(b) % 2) == 1
    negative = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(b >= 0, positive, negative)


def ceil_div(a: Array, b: Array) -> Array:
    q = int_div(a, b)
    return q + ((q * b != a) & ((a > 0) == (b > 0)) & (b != 0))


def floor_div(a: Array, b: Array) -> Array:
    return np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b)))


def remainder(a: Array, b: Array) -> Array:
    """C remainder (sign of the dividend); a zero divisor gives 0."""
    return np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b)))


def run_constant(op: Operation, args: Sequence[Array]) -> Array:
    value = op.properties.get("value")
    if value is None:  # not ``or``: IntegerAttr(0) is falsy
        value = op.attributes.get("value")
    if isinstance(value, FloatAttr | IntegerAttr):
        return np.asarray(value.value.data)
    if isinstance(value, DenseIntOrFPElementsAttr):
        return np.array(value.get_values()).reshape(value.get_shape())
    raise UnsupportedOpError(f"the numpy reference cannot read the arith.constant value {value}")


def ordered(a: Array, b: Array) -> Array:
    return ~np.isnan(a) & ~np.isnan(b)


CMPF: dict[str, Callable[[Array, Array], Array]] = {
    "false": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    "oeq": lambda a, b: ordered(a, b) & (a == b),
    "ogt": lambda a, b: ordered(a, b) & (a > b),
    "oge": lambda a, b: ordered(a, b) & (a >= b),
    "olt": lambda a, b: ordered(a, b) & (a < b),
    "ole": lambda a, b: ordered(a, b) & (a <= b),
    "one": lambda a, b: ordered(a, b) & (a != b),
    "ord": ordered,
    "ueq": lambda a, b: ~ordered(a, b) | (a == b),
    "ugt": lambda a, b: ~ordered(a, b) | (a > b),
    "uge": lambda a, b: ~ordered(a, b) | (a >= b),
    "ult": lambda a, b: ~ordered(a, b) | (a < b),
    "ule": lambda a, b: ~ordered(a, b) | (a <= b),
    "une": lambda a, b: ~ordered(a, b) | (a != b),
    "uno": lambda a, b: ~ordered(a, b),
    "true": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
}

CMPI: dict[str, Callable[[Array, Array], Array]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "slt": np.less,
    "sle": np.less_equal,
    "sgt": np.greater,
    "sge": np.greater_equal,
    "ult": np.less,
    "ule": np.less_equal,
    "ugt": np.greater,
    "uge": np.greater_equal,
}


def run_cmpf(op: Operation, args: Sequence[Array]) -> Array:
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.properties["predicate"].value.data]  # type: ignore
    return CMPF[predicate](signed(args[0]), signed(args[1]))


def run_cmpi(op: Operation, args: Sequence[Array]) -> Array:
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.properties["predicate"].value.data]  # type: ignore
    a, b = signed(args[0]), signed(args[1])
    if predicate.startswith("u"):
        a, b = unsigned(a, width(op)), unsigned(b, width(op))
    return CMPI[predicate](a, b)


def run_bitcast(op: Operation, args: Sequence[Array]) -> Array:
    source = numpy_dtype(op.operands[0].type)
    return np.asarray(args[0], source).view(numpy_dtype(op.results[0].type))


def to_int(x: Array) -> Array:
    return np.trunc(signed(x)).astype(np.int64)


def fptosi(op: Operation, args: Sequence[Array]) -> Array:
    """``arith.fptosi`` as fusec defines it: toward zero, saturated to the result's range, NaN
    gives 0 (MLIR leaves the out-of-range case poison; see ``fusec.dialects.scalar_ops``)."""
    t = op.results[0].type
    assert isinstance(t, IntegerType)
    bits = t.width.data
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    x = signed(args[0])
    return np.where(np.isnan(x), 0.0, np.clip(np.trunc(x), low, high)).astype(np.int64)


SCALAR_IMPLS: dict[str, ScalarImpl] = {
    # arith, floating point
    "arith.addf": binary(np.add),
    "arith.subf": binary(np.subtract),
    "arith.mulf": binary(np.multiply),
    "arith.divf": binary(np.divide),
    "arith.remf": binary(np.fmod),
    "arith.negf": unary(np.negative),
    "arith.maximumf": binary(maximum),
    "arith.minimumf": binary(minimum),
    "arith.maxnumf": binary(np.fmax),
    "arith.minnumf": binary(np.fmin),
    "arith.cmpf": run_cmpf,
    # arith, integer
    "arith.addi": binary(np.add),
    "arith.subi": binary(np.subtract),
    "arith.muli": binary(np.multiply),
    "arith.divsi": binary(int_div),
    "arith.divui": unsigned_binary(floor_div),
    "arith.ceildivsi": binary(ceil_div),
    "arith.ceildivui": unsigned_binary(ceil_div),
    "arith.floordivsi": binary(floor_div),
    "arith.remsi": binary(remainder),
    "arith.remui": unsigned_binary(remainder),
    "arith.andi": binary(np.bitwise_and),
    "arith.ori": binary(np.bitwise_or),
    "arith.xori": binary(np.bitwise_xor),
    "arith.maxsi": binary(np.maximum),
    "arith.minsi": binary(np.minimum),
    "arith.maxui": unsigned_binary(np.maximum),
    "arith.minui": unsigned_binary(np.minimum),
    "arith.shli": binary(np.left_shift),
    "arith.shrsi": binary(np.right_shift),
    "arith.shrui": lambda op, a: np.right_shift(unsigned(a[0], width(op)), signed(a[1])),
    "arith.cmpi": run_cmpi,
    # arith, other
    "arith.select": lambda op, a: np.where(a[0], a[1], a[2]),
    "arith.constant": run_constant,
    # arith, conversions (to_scalar_type rounds or wraps to the result type)
    "arith.extf": unary(lambda x: x),
    "arith.truncf": unary(lambda x: x),
    "arith.sitofp": unary(lambda x: x.astype(np.float64)),
    "arith.uitofp": lambda op, a: unsigned(a[0], width(op)).astype(np.float64),
    "arith.fptosi": fptosi,
    "arith.fptoui": lambda op, a: to_int(a[0]),
    "arith.extsi": unary(lambda x: x),
    "arith.extui": lambda op, a: unsigned(a[0], width(op)),
    "arith.trunci": unary(lambda x: x),
    "arith.index_cast": unary(lambda x: x),
    "arith.bitcast": run_bitcast,
    # math
    "math.absf": unary(np.abs),
    "math.absi": unary(np.abs),
    "math.ceil": unary(np.ceil),
    "math.floor": unary(np.floor),
    "math.trunc": unary(np.trunc),
    "math.round": unary(round_half_away),
    "math.roundeven": unary(np.rint),
    "math.exp": unary(np.exp),
    "math.exp2": unary(np.exp2),
    "math.expm1": unary(np.expm1),
    "math.log": unary(np.log),
    "math.log2": unary(np.log2),
    "math.log10": unary(np.log10),
    "math.log1p": unary(np.log1p),
    "math.sqrt": unary(np.sqrt),
    "math.rsqrt": unary(rsqrt),
    "math.cbrt": unary(np.cbrt),
    "math.erf": unary(erf),
    "math.tanh": unary(np.tanh),
    "math.sinh": unary(np.sinh),
    "math.cosh": unary(np.cosh),
    "math.sin": unary(np.sin),
    "math.cos": unary(np.cos),
    "math.tan": unary(np.tan),
    "math.asin": unary(np.arcsin),
    "math.acos": unary(np.arccos),
    "math.atan": unary(np.arctan),
    "math.asinh": unary(np.arcsinh),
    "math.acosh": unary(np.arccosh),
    "math.atanh": unary(np.arctanh),
    "math.atan2": binary(np.arctan2),
    "math.copysign": binary(np.copysign),
    "math.powf": binary(np.power),
    "math.fpowi": lambda op, a: np.power(signed(a[0]), signed(a[1]).astype(np.float64)),
    "math.ipowi": binary(ipowi),
    "math.fma": lambda op, a: signed(a[0]) * signed(a[1]) + signed(a[2]),
}


def run_body(block: Block, inputs: Sequence[Array]) -> Array:
    """Evaluates a scalar body once on whole arrays; returns the yielded array (unbroadcast)."""
    return run_body_values(block, inputs)[0]


def run_body_values(
    block: Block, inputs: Sequence[Array], row: Sequence[int] | None = None, axis: int = -1
) -> list[Array]:
    """Evaluates a scalar body once on whole arrays; returns every yielded array (unbroadcast).

    With ``row`` (a ``fused.row_reduce``'s result shape), a ``fused.reduce_value`` is its
    operand broadcast to ``row`` and reduced over ``axis`` (default the last), keeping it."""
    values: dict[SSAValue, Array] = dict(zip(block.args, inputs, strict=True))
    for op in block.ops:
        if isinstance(op, fused.YieldOp):
            return [values[v] for v in op.values]
        if isinstance(op, fused.ReduceValueOp) and row is not None:
            full = np.broadcast_to(values[op.value], tuple(row))
            result = reduce(wide(full), str_prop(op, "kind"), [axis % len(row)], True)
        else:
            impl = SCALAR_IMPLS.get(op.name)
            if impl is None:
                raise UnsupportedOpError(
                    f"{location_prefix(op)}the numpy reference has no implementation of "
                    f"'{op.name}'"
                )
            result = impl(op, [values[v] for v in op.operands])
        values[op.results[0]] = to_scalar_type(result, op.results[0].type)
    raise UnsupportedOpError("a fused body must end in fused.yield")


def prologue(op: fused.RegionOp, args: Sequence[Array]) -> Array:
    """The body's value at every element of the inputs' broadcast shape."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    return np.broadcast_to(run_body(op.body.block, args), shape)


def run_elementwise(op: Operation, args: Sequence[Array]) -> Array | list[Array]:
    assert isinstance(op, fused.ElementwiseOp)
    shape = op.results[0].type.get_shape()  # type: ignore[attr-defined]
    values = [np.broadcast_to(v, shape) for v in run_body_values(op.body.block, args)]
    return values[0] if len(values) == 1 else values


def run_reduce(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, fused.ReduceOp)
    return reduce(
        wide(prologue(op, args)), str_prop(op, "kind"), op.reduced_axes(), bool_prop(op, "keepdims")
    )


def run_row_reduce(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, fused.RowReduceOp)
    row = tuple(op.result.type.get_shape())  # type: ignore[attr-defined]
    (value,) = run_body_values(op.body.block, args, row, op.row_axis())
    return np.broadcast_to(value, row)


def run_matmul_epilogue(op: Operation, args: Sequence[Array]) -> Array:
    assert isinstance(op, fused.MatmulEpilogueOp)
    product = to_scalar_type(matmul(wide(args[0]), wide(args[1])), op.x.type.element_type)  # type: ignore[attr-defined]
    (value,) = run_body_values(op.body.block, [product, *args[2:]])
    return np.broadcast_to(value, tuple(op.result.type.get_shape()))  # type: ignore[attr-defined]


REGION_IMPLS: dict[type[Operation], OpImpl] = {
    fused.ElementwiseOp: run_elementwise,
    fused.ReduceOp: run_reduce,
    fused.RowReduceOp: run_row_reduce,
    fused.MatmulEpilogueOp: run_matmul_epilogue,
}
