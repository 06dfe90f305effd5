"""The ``nn`` dialect: primitive tensor ops on static ranked tensors.

Every op works on ``tensor<...>`` values with static shapes. Elementwise ops broadcast with numpy
rules. Every parameter is a property, so the generic form always shows it in ``<{...}>``; the
custom form prints the non-default ones in the attribute dictionary::

    %y = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
    %g = nn.gelu %y {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
    %n = nn.narrow %g {axis = 1 : i64, start = 0 : i64, length = 4 : i64}
           : tensor<4x8xf32> -> tensor<4x4xf32>
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fusec.dialects.common import (
    ALL_TYPES,
    ARITH_TYPES,
    CAST_TYPES,
    FLOAT_TYPES,
    bool_attr,
    bool_prop,
    broadcast_or_fail,
    check_axis,
    check_choice,
    check_element_type,
    check_positive,
    check_result_shape,
    check_same_element_type,
    check_vector,
    f32_attr,
    float_prop,
    i64_attr,
    int_prop,
    ints_attr,
    ints_prop,
    matmul_shape,
    normalize_axis,
    str_prop,
    tensor_type,
    type_name,
)
from fusec.dialects.donation import check_no_read_after_update
from fusec.dialects.op_kinds import OpKind

I64Attr = IntegerAttr[I64]
F32Attr = FloatAttr[Float32Type]
I64Array = DenseArrayBase.constr(i64)

CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
GELU_APPROXIMATIONS = ("none", "tanh")
REDUCE_KINDS = ("sum", "mean", "max", "min")


# --- elementwise ---------------------------------------------------------------------------


class BinaryOp(IRDLOperation):
    """``result = lhs <op> rhs`` elementwise, with numpy broadcasting."""

    FUSION_KIND: ClassVar[OpKind] = OpKind.ELEMENTWISE

    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = ARITH_TYPES

    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        lhs = tensor_type(self, "lhs", self.lhs)
        rhs = tensor_type(self, "rhs", self.rhs)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "lhs", lhs, self.ALLOWED_TYPES)
        check_same_element_type(self, [("lhs", lhs), ("rhs", rhs), ("result", res)])
        check_result_shape(self, res, broadcast_or_fail(self, [("lhs", lhs), ("rhs", rhs)]))


@irdl_op_definition
class AddOp(BinaryOp):
    name = "nn.add"


@irdl_op_definition
class SubOp(BinaryOp):
    name = "nn.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    name = "nn.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    name = "nn.div"


@irdl_op_definition
class MaxOp(BinaryOp):
    name = "nn.max"


@irdl_op_definition
class MinOp(BinaryOp):
    name = "nn.min"


@irdl_op_definition
class PowOp(BinaryOp):
    name = "nn.pow"
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES


class UnaryOp(IRDLOperation):
    """``result = f(input)`` elementwise; the result has the input's type."""

    FUSION_KIND: ClassVar[OpKind] = OpKind.ELEMENTWISE

    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = FLOAT_TYPES

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, properties: dict[str, Attribute] | None = None):
        super().__init__(operands=[input], result_types=[input.type], properties=properties or {})

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "input", x, self.ALLOWED_TYPES)
        if res != x:
            raise VerifyException(
                f"'{self.name}' result type {type_name(res)} must equal the input type "
                f"{type_name(x)}"
            )


@irdl_op_definition
class ReluOp(UnaryOp):
    name = "nn.relu"
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = ARITH_TYPES


@irdl_op_definition
class GeluOp(UnaryOp):
    """GELU; ``approximate = "none"`` is the erf form, ``"tanh"`` the tanh approximation."""

    name = "nn.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    def __init__(self, input: SSAValue, approximate: str = "none"):
        super().__init__(input, {"approximate": StringAttr(approximate)})

    def verify_(self) -> None:
        super().verify_()
        check_choice(self, "approximate", str_prop(self, "approximate"), GELU_APPROXIMATIONS)


@irdl_op_definition
class SiluOp(UnaryOp):
    name = "nn.silu"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    name = "nn.sigmoid"


@irdl_op_definition
class TanhOp(UnaryOp):
    name = "nn.tanh"


@irdl_op_definition
class ExpOp(UnaryOp):
    name = "nn.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    name = "nn.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    name = "nn.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryOp):
    name = "nn.rsqrt"


@irdl_op_definition
class ErfOp(UnaryOp):
    """The Gauss error function (exported GELUs and others spell it out)."""

    name = "nn.erf"


@irdl_op_definition
class SinOp(UnaryOp):
    name = "nn.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    name = "nn.cos"


@irdl_op_definition
class NegOp(UnaryOp):
    name = "nn.neg"
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = ARITH_TYPES


@irdl_op_definition
class AbsOp(UnaryOp):
    name = "nn.abs"
    ALLOWED_TYPES: ClassVar[tuple[Attribute, ...]] = ARITH_TYPES


@irdl_op_definition
class CastOp(IRDLOperation):
    """Converts every element to the result's element type; the shape is kept.

    Between f32, f16, bf16, i32, i8 and i1. To a float: rounded to nearest even (through f32
    for bf16; a value past the type's range is infinite). To ``i1``: ``x != 0`` (NaN is
    true). To an integer (i32, i8): truncated toward zero and saturated to the type's range,
    NaN gives 0 (OpenCL's ``convert_char_sat_rtz``), from an integer as from a float. From
    ``i1``: 0 or 1.
    """

    name = "nn.cast"
    FUSION_KIND: ClassVar[OpKind] = OpKind.ELEMENTWISE
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "input", x, CAST_TYPES)
        check_element_type(self, "result", res, CAST_TYPES)
        check_result_shape(self, res, x.get_shape())


@irdl_op_definition
class CmpOp(IRDLOperation):
    """Elementwise comparison with broadcasting; the result is ``i1``."""

    name = "nn.cmp"
    FUSION_KIND: ClassVar[OpKind] = OpKind.ELEMENTWISE
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    predicate = prop_def(StringAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str, result_type: Attribute):
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result_type],
            properties={"predicate": StringAttr(predicate)},
        )

    def verify_(self) -> None:
        check_choice(self, "predicate", str_prop(self, "predicate"), CMP_PREDICATES)
        lhs = tensor_type(self, "lhs", self.lhs)
        rhs = tensor_type(self, "rhs", self.rhs)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "lhs", lhs, ARITH_TYPES)
        check_same_element_type(self, [("lhs", lhs), ("rhs", rhs)])
        check_element_type(self, "result", res, (i1,))
        check_result_shape(self, res, broadcast_or_fail(self, [("lhs", lhs), ("rhs", rhs)]))


@irdl_op_definition
class WhereOp(IRDLOperation):
    """``cond ? lhs : rhs`` elementwise, the three operands broadcast together."""

    name = "nn.where"
    FUSION_KIND: ClassVar[OpKind] = OpKind.ELEMENTWISE
    cond = operand_def()
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) "
        "`->` type($result)"
    )

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[cond, lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        cond = tensor_type(self, "cond", self.cond)
        lhs = tensor_type(self, "lhs", self.lhs)
        rhs = tensor_type(self, "rhs", self.rhs)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "cond", cond, (i1,))
        check_element_type(self, "lhs", lhs, ALL_TYPES)
        check_same_element_type(self, [("lhs", lhs), ("rhs", rhs), ("result", res)])
        shape = broadcast_or_fail(self, [("cond", cond), ("lhs", lhs), ("rhs", rhs)])
        check_result_shape(self, res, shape)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor constant: ``nn.constant {value = dense<...> : tensor<...>} : tensor<...>``."""

    name = "nn.constant"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    result = result_def()
    value = prop_def(DenseIntOrFPElementsAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def verify_(self) -> None:
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "result", res, ALL_TYPES)
        if self.value.type != res:
            raise VerifyException(
                f"'{self.name}' value type {type_name(self.value.type)} must equal the result "
                f"type {type_name(res)}"
            )


# --- contraction and data movement -----------------------------------------------------------


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """``lhs: [..., M, K] @ rhs: [K, N] | [..., K, N] -> [..., M, N]``."""

    name = "nn.matmul"
    FUSION_KIND: ClassVar[OpKind] = OpKind.GEMM
    COLUMN_OPERANDS: ClassVar[tuple[str, ...]] = ("rhs",)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a = tensor_type(self, "lhs", self.lhs)
        b = tensor_type(self, "rhs", self.rhs)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "lhs", a, ARITH_TYPES)
        check_same_element_type(self, [("lhs", a), ("rhs", b), ("result", res)])
        check_result_shape(self, res, matmul_shape(self, a, b))


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Permutes dimensions: result dim ``i`` is input dim ``perm[i]``."""

    name = "nn.transpose"
    FUSION_KIND: ClassVar[OpKind] = OpKind.INJECTIVE
    input = operand_def()
    result = result_def()
    perm = prop_def(I64Array)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, perm: list[int], result_type: Attribute):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"perm": ints_attr(perm)}
        )

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        perm = ints_prop(self, "perm")
        if sorted(perm) != list(range(x.get_num_dims())):
            raise VerifyException(
                f"'{self.name}' perm {list(perm)} is not a permutation of the "
                f"{x.get_num_dims()} dimensions of {type_name(x)}"
            )
        check_same_element_type(self, [("input", x), ("result", res)])
        check_result_shape(self, res, [x.get_shape()[p] for p in perm])


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Reinterprets the row-major elements with the result's shape."""

    name = "nn.reshape"
    FUSION_KIND: ClassVar[OpKind] = OpKind.INJECTIVE
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        check_same_element_type(self, [("input", x), ("result", res)])
        if x.element_count() != res.element_count():
            raise VerifyException(
                f"'{self.name}' cannot reshape {type_name(x)} ({x.element_count()} elements) "
                f"to {type_name(res)} ({res.element_count()} elements)"
            )


@irdl_op_definition
class NarrowOp(IRDLOperation):
    """The slice ``[start, start + length)`` of ``axis``."""

    name = "nn.narrow"
    FUSION_KIND: ClassVar[OpKind] = OpKind.INJECTIVE
    input = operand_def()
    result = result_def()
    axis = prop_def(I64Attr)
    start = prop_def(I64Attr)
    length = prop_def(I64Attr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, axis: int, start: int, length: int):
        assert isinstance(input.type, TensorType)
        shape = list(input.type.get_shape())
        shape[axis] = length
        super().__init__(
            operands=[input],
            result_types=[TensorType(input.type.element_type, shape)],
            properties={
                "axis": i64_attr(axis),
                "start": i64_attr(start),
                "length": i64_attr(length),
            },
        )

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        axis = check_axis(self, "axis", int_prop(self, "axis"), x.get_num_dims())
        start, length = int_prop(self, "start"), int_prop(self, "length")
        check_positive(self, "length", length)
        dim = x.get_shape()[axis]
        if start < 0 or start + length > dim:
            raise VerifyException(
                f"'{self.name}' slice [{start}, {start + length}) is out of bounds for axis "
                f"{axis} of size {dim} in {type_name(x)}"
            )
        check_same_element_type(self, [("input", x), ("result", res)])
        shape = list(x.get_shape())
        shape[axis] = length
        check_result_shape(self, res, shape)


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """Joins the inputs along ``axis``; every other dimension must agree."""

    name = "nn.concat"
    FUSION_KIND: ClassVar[OpKind] = OpKind.INJECTIVE
    inputs = var_operand_def()
    result = result_def()
    axis = prop_def(I64Attr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: list[SSAValue], axis: int, result_type: Attribute):
        super().__init__(
            operands=[inputs], result_types=[result_type], properties={"axis": i64_attr(axis)}
        )

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException(f"'{self.name}' needs at least one input")
        types = [tensor_type(self, f"input #{i}", v) for i, v in enumerate(self.inputs)]
        res = tensor_type(self, "result", self.result)
        rank = types[0].get_num_dims()
        axis = check_axis(self, "axis", int_prop(self, "axis"), rank)
        named = [(f"input #{i}", t) for i, t in enumerate(types)]
        check_same_element_type(self, [*named, ("result", res)])
        for name, t in named:
            other = [d for i, d in enumerate(t.get_shape()) if i != axis]
            first = [d for i, d in enumerate(types[0].get_shape()) if i != axis]
            if t.get_num_dims() != rank or other != first:
                raise VerifyException(
                    f"'{self.name}' {name} ({type_name(t)}) does not match input #0 "
                    f"({type_name(types[0])}) outside axis {axis}"
                )
        shape = list(types[0].get_shape())
        shape[axis] = sum(t.get_shape()[axis] for t in types)
        check_result_shape(self, res, shape)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """``data`` indexed along ``axis`` by every element of ``indices`` (an embedding lookup).

    The result's shape is ``data[:axis] + indices + data[axis+1:]``. A negative index counts
    from the end of the axis; an index outside ``[-dim, dim)`` is an error: of the verifier
    when the indices are an ``nn.constant``, else of the call (the reference raises, a kernel
    records it for the runtime: `fusec.runtime.index_errors`).
    """

    VERIFY_READS_OPERANDS: ClassVar[bool] = True
    """Its verifier reads a constant operand's values, not only the signature
    (`fusec.compiler.signature_verify`)."""

    name = "nn.gather"
    FUSION_KIND: ClassVar[OpKind] = OpKind.INJECTIVE
    data = operand_def()
    indices = operand_def()
    result = result_def()
    axis = prop_def(I64Attr, default_value=i64_attr(0))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)"
    )

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int, result_type: Attribute):
        super().__init__(
            operands=[data, indices],
            result_types=[result_type],
            properties={"axis": i64_attr(axis)},
        )

    def verify_(self) -> None:
        x = tensor_type(self, "data", self.data)
        idx = tensor_type(self, "indices", self.indices)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "data", x, ALL_TYPES)
        check_element_type(self, "indices", idx, (IntegerType(32),))
        axis = check_axis(self, "axis", int_prop(self, "axis"), x.get_num_dims())
        if x.get_shape()[axis] == 0:
            raise VerifyException(
                f"'{self.name}' cannot gather from the empty axis {axis} of {type_name(x)}"
            )
        check_same_element_type(self, [("data", x), ("result", res)])
        shape = [*x.get_shape()[:axis], *idx.get_shape(), *x.get_shape()[axis + 1 :]]
        check_result_shape(self, res, shape)
        self.check_constant_indices(x.get_shape()[axis], axis, idx.get_shape())

    def check_constant_indices(self, dim: int, axis: int, shape: Sequence[int]) -> None:
        """Constant indices (an ``nn.constant``'s) must lie in ``[-dim, dim)``."""
        owner = self.indices.owner
        if not isinstance(owner, ConstantOp):
            return
        values = owner.value.get_values()
        bad = next((i for i, v in enumerate(values) if not -dim <= v < dim), None)
        if bad is None:
            return
        position = [0] * len(shape)
        if len(values) > 1:  # a splat holds one value for every position
            rest = bad
            for k in range(len(shape) - 1, -1, -1):
                rest, position[k] = divmod(rest, shape[k])
        raise VerifyException(
            f"'{self.name}' constant index {values[bad]} at position {position} is out of "
            f"range for axis {axis} of size {dim} (valid: {-dim} to {dim - 1})"
        )


# --- normalisation and softmax ---------------------------------------------------------------


def flattened_rows(x: TensorType, axis: int) -> TensorType | None:
    """``x`` as ``[prod(leading dims), H]`` when ``axis`` is its last axis, else None."""
    shape = x.get_shape()
    if len(shape) < 2 or axis != len(shape) - 1:
        return None
    return TensorType(x.element_type, [math.prod(shape[:-1]), shape[-1]])


class NormOp(IRDLOperation):
    """A normalisation over one axis of ``input``; the result has the input's type.

    Concrete ops declare their operands themselves (``input`` first): xDSL orders operands by
    field definition, and fields of a subclass come before inherited ones.
    """

    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION

    result = result_def()
    axis = prop_def(I64Attr, default_value=i64_attr(-1))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def verify_input(self, may_flatten: bool = False) -> tuple[TensorType, int]:
        """Checks the input and the result; with ``may_flatten``, a norm over the last axis may
        also produce ``[prod(leading dims), H]`` (the same bytes, as ``fuse-rms-norm-reshape``
        leaves it)."""
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "input", x, FLOAT_TYPES)
        axis = check_axis(self, "axis", int_prop(self, "axis"), x.get_num_dims())
        if res != x and not (may_flatten and res == flattened_rows(x, axis)):
            also = " or flatten its leading dimensions" if may_flatten else ""
            raise VerifyException(
                f"'{self.name}' result type {type_name(res)} must equal the input type "
                f"{type_name(x)}{also}"
            )
        return x, x.get_shape()[axis]

    def verify_scale(self, name: str, value: SSAValue, x: TensorType, size: int) -> None:
        t = tensor_type(self, name, value)
        check_same_element_type(self, [("input", x), (name, t)])
        check_vector(self, name, t, size)


@irdl_op_definition
class LayerNormOp(NormOp):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over ``axis``."""

    name = "nn.layer_norm"
    input = operand_def()
    gamma = operand_def()
    beta = operand_def()
    eps = prop_def(F32Attr, default_value=f32_attr(1e-5))
    assembly_format = (
        "$input `,` $gamma `,` $beta attr-dict `:` type($input) `,` type($gamma) `,` "
        "type($beta) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, gamma: SSAValue, beta: SSAValue, axis: int = -1, eps: float = 1e-5
    ):
        super().__init__(
            operands=[input, gamma, beta],
            result_types=[input.type],
            properties={"axis": i64_attr(axis), "eps": f32_attr(eps)},
        )

    def verify_(self) -> None:
        x, size = self.verify_input()
        self.verify_scale("gamma", self.gamma, x, size)
        self.verify_scale("beta", self.beta, x, size)
        check_positive(self, "eps", float_prop(self, "eps"))


@irdl_op_definition
class RmsNormOp(NormOp):
    """``x / sqrt(mean(x^2) + eps) * gamma`` over ``axis``."""

    name = "nn.rms_norm"
    input = operand_def()
    gamma = operand_def()
    eps = prop_def(F32Attr, default_value=f32_attr(1e-6))
    assembly_format = (
        "$input `,` $gamma attr-dict `:` type($input) `,` type($gamma) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        gamma: SSAValue,
        axis: int = -1,
        eps: float = 1e-6,
        result_type: Attribute | None = None,
    ):
        super().__init__(
            operands=[input, gamma],
            result_types=[result_type or input.type],
            properties={"axis": i64_attr(axis), "eps": f32_attr(eps)},
        )

    def verify_(self) -> None:
        x, size = self.verify_input(may_flatten=True)
        self.verify_scale("gamma", self.gamma, x, size)
        check_positive(self, "eps", float_prop(self, "eps"))


@irdl_op_definition
class SoftmaxOp(NormOp):
    """``exp(x - max) / sum(exp(x - max))`` over ``axis``."""

    name = "nn.softmax"
    input = operand_def()
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, axis: int = -1):
        super().__init__(
            operands=[input], result_types=[input.type], properties={"axis": i64_attr(axis)}
        )

    def verify_(self) -> None:
        self.verify_input()


# --- reductions ----------------------------------------------------------------------------


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> list[int]:
    """The shape left after reducing the (normalised) ``axes`` of ``shape``."""
    if keepdims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


def check_reduce_axes(op: IRDLOperation, axes: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """The normalised ``axes``; they must be non-empty, in range and distinct."""
    if not axes:
        raise VerifyException(f"'{op.name}' axes must not be empty")
    norm: list[int] = []
    for axis in axes:
        n = normalize_axis(axis, rank)
        if n is None:
            raise VerifyException(
                f"'{op.name}' axis {axis} in axes {list(axes)} is out of range for an operand "
                f"of rank {rank}"
            )
        norm.append(n)
    if len(set(norm)) != len(norm):
        raise VerifyException(f"'{op.name}' axes {list(axes)} name a dimension twice")
    return tuple(norm)


class ReduceOp(IRDLOperation):
    """Reduces ``axes`` of ``input``; ``keepdims`` keeps them as size-1 dimensions."""

    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION

    KIND: ClassVar[str]

    input = operand_def()
    result = result_def()
    axes = prop_def(I64Array)
    keepdims = prop_def(BoolAttr, default_value=bool_attr(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue, axes: list[int], result_type: Attribute, keepdims: bool = False
    ):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"axes": ints_attr(axes), "keepdims": bool_attr(keepdims)},
        )

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "input", x, ARITH_TYPES)
        check_same_element_type(self, [("input", x), ("result", res)])
        axes = check_reduce_axes(self, ints_prop(self, "axes"), x.get_num_dims())
        for axis in axes:
            if self.KIND != "sum" and x.get_shape()[axis] == 0:
                raise VerifyException(
                    f"'{self.name}' cannot reduce the empty axis {axis} of {type_name(x)}: the "
                    f"{self.KIND} of no elements is undefined"
                )
        check_result_shape(
            self, res, reduced_shape(x.get_shape(), axes, bool_prop(self, "keepdims"))
        )


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "nn.reduce_sum"
    KIND: ClassVar[str] = "sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "nn.reduce_mean"
    KIND: ClassVar[str] = "mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "nn.reduce_max"
    KIND: ClassVar[str] = "max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    name = "nn.reduce_min"
    KIND: ClassVar[str] = "min"


REDUCE_OPS: dict[str, type[ReduceOp]] = {
    op.KIND: op for op in (ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp)
}


# --- attention -----------------------------------------------------------------------------


def check_mask(op: IRDLOperation, mask: SSAValue, batch: int, keys: int) -> None:
    """A key mask is ``[B, S_k]`` (1 = attend, 0 = masked) of any element type."""
    t = tensor_type(op, "mask", mask)
    check_element_type(op, "mask", t, ALL_TYPES)
    if tuple(t.get_shape()) != (batch, keys):
        raise VerifyException(
            f"'{op.name}' mask ({type_name(t)}) must be [{batch}, {keys}] (batch, keys)"
        )


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """Multi-head scaled dot-product attention with the heads packed in the last dimension.

    ``q: [B, S, H*D]``, ``k, v: [B, S_k, KV*D]``, optional ``mask: [B, S_k]``. Scores per head
    are ``q_h k_h^T * scale`` (``scale`` defaults to ``1/sqrt(head_dim)``); masked keys get zero
    weight and a row with every key masked yields zeros; ``causal`` hides keys after the query.
    ``KV = num_kv_heads`` (default ``H``) divides ``H``: query head ``h`` reads key and value
    head ``h / (H / KV)`` (grouped-query attention). ``window`` (with ``causal`` only): query
    ``i`` sees keys ``(i - window, i]`` (a sliding window, Mistral's). The result has q's
    element type, or f32 for 16-bit operands: the result rounded to q's type, then widened
    (``nn.cast(attention)`` stored by the attention, `fuse-attention-cast`).
    """

    name = "nn.attention"
    FUSION_KIND: ClassVar[OpKind] = OpKind.GEMM
    SLICE_READS: ClassVar[tuple[int, ...]] = (0, 1, 2)
    """q, k, v: read in place when each is a slice of the last axis (`slice_read_in_place`)."""
    q = operand_def()
    k = operand_def()
    v = operand_def()
    mask = opt_operand_def()
    result = result_def()
    num_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    num_kv_heads = opt_prop_def(I64Attr)
    window = opt_prop_def(I64Attr)
    scale = opt_prop_def(F32Attr)
    causal = prop_def(BoolAttr, default_value=bool_attr(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$q `,` $k `,` $v (`mask` $mask^)? attr-dict `:` type($q) `,` type($k) `,` type($v) "
        "(`,` type($mask)^)? `->` type($result)"
    )

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        num_heads: int,
        head_dim: int,
        mask: SSAValue | None = None,
        scale: float | None = None,
        causal: bool = False,
        num_kv_heads: int | None = None,
        window: int | None = None,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "num_heads": i64_attr(num_heads),
            "head_dim": i64_attr(head_dim),
            "causal": bool_attr(causal),
        }
        if scale is not None:
            props["scale"] = f32_attr(scale)
        if num_kv_heads is not None and num_kv_heads != num_heads:
            props["num_kv_heads"] = i64_attr(num_kv_heads)
        if window is not None:
            props["window"] = i64_attr(window)
        super().__init__(operands=[q, k, v, mask], result_types=[result_type or q.type],
                         properties=props)

    def kv_heads(self) -> int:
        """The key and value heads: ``num_kv_heads``, or ``num_heads`` without it."""
        if self.num_kv_heads is not None:
            return self.num_kv_heads.value.data
        return int_prop(self, "num_heads")

    def window_size(self) -> int | None:
        """The sliding window: how many keys up to its own position a query sees, or None."""
        return None if self.window is None else self.window.value.data

    def scale_value(self) -> float:
        """The score scale: the ``scale`` property, or ``1/sqrt(head_dim)``."""
        if self.scale is not None:
            return self.scale.value.data
        return 1.0 / math.sqrt(int_prop(self, "head_dim"))

    def verify_(self) -> None:
        heads, dim = int_prop(self, "num_heads"), int_prop(self, "head_dim")
        kv_heads = self.kv_heads()
        window = self.window_size()
        if window is not None:
            check_positive(self, "window", window)
            if not bool_prop(self, "causal"):
                raise VerifyException(f"'{self.name}' window {window} needs causal = true")
        check_positive(self, "num_heads", heads)
        check_positive(self, "head_dim", dim)
        check_positive(self, "num_kv_heads", kv_heads)
        if heads % kv_heads:
            raise VerifyException(f"'{self.name}' num_kv_heads {kv_heads} must divide "
                                  f"num_heads {heads}")
        q = tensor_type(self, "q", self.q)
        k = tensor_type(self, "k", self.k)
        v = tensor_type(self, "v", self.v)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "q", q, FLOAT_TYPES)
        check_same_element_type(self, [("q", q), ("k", k), ("v", v)])
        if res.element_type != q.element_type and (
                isinstance(q.element_type, Float32Type)
                or not isinstance(res.element_type, Float32Type)):
            raise VerifyException(
                f"'{self.name}' result ({type_name(res)}) must have the element type of q "
                f"({type_name(q)}), or f32 for 16-bit operands")
        for name, t, count, what in (("q", q, heads, "num_heads"), ("k", k, kv_heads, "num_kv_heads"),
                                     ("v", v, kv_heads, "num_kv_heads")):
            if t.get_num_dims() != 3 or t.get_shape()[2] != count * dim:
                raise VerifyException(
                    f"'{self.name}' {name} ({type_name(t)}) must be [B, S, {count * dim}] "
                    f"({what} {count} x head_dim {dim})"
                )
        batch, keys = q.get_shape()[0], k.get_shape()[1]
        if k.get_shape() != v.get_shape():
            raise VerifyException(
                f"'{self.name}' k ({type_name(k)}) and v ({type_name(v)}) must have the same shape"
            )
        if k.get_shape()[0] != batch:
            raise VerifyException(
                f"'{self.name}' k ({type_name(k)}) must have the batch size of q ({type_name(q)})"
            )
        if keys == 0 and 0 not in q.get_shape():
            raise VerifyException(
                f"'{self.name}' k ({type_name(k)}) has no keys: a softmax over none is undefined"
            )
        if self.mask is not None:
            check_mask(self, self.mask, batch, keys)
        if self.scale is not None:
            check_positive(self, "scale", self.scale.value.data)
        check_result_shape(self, res, q.get_shape())


# --- KV cache ------------------------------------------------------------------------------


def check_position(op: IRDLOperation, pos: SSAValue) -> None:
    """A cache position is a device scalar: ``tensor<i32>``."""
    t = tensor_type(op, "pos", pos)
    if t.element_type != IntegerType(32) or t.get_num_dims() != 0:
        raise VerifyException(f"'{op.name}' pos ({type_name(t)}) must be tensor<i32>")


@irdl_op_definition
class CacheUpdateOp(IRDLOperation):
    """``cache`` with the rows ``[pos, pos + S)`` along ``axis`` replaced by ``update``'s ``S``.

    ``pos`` is a ``tensor<i32>`` read on the device, so that one compiled step serves every
    position. ``0 <= pos`` and ``pos + S <= cache.shape[axis]`` is the caller's to keep: the
    reference raises, the kernel writes only the rows inside the cache. The result has the
    cache's type; the lowering writes it into the cache's buffer where nothing reads the old
    cache afterwards (a donated argument, `fusec.dialects.donation`), else into a copy.
    """

    name = "nn.cache_update"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE  # updates its operand's buffer in place
    SLICE_READS: ClassVar[tuple[int, ...]] = (1,)
    """The new rows, read in place as a slice of the last axis when they are written along
    the next-to-last axis (`slice_read_in_place`)."""

    cache = operand_def()
    update = operand_def()
    pos = operand_def()
    result = result_def()
    axis = prop_def(I64Attr, default_value=i64_attr(1))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$cache `,` $update `,` $pos attr-dict `:` type($cache) `,` type($update) `,` "
        "type($pos) `->` type($result)"
    )

    def __init__(self, cache: SSAValue, update: SSAValue, pos: SSAValue, axis: int = 1):
        super().__init__(operands=[cache, update, pos], result_types=[cache.type],
                         properties={"axis": i64_attr(axis)})

    def verify_(self) -> None:
        cache = tensor_type(self, "cache", self.cache)
        update = tensor_type(self, "update", self.update)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "cache", cache, ALL_TYPES)
        check_same_element_type(self, [("cache", cache), ("update", update), ("result", res)])
        check_position(self, self.pos)
        axis = check_axis(self, "axis", int_prop(self, "axis"), cache.get_num_dims())
        shape, rows = cache.get_shape(), update.get_shape()
        if (len(rows) != len(shape) or rows[axis] > shape[axis]
                or any(a != b for d, (a, b) in enumerate(zip(rows, shape)) if d != axis)):
            raise VerifyException(
                f"'{self.name}' update ({type_name(update)}) must have the shape of the cache "
                f"({type_name(cache)}) but at most {shape[axis]} rows along axis {axis}")
        check_result_shape(self, res, shape)
        check_no_read_after_update(self, self.cache)


@irdl_op_definition
class CacheAttentionOp(IRDLOperation):
    """Attention of ``S`` new queries over a KV cache whose first ``pos + S`` rows are valid.

    ``q: [B, S, H*D]``, ``k_cache, v_cache: [B, T, KV*D]`` (the heads packed in the last
    dimension, ``KV = num_kv_heads`` dividing ``H = num_heads``: query head ``h`` reads key and
    value head ``h / (H / KV)``, grouped-query attention), ``pos: tensor<i32>``. Query ``i``
    stands at position ``pos + i`` and sees keys ``[0, pos + i]``: the cache before it and the
    new tokens causally. Scores are ``q_h k^T * scale`` (default ``1/sqrt(head_dim)``).
    """

    name = "nn.cache_attention"
    FUSION_KIND: ClassVar[OpKind] = OpKind.GEMM
    SLICE_READS: ClassVar[tuple[int, ...]] = (0,)
    """q, read in place when it is a slice of the last axis (`slice_read_in_place`)."""
    q = operand_def()
    k_cache = operand_def()
    v_cache = operand_def()
    pos = operand_def()
    result = result_def()
    num_heads = prop_def(I64Attr)
    num_kv_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    scale = opt_prop_def(F32Attr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$q `,` $k_cache `,` $v_cache `,` $pos attr-dict `:` type($q) `,` type($k_cache) `,` "
        "type($v_cache) `,` type($pos) `->` type($result)"
    )

    def __init__(self, q: SSAValue, k_cache: SSAValue, v_cache: SSAValue, pos: SSAValue,
                 num_heads: int, num_kv_heads: int, head_dim: int, scale: float | None = None):
        props: dict[str, Attribute] = {
            "num_heads": i64_attr(num_heads),
            "num_kv_heads": i64_attr(num_kv_heads),
            "head_dim": i64_attr(head_dim),
        }
        if scale is not None:
            props["scale"] = f32_attr(scale)
        super().__init__(operands=[q, k_cache, v_cache, pos], result_types=[q.type],
                         properties=props)

    def scale_value(self) -> float:
        """The score scale: the ``scale`` property, or ``1/sqrt(head_dim)``."""
        if self.scale is not None:
            return self.scale.value.data
        return 1.0 / math.sqrt(int_prop(self, "head_dim"))

    def verify_(self) -> None:
        heads, kv_heads = int_prop(self, "num_heads"), int_prop(self, "num_kv_heads")
        dim = int_prop(self, "head_dim")
        for name, value in (("num_heads", heads), ("num_kv_heads", kv_heads), ("head_dim", dim)):
            check_positive(self, name, value)
        if heads % kv_heads:
            raise VerifyException(f"'{self.name}' num_kv_heads {kv_heads} must divide "
                                  f"num_heads {heads}")
        q = tensor_type(self, "q", self.q)
        k = tensor_type(self, "k_cache", self.k_cache)
        v = tensor_type(self, "v_cache", self.v_cache)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "q", q, FLOAT_TYPES)
        check_same_element_type(self, [("q", q), ("k_cache", k), ("v_cache", v),
                                       ("result", res)])
        check_position(self, self.pos)
        for name, t, width in (("q", q, heads * dim), ("k_cache", k, kv_heads * dim),
                               ("v_cache", v, kv_heads * dim)):
            if t.get_num_dims() != 3 or t.get_shape()[2] != width:
                raise VerifyException(f"'{self.name}' {name} ({type_name(t)}) must be "
                                      f"[B, S, {width}]")
        if k.get_shape() != v.get_shape():
            raise VerifyException(f"'{self.name}' k_cache ({type_name(k)}) and v_cache "
                                  f"({type_name(v)}) must have the same shape")
        batch, seq, _ = q.get_shape()
        if k.get_shape()[0] != batch:
            raise VerifyException(f"'{self.name}' k_cache ({type_name(k)}) must have the batch "
                                  f"size of q ({type_name(q)})")
        if seq > k.get_shape()[1]:
            raise VerifyException(f"'{self.name}' q ({type_name(q)}) has more positions than "
                                  f"the cache holds ({type_name(k)})")
        if self.scale is not None:
            check_positive(self, "scale", self.scale.value.data)
        check_result_shape(self, res, q.get_shape())


@irdl_op_definition
class ArgmaxOp(IRDLOperation):
    """The index (i32) of the largest element along ``axis``, the first of equal ones (a NaN
    counts as the largest, as numpy's); the axis is removed from the shape."""

    name = "nn.argmax"
    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION
    input = operand_def()
    result = result_def()
    axis = prop_def(I64Attr, default_value=i64_attr(-1))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, axis: int = -1):
        t = input.type
        assert isinstance(t, TensorType)
        rank = t.get_num_dims()
        shape = [d for i, d in enumerate(t.get_shape()) if i != axis % rank]
        super().__init__(operands=[input], result_types=[TensorType(IntegerType(32), shape)],
                         properties={"axis": i64_attr(axis)})

    def verify_(self) -> None:
        x = tensor_type(self, "input", self.input)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "input", x, (*FLOAT_TYPES, IntegerType(32)))
        check_element_type(self, "result", res, (IntegerType(32),))
        axis = check_axis(self, "axis", int_prop(self, "axis"), x.get_num_dims())
        if x.get_shape()[axis] == 0:
            raise VerifyException(f"'{self.name}' has no element to choose along the empty "
                                  f"axis {axis} of {type_name(x)}")
        check_result_shape(self, res, [d for i, d in enumerate(x.get_shape()) if i != axis])


NN = Dialect(
    "nn",
    [
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        MaxOp,
        MinOp,
        PowOp,
        ReluOp,
        GeluOp,
        SiluOp,
        SigmoidOp,
        TanhOp,
        ExpOp,
        LogOp,
        SqrtOp,
        RsqrtOp,
        NegOp,
        AbsOp,
        ErfOp,
        SinOp,
        CosOp,
        CastOp,
        CmpOp,
        WhereOp,
        ConstantOp,
        MatmulOp,
        TransposeOp,
        ReshapeOp,
        NarrowOp,
        ConcatOp,
        GatherOp,
        LayerNormOp,
        RmsNormOp,
        SoftmaxOp,
        ReduceSumOp,
        ReduceMeanOp,
        ReduceMaxOp,
        ReduceMinOp,
        AttentionOp,
        CacheUpdateOp,
        CacheAttentionOp,
        ArgmaxOp,
    ],
    [],
)


def slice_read_in_place(narrow: NarrowOp, user: Operation, index: int) -> bool:
    """Whether ``user`` reads ``narrow``'s result (its operand ``index``) in place, through a
    row stride and an offset into the narrow's input, so that the slice is never copied: the
    narrow takes a slice of the last axis of a rank-3 tensor and the user declares that operand
    in its ``SLICE_READS`` (a cache update only when it writes along the next-to-last axis)."""
    shape = narrow.input.type.get_shape()  # type: ignore[attr-defined]
    if len(shape) != 3 or narrow.axis.value.data % 3 != 2:
        return False
    if index not in getattr(type(user), "SLICE_READS", ()):
        return False
    return not isinstance(user, CacheUpdateOp) or user.axis.value.data % 3 == 1
