"""The ONNX op converters, each a function that emits ``nn`` ops for one node, and the builders
they share (`onnx_table` maps op types to them).

A converter takes the `Importer` (which builds IR and turns constants into IR values), the
node and its inputs (an ``SSAValue``, a numpy array known at import time, or None for an
omitted optional input) and returns one value per node output. Operands that only shape the
computation (Reshape's shape, Slice's starts, the axes of a reduction...) must be constants
at import time; since shapes are static, an export's shape subgraphs always are (see
`onnx_simplify`). A node whose op type is not in the table, or whose attributes ask for what
a converter does not do, is a one-line `OnnxImportError` naming the node and op type.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32, i1
from xdsl.ir import Attribute, SSAValue

from fusec.dialects import nn
from fusec.dialects.common import broadcast_shapes
from fusec.frontends.onnx_import import (
    ONNX_TYPE_NAMES,
    ONNX_TYPES,
    Importer,
    OnnxImportError,
    Value,
    element_of,
    numpy_of_ir,
    onnx_types,
    op_version_error,
    shape_of,
)

Converter = Callable[[Importer, object, list[Value | None]], list[Value]]


# --- node attributes and constant operands -------------------------------------------------------


def attribute(node: object, name: str, default: object = None) -> object:
    from onnx import helper

    for attr in node.attribute:  # type: ignore[attr-defined]
        if attr.name == name:
            return helper.get_attribute_value(attr)
    return default


def constant(imp: Importer, value: Value | None, what: str) -> np.ndarray:
    """An operand that must be known at import time."""
    if value is None:
        raise imp.error(f"{what} is missing")
    if not isinstance(value, np.ndarray):
        return imp.input_value(value, what)
    return value


def ints_of(imp: Importer, value: Value | None, what: str) -> list[int]:
    return [int(x) for x in constant(imp, value, what).reshape(-1)]


def axes_operand(imp: Importer, node: object, args: list[Value | None], index: int,
                 what: str = "axes") -> list[int] | None:
    """Axes given as an attribute (older opsets) or as input ``index`` (newer ones)."""
    if len(args) > index and args[index] is not None:
        return ints_of(imp, args[index], what)
    axes = attribute(node, "axes")
    return None if axes is None else [int(a) for a in axes]  # type: ignore[union-attr]


def norm_axis(imp: Importer, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise imp.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


# --- building blocks -----------------------------------------------------------------------------


def tensor_type(elem: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(elem, list(shape))


def broadcast(imp: Importer, *values: SSAValue) -> tuple[int, ...]:
    shape = broadcast_shapes(*(shape_of(v) for v in values))
    if shape is None:
        listed = ", ".join(str(list(shape_of(v))) for v in values)
        raise imp.error(f"operand shapes {listed} do not broadcast")
    return shape


def same_type(imp: Importer, values: Sequence[SSAValue]) -> None:
    types = {str(element_of(v)) for v in values}
    if len(types) > 1:
        raise imp.error(f"operands of different element types ({', '.join(sorted(types))})")


def reshape(imp: Importer, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    if tuple(shape) == shape_of(x):
        return x
    return imp.emit(nn.ReshapeOp(x, tensor_type(element_of(x), shape)))


def splat(imp: Importer, value: float | int | bool, elem: Attribute,
          shape: Sequence[int] = ()) -> SSAValue:
    t = tensor_type(elem, shape)
    item = bool(value) if elem == i1 else value
    return imp.emit(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [item])))


def expand(imp: Importer, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    """``x`` broadcast to ``shape``: ``where(true, x, x)`` (which fuses as a copy)."""
    if tuple(shape) == shape_of(x):
        return x
    true = splat(imp, True, i1, shape)
    return imp.emit(nn.WhereOp(true, x, x, tensor_type(element_of(x), shape)))


def binary(cls: type[nn.BinaryOp]) -> Converter:
    def convert(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
        lhs, rhs = imp.tensor(args[0]), imp.tensor(args[1])  # type: ignore[arg-type]
        same_type(imp, [lhs, rhs])
        if element_of(lhs) not in cls.ALLOWED_TYPES:
            raise imp.error(f"{element_of(lhs)} operands are not supported")
        shape = broadcast(imp, lhs, rhs)
        return [imp.emit(cls(lhs, rhs, tensor_type(element_of(lhs), shape)))]

    return convert


def unary(cls: type[nn.UnaryOp]) -> Converter:
    def convert(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
        x = imp.tensor(args[0])  # type: ignore[arg-type]
        if element_of(x) not in cls.ALLOWED_TYPES:
            raise imp.error(f"{element_of(x)} operands are not supported")
        return [imp.emit(cls(x))]

    return convert


def compare(predicate: str) -> Converter:
    def convert(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
        lhs, rhs = imp.tensor(args[0]), imp.tensor(args[1])  # type: ignore[arg-type]
        same_type(imp, [lhs, rhs])
        if element_of(lhs) == i1:  # bools: equal is "not xor"
            if predicate != "eq":
                raise imp.error("ordering comparisons of bool tensors are not supported")
            shape = broadcast(imp, lhs, rhs)
            return [where(imp, lhs, rhs, logical_not(imp, rhs, shape), shape)]
        shape = broadcast(imp, lhs, rhs)
        return [imp.emit(nn.CmpOp(lhs, rhs, predicate, tensor_type(i1, shape)))]

    return convert


def where(imp: Importer, cond: SSAValue, a: SSAValue, b: SSAValue,
          shape: Sequence[int] | None = None) -> SSAValue:
    shape = shape if shape is not None else broadcast(imp, cond, a, b)
    return imp.emit(nn.WhereOp(cond, a, b, tensor_type(element_of(a), shape)))


def logical_not(imp: Importer, x: SSAValue, shape: Sequence[int] | None = None) -> SSAValue:
    return where(imp, x, splat(imp, False, i1), splat(imp, True, i1),
                 shape if shape is not None else shape_of(x))


def bools(imp: Importer, args: list[Value | None]) -> tuple[SSAValue, SSAValue, tuple[int, ...]]:
    a, b = imp.tensor(args[0]), imp.tensor(args[1])  # type: ignore[arg-type]
    if element_of(a) != i1 or element_of(b) != i1:
        raise imp.error("operands must be bool")
    return a, b, broadcast(imp, a, b)


# --- elementwise ---------------------------------------------------------------------------------


def convert_and(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    a, b, shape = bools(imp, args)
    return [where(imp, a, b, splat(imp, False, i1), shape)]


def convert_or(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    a, b, shape = bools(imp, args)
    return [where(imp, a, splat(imp, True, i1), b, shape)]


def convert_xor(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    a, b, shape = bools(imp, args)
    return [where(imp, a, logical_not(imp, b), b, shape)]


def convert_not(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    if element_of(x) != i1:
        raise imp.error("operand must be bool")
    return [logical_not(imp, x)]


def convert_where(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    cond, a, b = (imp.tensor(v) for v in args[:3])  # type: ignore[arg-type]
    same_type(imp, [a, b])
    return [where(imp, cond, a, b)]


def convert_isnan(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    return [imp.emit(nn.CmpOp(x, x, "ne", tensor_type(i1, shape_of(x))))]


def convert_isinf(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    pos, neg = attribute(node, "detect_positive", 1), attribute(node, "detect_negative", 1)
    shape = shape_of(x)
    inf = splat(imp, math.inf, element_of(x))
    if pos and neg:
        return [imp.emit(nn.CmpOp(imp.emit(nn.AbsOp(x)), inf, "eq", tensor_type(i1, shape)))]
    if pos:
        return [imp.emit(nn.CmpOp(x, inf, "eq", tensor_type(i1, shape)))]
    if neg:
        minus = splat(imp, -math.inf, element_of(x))
        return [imp.emit(nn.CmpOp(x, minus, "eq", tensor_type(i1, shape)))]
    return [splat(imp, False, i1, shape)]


def convert_cast(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    to = int(attribute(node, "to"))  # type: ignore[arg-type]
    if to not in onnx_types():
        kind = ONNX_TYPE_NAMES.get(to, f"element type {to}")
        raise imp.error(f"cast to {kind} is not supported")
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    target = ONNX_TYPES[to][1]
    if element_of(x) == target:
        return [x]
    return [imp.emit(nn.CastOp(x, tensor_type(target, shape_of(x))))]


def convert_cast_like(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x, like = imp.tensor(args[0]), imp.tensor(args[1])  # type: ignore[arg-type]
    if element_of(x) == element_of(like):
        return [x]
    return [imp.emit(nn.CastOp(x, tensor_type(element_of(like), shape_of(x))))]


def convert_identity(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    return [args[0]]  # type: ignore[list-item]


def convert_dropout(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """Dropout that drops nothing: in inference mode, or in training mode at ratio 0 (else it
    is random, and refused). Its mask output is then all true."""
    training = args[2] if len(args) > 2 else None
    if training is not None and bool(constant(imp, training, "training_mode").reshape(-1)[0]):
        ratio = args[1] if len(args) > 1 and args[1] is not None else np.float32(0.5)
        if float(constant(imp, ratio, "ratio").reshape(-1)[0]) != 0.0:
            raise imp.error("Dropout in training mode is not supported (it is random) unless "
                            "its ratio is 0")
    x = args[0]
    if len(node.output) < 2 or not node.output[1]:  # type: ignore[attr-defined]
        return [x]  # type: ignore[list-item]
    shape = x.shape if isinstance(x, np.ndarray) else shape_of(x)  # type: ignore[union-attr]
    return [x, splat(imp, True, i1, shape)]  # type: ignore[list-item]


def convert_reciprocal(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    one = splat(imp, 1.0, element_of(x))
    return [imp.emit(nn.DivOp(one, x, x.type))]


def convert_pow(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    exponent = args[1]
    if isinstance(exponent, np.ndarray) and exponent.size == 1:
        e = float(exponent.reshape(-1)[0])
        shape = broadcast_shapes(shape_of(x), exponent.shape)
        if e == 2.0 and shape == shape_of(x):
            return [imp.emit(nn.MulOp(x, x, x.type))]
        if e == 0.5 and shape == shape_of(x):
            return [imp.emit(nn.SqrtOp(x))]
        if e == 1.0 and shape == shape_of(x):
            return [x]
        exponent = exponent.astype(numpy_of_ir(element_of(x)))
    if isinstance(exponent, np.ndarray):
        exponent = exponent.astype(numpy_of_ir(element_of(x)))
    else:  # an exponent of another type (Pow allows it): computed in the base's type
        e_value = imp.tensor(exponent)  # type: ignore[arg-type]
        if element_of(e_value) != element_of(x):
            exponent = imp.emit(nn.CastOp(e_value, tensor_type(element_of(x),
                                                               shape_of(e_value))))
    return binary(nn.PowOp)(imp, node, [x, exponent])


def convert_variadic(cls: type[nn.BinaryOp]) -> Converter:
    def convert(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
        result: Value = args[0]  # type: ignore[assignment]
        for other in args[1:]:
            result = binary(cls)(imp, node, [result, other])[0]
        return [result]

    return convert


def convert_clip(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    if len(args) > 1 and args[1] is not None:
        x = binary(nn.MaxOp)(imp, node, [x, args[1]])[0]  # type: ignore[assignment]
    if len(args) > 2 and args[2] is not None:
        x = binary(nn.MinOp)(imp, node, [x, args[2]])[0]  # type: ignore[assignment]
    return [x]


def convert_gelu(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    approximate = attribute(node, "approximate", b"none")
    if isinstance(approximate, bytes):
        approximate = approximate.decode()
    if approximate not in ("none", "tanh"):
        raise imp.error(f"approximate '{approximate}' is not supported")
    return [imp.emit(nn.GeluOp(x, str(approximate)))]


# --- contraction ---------------------------------------------------------------------------------


def matmul(imp: Importer, a: SSAValue, b: SSAValue) -> SSAValue:
    """numpy's ``matmul``: a 1-D operand gets a dimension, batch dimensions broadcast."""
    same_type(imp, [a, b])
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise imp.error("MatMul of a scalar")
    a2 = a if len(sa) >= 2 else reshape(imp, a, (1, *sa))
    b2 = b if len(sb) >= 2 else reshape(imp, b, (*sb, 1))
    sa2, sb2 = shape_of(a2), shape_of(b2)
    if sa2[-1] != sb2[-2]:
        raise imp.error(f"contraction dimensions differ: {list(sa)} @ {list(sb)}")
    if len(sb2) == 2:  # [..., M, K] @ [K, N]
        lhs, rhs = a2, b2
    else:
        lead = broadcast_shapes(sa2[:-2], sb2[:-2])
        if lead is None:
            raise imp.error(f"batch dimensions do not broadcast: {list(sa)} @ {list(sb)}")
        lhs = expand(imp, a2, (*lead, *sa2[-2:]))
        rhs = expand(imp, b2, (*lead, *sb2[-2:]))
    out_shape = (*shape_of(lhs)[:-2], sa2[-2], sb2[-1])
    result = imp.emit(nn.MatmulOp(lhs, rhs, tensor_type(element_of(a), out_shape)))
    final = list(out_shape)
    if len(sb) == 1:
        final.pop(-1)
    if len(sa) == 1:
        final.pop(-2 if len(sb) != 1 else -1)
    return reshape(imp, result, final)


def convert_matmul(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    a, b = imp.tensor(args[0]), imp.tensor(args[1], node.input[1])  # type: ignore
    return [matmul(imp, a, b)]


def convert_gemm(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    alpha = float(attribute(node, "alpha", 1.0))  # type: ignore[arg-type]
    beta = float(attribute(node, "beta", 1.0))  # type: ignore[arg-type]
    operands: list[Value] = []
    for index, flag in ((0, "transA"), (1, "transB")):
        value = args[index]
        if attribute(node, flag, 0):
            if isinstance(value, np.ndarray):
                value = np.ascontiguousarray(value.T)
            else:
                v = imp.tensor(value)  # type: ignore[arg-type]
                s = shape_of(v)
                value = imp.emit(nn.TransposeOp(v, [1, 0], tensor_type(element_of(v), s[::-1])))
        operands.append(value)  # type: ignore[arg-type]
    a = imp.tensor(operands[0])
    b = imp.tensor(operands[1], node.input[1])  # type: ignore[attr-defined]
    y = matmul(imp, a, b)
    if alpha != 1.0:
        y = imp.emit(nn.MulOp(y, splat(imp, alpha, element_of(y)), y.type))
    if len(args) > 2 and args[2] is not None and beta != 0.0:
        c = args[2]
        if isinstance(c, np.ndarray) and beta != 1.0:
            c, beta = c * beta, 1.0
        cv = imp.tensor(c, node.input[2])  # type: ignore[attr-defined]
        if beta != 1.0:
            cv = imp.emit(nn.MulOp(cv, splat(imp, beta, element_of(cv)), cv.type))
        y = binary(nn.AddOp)(imp, node, [y, cv])[0]  # type: ignore[assignment]
    return [y]


# --- shape and data movement ---------------------------------------------------------------------


def reshape_target(imp: Importer, shape_in: Sequence[int], spec: Sequence[int],
                   allowzero: bool) -> list[int]:
    """Reshape's ``shape`` operand resolved: 0 copies the input's dimension, -1 is inferred."""
    out = [
        shape_in[i] if (d == 0 and not allowzero and i < len(shape_in)) else d
        for i, d in enumerate(spec)
    ]
    if out.count(-1) > 1:
        raise imp.error(f"shape {list(spec)} has more than one -1")
    total = math.prod(shape_in)
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise imp.error(f"cannot reshape {list(shape_in)} to {list(spec)}")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise imp.error(f"cannot reshape {list(shape_in)} to {list(spec)}")
    return out


def convert_reshape(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    spec = ints_of(imp, args[1], "shape")
    target = reshape_target(imp, shape_of(x), spec, bool(attribute(node, "allowzero", 0)))
    return [reshape(imp, x, target)]


def convert_flatten(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    axis = int(attribute(node, "axis", 1))  # type: ignore[arg-type]
    axis = axis + len(shape) if axis < 0 else axis
    return [reshape(imp, x, (math.prod(shape[:axis]), math.prod(shape[axis:])))]


def convert_squeeze(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    axes = axes_operand(imp, node, args, 1)
    if axes is None:
        keep = [d for d in shape if d != 1]
    else:
        drop = {norm_axis(imp, a, len(shape)) for a in axes}
        keep = [d for i, d in enumerate(shape) if i not in drop]
    return [reshape(imp, x, keep)]


def convert_unsqueeze(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = list(shape_of(x))
    axes = axes_operand(imp, node, args, 1)
    if axes is None:
        raise imp.error("axes are missing")
    rank = len(shape) + len(axes)
    for a in sorted(norm_axis(imp, a, rank) for a in axes):
        shape.insert(a, 1)
    return [reshape(imp, x, shape)]


def convert_transpose(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    perm = attribute(node, "perm")
    order = list(range(len(shape)))[::-1] if perm is None else [int(p) for p in perm]  # type: ignore
    if order == list(range(len(shape))):
        return [x]
    t = tensor_type(element_of(x), [shape[p] for p in order])
    return [imp.emit(nn.TransposeOp(x, order, t))]


def narrow(imp: Importer, x: SSAValue, axis: int, start: int, length: int) -> SSAValue:
    if start == 0 and length == shape_of(x)[axis]:
        return x
    if length <= 0:
        raise imp.error(f"empty slice of axis {axis} of {list(shape_of(x))}")
    return imp.emit(nn.NarrowOp(x, axis, start, length))


def convert_slice(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    starts = ints_of(imp, args[1], "starts")
    ends = ints_of(imp, args[2], "ends")
    axes = ints_of(imp, args[3], "axes") if len(args) > 3 and args[3] is not None else list(
        range(len(starts)))
    steps = ints_of(imp, args[4], "steps") if len(args) > 4 and args[4] is not None else [1] * len(
        starts)
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        if step == 0:
            raise imp.error("slice step 0")
        axis = norm_axis(imp, axis, len(shape))
        dim = shape[axis]
        begin, stop, _ = slice(start, end).indices(dim)
        if step == 1:
            x = narrow(imp, x, axis, begin, max(stop - begin, 0))
            continue
        picked = range(*slice(start, end, step).indices(dim))  # numpy's (and ONNX's) clamping
        if not picked:
            raise imp.error(f"empty slice of axis {axis} of {list(shape_of(x))}")
        x = take(imp, x, axis, list(picked))
    return [x]


def take(imp: Importer, x: SSAValue, axis: int, indices: Sequence[int]) -> SSAValue:
    """``x`` at constant ``indices`` along ``axis``: one ``nn.gather``."""
    shape = list(shape_of(x))
    shape[axis] = len(indices)
    table = imp.tensor(np.array(indices, np.int64))
    return imp.emit(nn.GatherOp(x, table, axis, tensor_type(element_of(x), shape)))


def convert_tile(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """Tile as a concat of copies along each repeated axis."""
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    repeats = ints_of(imp, args[1], "repeats")
    if len(repeats) != len(shape_of(x)) or any(r < 1 for r in repeats):
        raise imp.error(f"repeats {repeats} do not fit rank {len(shape_of(x))} (each >= 1)")
    for axis, count in enumerate(repeats):
        if count > 1:
            shape = list(shape_of(x))
            shape[axis] *= count
            x = imp.emit(nn.ConcatOp([x] * count, axis, tensor_type(element_of(x), shape)))
    return [x]


def convert_trilu(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """Trilu as ``where(triangle, x, 0)`` with the triangle a constant."""
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    if len(shape) < 2:
        raise imp.error("the input must have at least 2 dimensions")
    k = ints_of(imp, args[1], "k")[0] if len(args) > 1 and args[1] is not None else 0
    rows, cols = np.arange(shape[-2])[:, None], np.arange(shape[-1])[None, :]
    keep = (cols - rows >= k) if attribute(node, "upper", 1) else (cols - rows <= k)
    zero = splat(imp, False if element_of(x) == i1 else 0, element_of(x))
    return [where(imp, imp.tensor(keep), x, zero, shape)]


def convert_split(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    axis = norm_axis(imp, int(attribute(node, "axis", 0)), len(shape))  # type: ignore[arg-type]
    outputs = len(node.output)  # type: ignore[attr-defined]
    if len(args) > 1 and args[1] is not None:
        sizes = ints_of(imp, args[1], "split")
    elif attribute(node, "split") is not None:
        sizes = [int(s) for s in attribute(node, "split")]  # type: ignore[union-attr]
    else:
        count = int(attribute(node, "num_outputs", outputs))  # type: ignore[arg-type]
        chunk = -(-shape[axis] // count)
        sizes = [min(chunk, shape[axis] - i * chunk) for i in range(count)]
    if sum(sizes) != shape[axis]:
        raise imp.error(f"split sizes {sizes} do not add up to dimension {shape[axis]}")
    results: list[Value] = []
    start = 0
    for size in sizes:
        results.append(narrow(imp, x, axis, start, size))
        start += size
    return results


def convert_concat(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    values = [imp.tensor(v) for v in args if v is not None]  # type: ignore[arg-type]
    values = [v for v in values if math.prod(shape_of(v)) != 0] or values[:1]
    same_type(imp, values)
    rank = len(shape_of(values[0]))
    axis = norm_axis(imp, int(attribute(node, "axis")), rank)  # type: ignore[arg-type]
    if len(values) == 1:
        return [values[0]]
    shape = list(shape_of(values[0]))
    shape[axis] = sum(shape_of(v)[axis] for v in values)
    return [imp.emit(nn.ConcatOp(values, axis, tensor_type(element_of(values[0]), shape)))]


def convert_expand(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    spec = ints_of(imp, args[1], "shape")
    shape = broadcast_shapes(shape_of(x), spec)
    if shape is None:
        raise imp.error(f"cannot expand {list(shape_of(x))} to {spec}")
    return [expand(imp, x, shape)]


def convert_gather(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0], node.input[0])  # type: ignore[arg-type, attr-defined]
    shape = shape_of(x)
    axis = norm_axis(imp, int(attribute(node, "axis", 0)), len(shape))  # type: ignore[arg-type]
    indices = args[1]
    if isinstance(indices, np.ndarray) and indices.dtype.kind not in "iu":
        raise imp.error("indices must be integers")  # (a float constant was truncated)
    if isinstance(indices, np.ndarray) and indices.ndim == 0:  # one index: a slice
        index = int(indices)
        if not -shape[axis] <= index < shape[axis]:
            raise imp.error(f"index {index} is out of range for axis {axis} of {list(shape)}")
        sliced = narrow(imp, x, axis, index % shape[axis], 1)
        return [reshape(imp, sliced, [d for i, d in enumerate(shape) if i != axis])]
    if isinstance(indices, np.ndarray):
        check_constant_indices(imp, indices, shape[axis], f"axis {axis} of {list(shape)}")
    idx = imp.tensor(indices)  # type: ignore[arg-type]
    if element_of(idx) == i1 or str(element_of(idx)) != "i32":
        raise imp.error("indices must be integers")
    out = [*shape[:axis], *shape_of(idx), *shape[axis + 1:]]
    return [imp.emit(nn.GatherOp(x, idx, axis, tensor_type(element_of(x), out)))]



def convert_gather_nd(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """GatherND (batch_dims 0) as one ``nn.gather`` on the data flattened over the indexed
    axes: each index tuple becomes one linear index. Constant indices (what exporters write
    for ``mask[:, None, None, :]``) are linearised at import time; others with ``nn`` ops."""
    x = imp.tensor(args[0], node.input[0])  # type: ignore[arg-type, attr-defined]
    if int(attribute(node, "batch_dims", 0)) != 0:  # type: ignore[arg-type]
        raise imp.error("batch_dims other than 0 is not supported")
    shape = shape_of(x)
    indices = args[1]
    idx_shape = indices.shape if isinstance(indices, np.ndarray) else shape_of(
        imp.tensor(indices))  # type: ignore[arg-type]
    depth = idx_shape[-1] if idx_shape else 0
    if not idx_shape or not 1 <= depth <= len(shape):
        raise imp.error(f"indices of shape {list(idx_shape)} do not index data of rank "
                        f"{len(shape)}")
    indexed, rest = shape[:depth], shape[depth:]
    strides = [math.prod(indexed[i + 1:]) for i in range(depth)]
    flat = reshape(imp, x, [math.prod(indexed), *rest])
    lead = list(idx_shape[:-1]) or [1]
    if isinstance(indices, np.ndarray):
        bounds = np.array(indexed)
        bad = (indices < -bounds) | (indices >= bounds)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise imp.error(f"index {int(indices[where])} at position {list(where)} is out of "
                            f"range for axis {where[-1]} of the data's shape {list(shape)}")
        wrapped = np.where(indices < 0, indices + bounds, indices)
        linear = imp.tensor((wrapped * np.array(strides)).sum(-1).reshape(lead))
    else:
        linear = dynamic_linear_index(imp, imp.tensor(indices), indexed,  # type: ignore
                                      strides, lead)
    gathered = imp.emit(nn.GatherOp(flat, linear, 0,
                                    tensor_type(element_of(x), [*lead, *rest])))
    return [reshape(imp, gathered, [*idx_shape[:-1], *rest])]


def check_constant_indices(imp: Importer, indices: np.ndarray, dim: int, what: str) -> None:
    """Constant indices must lie in ``[-dim, dim)``: else an import error naming the first."""
    bad = (indices < -dim) | (indices >= dim)
    if bad.any():
        where = [int(i) for i in np.argwhere(bad)[0]]
        raise imp.error(f"index {int(indices[tuple(where)])} at position {where} is out of range "
                        f"for {what}")


def convert_gather_elements(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """GatherElements as one ``nn.gather`` on the flattened data: each index becomes a linear
    index, ``wrap(index) * stride[axis]`` plus the (constant) offset of its other coordinates.
    An index outside ``[-dim, dim)`` of its axis gets the linear index ``prod(shape)``, out of
    range, so that the gather reports it rather than read another row's element."""
    x = imp.tensor(args[0], node.input[0])  # type: ignore[arg-type, attr-defined]
    idx = imp.tensor(args[1])  # type: ignore[arg-type]
    shape, idx_shape = shape_of(x), shape_of(idx)
    if str(element_of(idx)) != "i32":
        raise imp.error("indices must be integers")
    if len(idx_shape) != len(shape) or any(i > d for i, d in zip(idx_shape, shape, strict=True)
                                           if i != 1 or d != 1):
        raise imp.error(f"indices of shape {list(idx_shape)} do not fit data of shape "
                        f"{list(shape)}")
    axis = norm_axis(imp, int(attribute(node, "axis", 0)), len(shape))  # type: ignore[arg-type]
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    grids = np.indices(idx_shape)
    offset = sum(grids[i] * strides[i] for i in range(len(shape)) if i != axis)
    i32 = element_of(idx)
    t = tensor_type(i32, idx_shape)
    negative = imp.emit(nn.CmpOp(idx, splat(imp, 0, i32), "lt", tensor_type(i1, idx_shape)))
    wrapped = where(imp, negative, imp.emit(nn.AddOp(idx, splat(imp, shape[axis], i32), t)), idx)
    linear = wrapped if strides[axis] == 1 else imp.emit(
        nn.MulOp(wrapped, splat(imp, strides[axis], i32), t))
    if np.any(offset):
        linear = imp.emit(nn.AddOp(linear, imp.tensor(np.asarray(offset, np.int64)), t))
    below = imp.emit(nn.CmpOp(wrapped, splat(imp, 0, i32), "lt", tensor_type(i1, idx_shape)))
    above = imp.emit(nn.CmpOp(wrapped, splat(imp, shape[axis], i32), "ge",
                              tensor_type(i1, idx_shape)))
    out_of_range = where(imp, below, splat(imp, True, i1), above, idx_shape)
    linear = where(imp, out_of_range, splat(imp, math.prod(shape), i32), linear)
    flat = reshape(imp, x, [math.prod(shape)])
    return [imp.emit(nn.GatherOp(flat, linear, 0, tensor_type(element_of(x), idx_shape)))]


def dynamic_linear_index(imp: Importer, idx: SSAValue, dims: Sequence[int],
                         strides: Sequence[int], lead: list[int]) -> SSAValue:
    """sum_k wrap(idx[..., k]) * strides[k], with a negative index counting from the end; a
    tuple with a component outside ``[-dims[k], dims[k])`` gets the index ``prod(dims)``,
    out of range, so that the gather reports it rather than read another element."""
    if str(element_of(idx)) != "i32":
        raise imp.error("indices must be integers")
    i32 = element_of(idx)
    lead_shape = shape_of(idx)[:-1]
    total: SSAValue | None = None
    bad: SSAValue | None = None
    for k, (dim, stride) in enumerate(zip(dims, strides, strict=True)):
        column = reshape(imp, narrow(imp, idx, len(shape_of(idx)) - 1, k, 1), lead_shape)
        negative = imp.emit(nn.CmpOp(column, splat(imp, 0, i32), "lt",
                                     tensor_type(i1, lead_shape)))
        t = tensor_type(i32, lead_shape)
        shifted = imp.emit(nn.AddOp(column, splat(imp, dim, i32), t))
        column = where(imp, negative, shifted, column)
        true = splat(imp, True, i1)
        out_of_range = where(
            imp, imp.emit(nn.CmpOp(column, splat(imp, 0, i32), "lt", tensor_type(i1, lead_shape))),
            true, imp.emit(nn.CmpOp(column, splat(imp, dim, i32), "ge",
                                    tensor_type(i1, lead_shape))), lead_shape)
        bad = out_of_range if bad is None else where(imp, bad, true, out_of_range, lead_shape)
        if stride != 1:
            column = imp.emit(nn.MulOp(column, splat(imp, stride, i32), t))
        total = column if total is None else imp.emit(nn.AddOp(total, column, t))
    assert total is not None and bad is not None
    total = where(imp, bad, splat(imp, math.prod(dims), i32), total)
    return reshape(imp, total, lead)


def convert_cumsum(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """CumSum along ``axis`` as a masked sum: the axis moved last, broadcast to
    ``[..., n (outputs), n (inputs)]``, the inputs after each output (before, when ``reverse``;
    itself too, when ``exclusive``) replaced by zero, summed over the inputs."""
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    axis = norm_axis(imp, ints_of(imp, args[1], "axis")[0], len(shape))
    n = shape[axis]
    elem = element_of(x)
    order = [*(i for i in range(len(shape)) if i != axis), axis]
    last = x if axis == len(shape) - 1 else imp.emit(nn.TransposeOp(
        x, order, tensor_type(elem, [shape[i] for i in order])))
    moved = shape_of(last)
    outputs, inputs = np.arange(n)[:, None], np.arange(n)[None, :]
    exclusive, reverse = attribute(node, "exclusive", 0), attribute(node, "reverse", 0)
    keep = (inputs >= outputs) if reverse else (inputs <= outputs)
    if exclusive:
        keep &= inputs != outputs
    rows = reshape(imp, last, [*moved[:-1], 1, n])
    square = [*moved[:-1], n, n]
    masked = where(imp, imp.tensor(keep), rows, splat(imp, 0, elem), square)
    summed = imp.emit(nn.REDUCE_OPS["sum"](masked, [len(square) - 1],
                                           tensor_type(elem, moved), False))
    if axis == len(shape) - 1:
        return [summed]
    back = [order.index(i) for i in range(len(shape))]
    return [imp.emit(nn.TransposeOp(summed, back, tensor_type(elem, shape)))]


# --- normalisation, softmax, reductions ----------------------------------------------------------


def convert_softmax(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    axis = norm_axis(imp, int(attribute(node, "axis", -1)), len(shape_of(x)))  # type: ignore
    return [imp.emit(nn.SoftmaxOp(x, axis))]


def without_leading_ones(shape: Sequence[int]) -> tuple[int, ...]:
    ones = next((i for i, d in enumerate(shape) if d != 1), len(shape))
    return tuple(shape[ones:])


def normalized_rows(imp: Importer, node: object, x: SSAValue,
                    params: Sequence[tuple[Value | None, str]]) -> tuple[SSAValue, list[SSAValue]]:
    """A normalisation over the axes ``axis``.. of ``x`` (LayerNormalization,
    RMSNormalization) as one over the last axis: ``x`` as rows ``[prod(shape[:axis]),
    prod(shape[axis:])]`` (itself when ``axis`` is the last), and each parameter (scale,
    bias; None is zeros) broadcast to ``shape[axis:]`` and flattened to a vector of the row's
    width."""
    shape = shape_of(x)
    axis = norm_axis(imp, int(attribute(node, "axis", -1)), len(shape))  # type: ignore[arg-type]
    normalized = shape[axis:]
    width = math.prod(normalized)
    rows = reshape(imp, x, [math.prod(shape[:axis]), width]) if axis != len(shape) - 1 else x
    vectors = []
    for value, name in params:
        if value is None:
            value = np.zeros(width, numpy_of_ir(element_of(x)))
        v = imp.tensor(value)
        if without_leading_ones(shape_of(v)) != without_leading_ones(normalized):
            if broadcast_shapes(shape_of(v), normalized) != tuple(normalized):
                raise imp.error(f"{name} of shape {list(shape_of(v))} does not broadcast to "
                                f"the normalised shape {list(normalized)}")
            v = expand(imp, v, normalized)
        vectors.append(reshape(imp, v, [width]))
    return rows, vectors


def convert_layer_norm(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """LayerNormalization over the axes ``axis``.. (`normalized_rows`); its Mean and InvStdDev
    outputs, when asked for, computed beside it (f32 models: they are of the stash type)."""
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    shape = shape_of(x)
    eps = float(attribute(node, "epsilon", 1e-5))  # type: ignore[arg-type]
    bias = args[2] if len(args) > 2 else None
    rows, (scale, shift) = normalized_rows(imp, node, x, [(args[1], "scale"), (bias, "bias")])
    y = reshape(imp, imp.emit(nn.LayerNormOp(rows, scale, shift, -1, eps)), shape)
    if not any(name for name in node.output[1:]):  # type: ignore[attr-defined]
        return [y]
    elem = element_of(x)
    if elem != f32 or int(attribute(node, "stash_type", 1)) != 1:  # type: ignore[arg-type]
        raise imp.error("the Mean and InvStdDev outputs are supported for float32 only")
    flat = reshape(imp, rows, [math.prod(shape_of(rows)[:-1]), shape_of(rows)[-1]])  # 2-D
    column = tensor_type(elem, [shape_of(flat)[0], 1])
    mean = imp.emit(nn.REDUCE_OPS["mean"](flat, [1], column, True))
    centered = imp.emit(nn.SubOp(flat, mean, flat.type))
    variance = imp.emit(nn.REDUCE_OPS["mean"](
        imp.emit(nn.MulOp(centered, centered, flat.type)), [1], column, True))
    shifted = imp.emit(nn.AddOp(variance, splat(imp, eps, elem), column))
    inv_std = imp.emit(nn.DivOp(splat(imp, 1.0, elem), imp.emit(nn.SqrtOp(shifted)), column))
    axis = norm_axis(imp, int(attribute(node, "axis", -1)), len(shape))  # type: ignore[arg-type]
    kept = [*shape[:axis], *[1] * (len(shape) - axis)]
    return [y, reshape(imp, mean, kept), reshape(imp, inv_std, kept)]


def convert_rms_norm(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """RMSNormalization (opset 23) over the axes ``axis``..: ``nn.rms_norm`` on rows."""
    x = imp.tensor(args[0])  # type: ignore[arg-type]
    eps = float(attribute(node, "epsilon", 1e-5))  # type: ignore[arg-type]
    rows, (scale,) = normalized_rows(imp, node, x, [(args[1], "scale")])
    return [reshape(imp, imp.emit(nn.RmsNormOp(rows, scale, -1, eps)), shape_of(x))]


def reduction(kind: str, axes_input: int) -> Converter:
    """ReduceSum (axes an input since opset 13) and the others (since opset 18)."""

    def convert(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
        x = imp.tensor(args[0])  # type: ignore[arg-type]
        shape = shape_of(x)
        by_input = imp.opset >= axes_input
        axes = axes_operand(imp, node, args, 1) if by_input else (
            None if attribute(node, "axes") is None else
            [int(a) for a in attribute(node, "axes")])  # type: ignore[union-attr]
        keepdims = bool(attribute(node, "keepdims", 1))
        if not axes:
            if attribute(node, "noop_with_empty_axes", 0):
                return [x]
            axes = list(range(len(shape)))
        axes = sorted({norm_axis(imp, a, len(shape)) for a in axes})
        if keepdims:
            out = [1 if i in axes else d for i, d in enumerate(shape)]
        else:
            out = [d for i, d in enumerate(shape) if i not in axes]
        cls = nn.REDUCE_OPS[kind]
        if element_of(x) == i1 and kind in ("max", "min"):  # any / all: on 0 and 1 as i32
            i32 = ONNX_TYPES[6][1]
            ints = imp.emit(nn.CastOp(x, tensor_type(i32, shape)))
            reduced = imp.emit(cls(ints, axes, tensor_type(i32, out), keepdims))
            return [imp.emit(nn.CmpOp(reduced, splat(imp, 0, i32), "ne", tensor_type(i1, out)))]
        return [imp.emit(cls(x, axes, tensor_type(element_of(x), out), keepdims))]

    return convert
