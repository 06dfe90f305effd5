"""The ``fused`` dialect: what the fusion passes produce.

Each op stands for a group of ``nn`` ops that one kernel computes. Every op can ``decompose()``
itself back into ``nn`` ops; the ``unfuse`` passes are written once on top of that.

    %y = fused.matmul_bias_act %x, %w, %b {activation = "gelu"}
           : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
    %z = fused.elementwise %y, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> {
    ^bb0(%a: f32, %c: f32):
      %s = arith.addf %a, %c : f32
      fused.yield %s : f32
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    I64,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from fusec.dialects import decompositions
from fusec.dialects.common import (
    ALL_TYPES,
    FLOAT_TYPES,
    bool_attr,
    bool_prop,
    broadcast_or_fail,
    broadcast_shapes,
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
    str_prop,
    tensor_type,
    type_name,
)
from fusec.dialects.decompositions import Decomposition
from fusec.dialects.nn import REDUCE_KINDS, check_mask, check_reduce_axes, reduced_shape

I64Attr = IntegerAttr[I64]
F32Attr = FloatAttr[Float32Type]
I64Array = DenseArrayBase.constr(i64)

# Activations a fused epilogue can apply. Each names one ``nn`` unary op (see decompose).
ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh")


def check_bias(op: Operation, t: TensorType, size: int) -> None:
    """A bias of rank <= 1 that broadcasts to a last dimension of ``size``."""
    shape = tuple(t.get_shape())
    if len(shape) > 1 or (shape and shape[0] not in (1, size)):
        raise VerifyException(
            f"'{op.name}' bias ({type_name(t)}) must have rank <= 1 and broadcast to the last "
            f"dimension ({size})"
        )


# --- matmul with epilogue ----------------------------------------------------------------------


@irdl_op_definition
class MatmulBiasActOp(IRDLOperation):
    """``act(x @ w + bias)``; ``bias`` has rank <= 1 and broadcasts to the last dimension."""

    name = "fused.matmul_bias_act"
    x = operand_def()
    w = operand_def()
    bias = operand_def()
    result = result_def()
    activation = prop_def(StringAttr, default_value=StringAttr("none"))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$x `,` $w `,` $bias attr-dict `:` type($x) `,` type($w) `,` type($bias) "
        "`->` type($result)"
    )

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue,
        result_type: Attribute,
        activation: str = "none",
    ):
        super().__init__(
            operands=[x, w, bias],
            result_types=[result_type],
            properties={"activation": StringAttr(activation)},
        )

    def verify_(self) -> None:
        check_choice(self, "activation", str_prop(self, "activation"), ACTIVATIONS)
        x = tensor_type(self, "x", self.x)
        w = tensor_type(self, "w", self.w)
        bias = tensor_type(self, "bias", self.bias)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "x", x, FLOAT_TYPES)
        check_same_element_type(self, [("x", x), ("w", w), ("bias", bias), ("result", res)])
        shape = matmul_shape(self, x, w, "x", "w")
        check_bias(self, bias, shape[-1])
        check_result_shape(self, res, shape)

    def decompose(self) -> Decomposition:
        return decompositions.decompose_matmul_bias_act(self)


# --- residual + normalisation ------------------------------------------------------------------


class ResidualNormOp(IRDLOperation):
    """``norm(x + residual)`` over the last axis; ``x`` and ``residual`` have one type.

    Concrete ops declare their operands (xDSL orders operands by field definition, subclass
    fields first), and call ``verify_common`` with their scale operands.
    """

    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def verify_common(self, scales: Sequence[tuple[str, SSAValue]]) -> None:
        operands = self.operands
        x = tensor_type(self, "x", operands[0])
        residual = tensor_type(self, "residual", operands[1])
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "x", x, FLOAT_TYPES)
        if residual != x or res != x:
            raise VerifyException(
                f"'{self.name}' x ({type_name(x)}), residual ({type_name(residual)}) and "
                f"result ({type_name(res)}) must have one type"
            )
        if x.get_num_dims() < 1:
            raise VerifyException(f"'{self.name}' x ({type_name(x)}) must have rank >= 1")
        size = x.get_shape()[-1]
        for name, value in scales:
            t = tensor_type(self, name, value)
            check_same_element_type(self, [("x", x), (name, t)])
            check_vector(self, name, t, size)
        check_positive(self, "eps", float_prop(self, "eps"))


@irdl_op_definition
class ResidualLayerNormOp(ResidualNormOp):
    """``layer_norm(x + residual, gamma, beta)`` over the last axis."""

    name = "fused.residual_layer_norm"
    x = operand_def()
    residual = operand_def()
    gamma = operand_def()
    beta = operand_def()
    eps = prop_def(F32Attr, default_value=f32_attr(1e-5))
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        eps: float = 1e-5,
    ):
        super().__init__(
            operands=[x, residual, gamma, beta],
            result_types=[x.type],
            properties={"eps": f32_attr(eps)},
        )

    def verify_(self) -> None:
        self.verify_common([("gamma", self.gamma), ("beta", self.beta)])

    def decompose(self) -> Decomposition:
        return decompositions.decompose_residual_layer_norm(self)


@irdl_op_definition
class ResidualRmsNormOp(ResidualNormOp):
    """``rms_norm(x + residual, gamma)`` over the last axis."""

    name = "fused.residual_rms_norm"
    x = operand_def()
    residual = operand_def()
    gamma = operand_def()
    eps = prop_def(F32Attr, default_value=f32_attr(1e-6))
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: SSAValue, residual: SSAValue, gamma: SSAValue, eps: float = 1e-6):
        super().__init__(
            operands=[x, residual, gamma],
            result_types=[x.type],
            properties={"eps": f32_attr(eps)},
        )

    def verify_(self) -> None:
        self.verify_common([("gamma", self.gamma)])

    def decompose(self) -> Decomposition:
        return decompositions.decompose_residual_rms_norm(self)


# --- SwiGLU --------------------------------------------------------------------------------------


@irdl_op_definition
class SwigluOp(IRDLOperation):
    """``up * silu(gate)`` of the two halves of ``cat: [..., 2N]``.

    ``up`` is the first half and ``gate`` the second, unless ``gate_first``.
    """

    name = "fused.swiglu"
    cat = operand_def()
    result = result_def()
    gate_first = prop_def(BoolAttr, default_value=bool_attr(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$cat attr-dict `:` type($cat) `->` type($result)"

    def __init__(self, cat: SSAValue, gate_first: bool = False):
        assert isinstance(cat.type, TensorType)
        shape = list(cat.type.get_shape())
        shape[-1] //= 2
        super().__init__(
            operands=[cat],
            result_types=[TensorType(cat.type.element_type, shape)],
            properties={"gate_first": bool_attr(gate_first)},
        )

    def verify_(self) -> None:
        cat = tensor_type(self, "cat", self.cat)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "cat", cat, FLOAT_TYPES)
        check_same_element_type(self, [("cat", cat), ("result", res)])
        shape = list(cat.get_shape())
        if not shape or shape[-1] % 2:
            raise VerifyException(
                f"'{self.name}' cat ({type_name(cat)}) must have an even last dimension"
            )
        shape[-1] //= 2
        check_result_shape(self, res, shape)

    def decompose(self) -> Decomposition:
        return decompositions.decompose_swiglu(self)


# --- attention block and transformer layer ------------------------------------------------------


def check_linear(
    op: Operation, w_name: str, w: SSAValue, b_name: str, b: SSAValue, k: int, n: int, x: TensorType
) -> None:
    """``w: [k, n]`` and ``b: [n]`` of the element type of ``x``."""
    wt = tensor_type(op, w_name, w)
    bt = tensor_type(op, b_name, b)
    check_same_element_type(op, [("hidden", x), (w_name, wt), (b_name, bt)])
    if tuple(wt.get_shape()) != (k, n):
        raise VerifyException(f"'{op.name}' {w_name} ({type_name(wt)}) must be [{k}, {n}]")
    check_vector(op, b_name, bt, n)


def check_hidden(op: Operation, hidden: SSAValue) -> TensorType:
    t = tensor_type(op, "hidden", hidden)
    check_element_type(op, "hidden", t, FLOAT_TYPES)
    if t.get_num_dims() != 3:
        raise VerifyException(f"'{op.name}' hidden ({type_name(t)}) must be [B, S, E]")
    return t


def heads_width(op: Operation) -> int:
    heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
    check_positive(op, "num_heads", heads)
    check_positive(op, "head_dim", dim)
    return heads * dim


@irdl_op_definition
class AttentionBlockOp(IRDLOperation):
    """Self-attention with its projections.

    ``qkv = hidden @ qkv_w + qkv_b`` is split into ``q, k, v`` on the last axis (each
    ``h = num_heads * head_dim`` wide), ``attention(q, k, v, mask)`` with the default scale, then
    ``@ out_w + out_b``. ``hidden: [B, S, E]``, ``qkv_w: [E, 3h]``, ``out_w: [h, E_out]``,
    ``mask: [B, S]``.
    """

    name = "fused.attention_block"
    hidden = operand_def()
    qkv_w = operand_def()
    qkv_b = operand_def()
    out_w = operand_def()
    out_b = operand_def()
    mask = operand_def()
    result = result_def()
    num_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        hidden: SSAValue,
        qkv_w: SSAValue,
        qkv_b: SSAValue,
        out_w: SSAValue,
        out_b: SSAValue,
        mask: SSAValue,
        num_heads: int,
        head_dim: int,
        result_type: Attribute,
    ):
        super().__init__(
            operands=[hidden, qkv_w, qkv_b, out_w, out_b, mask],
            result_types=[result_type],
            properties={"num_heads": i64_attr(num_heads), "head_dim": i64_attr(head_dim)},
        )

    def verify_(self) -> None:
        h = heads_width(self)
        x = check_hidden(self, self.hidden)
        batch, seq, width = x.get_shape()
        out_w = tensor_type(self, "out_w", self.out_w)
        if out_w.get_num_dims() != 2:
            raise VerifyException(f"'{self.name}' out_w ({type_name(out_w)}) must be [{h}, N]")
        n = out_w.get_shape()[1]
        check_linear(self, "qkv_w", self.qkv_w, "qkv_b", self.qkv_b, width, 3 * h, x)
        check_linear(self, "out_w", self.out_w, "out_b", self.out_b, h, n, x)
        check_mask(self, self.mask, batch, seq)
        res = tensor_type(self, "result", self.result)
        check_same_element_type(self, [("hidden", x), ("result", res)])
        check_result_shape(self, res, (batch, seq, n))

    def decompose(self) -> Decomposition:
        return decompositions.decompose_attention_block(self)


@irdl_op_definition
class TransformerLayerOp(IRDLOperation):
    """A post-LN BERT encoder layer.

    ``h1 = layer_norm(attention_block(hidden) + hidden, ln1_g, ln1_b, eps1)`` and
    ``out = layer_norm(fc2(act(fc1(h1))) + h1, ln2_g, ln2_b, eps2)``, where
    ``fc1(y) = y @ fc1_w + fc1_b`` and ``fc2`` likewise.
    """

    name = "fused.transformer_layer"
    hidden = operand_def()
    mask = operand_def()
    qkv_w = operand_def()
    qkv_b = operand_def()
    out_w = operand_def()
    out_b = operand_def()
    ln1_g = operand_def()
    ln1_b = operand_def()
    fc1_w = operand_def()
    fc1_b = operand_def()
    fc2_w = operand_def()
    fc2_b = operand_def()
    ln2_g = operand_def()
    ln2_b = operand_def()
    result = result_def()
    num_heads = prop_def(I64Attr)
    head_dim = prop_def(I64Attr)
    intermediate_size = prop_def(I64Attr)
    eps1 = prop_def(F32Attr, default_value=f32_attr(1e-5))
    eps2 = prop_def(F32Attr, default_value=f32_attr(1e-5))
    activation = prop_def(StringAttr, default_value=StringAttr("gelu"))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        operands: Sequence[SSAValue],
        num_heads: int,
        head_dim: int,
        intermediate_size: int,
        eps1: float = 1e-5,
        eps2: float = 1e-5,
        activation: str = "gelu",
    ):
        super().__init__(
            operands=list(operands),
            result_types=[operands[0].type],
            properties={
                "num_heads": i64_attr(num_heads),
                "head_dim": i64_attr(head_dim),
                "intermediate_size": i64_attr(intermediate_size),
                "eps1": f32_attr(eps1),
                "eps2": f32_attr(eps2),
                "activation": StringAttr(activation),
            },
        )

    def verify_(self) -> None:
        h = heads_width(self)
        inter = int_prop(self, "intermediate_size")
        check_positive(self, "intermediate_size", inter)
        check_positive(self, "eps1", float_prop(self, "eps1"))
        check_positive(self, "eps2", float_prop(self, "eps2"))
        check_choice(self, "activation", str_prop(self, "activation"), ACTIVATIONS)
        x = check_hidden(self, self.hidden)
        batch, seq, width = x.get_shape()
        check_mask(self, self.mask, batch, seq)
        check_linear(self, "qkv_w", self.qkv_w, "qkv_b", self.qkv_b, width, 3 * h, x)
        check_linear(self, "out_w", self.out_w, "out_b", self.out_b, h, width, x)
        check_linear(self, "fc1_w", self.fc1_w, "fc1_b", self.fc1_b, width, inter, x)
        check_linear(self, "fc2_w", self.fc2_w, "fc2_b", self.fc2_b, inter, width, x)
        for name in ("ln1_g", "ln1_b", "ln2_g", "ln2_b"):
            t = tensor_type(self, name, getattr(self, name))
            check_same_element_type(self, [("hidden", x), (name, t)])
            check_vector(self, name, t, width)
        res = tensor_type(self, "result", self.result)
        if res != x:
            raise VerifyException(
                f"'{self.name}' result type {type_name(res)} must equal the hidden type "
                f"{type_name(x)}"
            )

    def decompose(self) -> Decomposition:
        return decompositions.decompose_transformer_layer(self)


# --- regions of scalar IR ------------------------------------------------------------------------


class RegionOp(IRDLOperation):
    """An op over broadcast ``inputs`` whose scalar ``body`` computes one value per element.

    The body has one block argument per input (that input's element type) and ends in
    ``fused.yield`` of one scalar. The body holds scalar ``arith`` and ``math`` ops only.
    """

    inputs = var_operand_def()
    result = result_def()
    body = region_def("single_block")
    traits = traits_def(Pure())

    def verify_body(self) -> tuple[tuple[int, ...], Attribute]:
        """Checks the body against the inputs; returns the inputs' broadcast shape and the
        element type the body yields."""
        types = [tensor_type(self, f"input #{i}", v) for i, v in enumerate(self.inputs)]
        for i, t in enumerate(types):
            check_element_type(self, f"input #{i}", t, ALL_TYPES)
        block = self.body.block
        if len(block.args) != len(types):
            raise VerifyException(
                f"'{self.name}' body has {len(block.args)} block argument(s) for "
                f"{len(types)} input(s); it needs one per input"
            )
        for i, (arg, t) in enumerate(zip(block.args, types, strict=True)):
            if arg.type != t.element_type:
                raise VerifyException(
                    f"'{self.name}' body argument #{i} has type {type_name(arg.type)}, but "
                    f"input #{i} is {type_name(t)}"
                )
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1:
            raise VerifyException(f"'{self.name}' body must end in fused.yield of one value")
        for op in block.ops:
            if op is term:
                continue
            if op.dialect_name() not in ("arith", "math"):
                raise VerifyException(
                    f"'{self.name}' body may hold only arith and math ops, found '{op.name}'"
                )
            for r in op.results:
                if isinstance(r.type, TensorType):
                    raise VerifyException(
                        f"'{self.name}' body op '{op.name}' must compute scalars, "
                        f"got {type_name(r.type)}"
                    )
        shape = broadcast_or_fail(self, [(f"input #{i}", t) for i, t in enumerate(types)])
        return shape, term.values[0].type


@irdl_op_definition
class ElementwiseOp(RegionOp):
    """A fused elementwise region; the inputs broadcast (numpy rules) to the result shape."""

    name = "fused.elementwise"
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(self, inputs: Sequence[SSAValue], result_type: Attribute, body: Region):
        super().__init__(operands=[list(inputs)], result_types=[result_type], regions=[body])

    def verify_(self) -> None:
        shape, elem = self.verify_body()
        res = tensor_type(self, "result", self.result)
        if res.element_type != elem:
            raise VerifyException(
                f"'{self.name}' body yields {type_name(elem)}, but the result is {type_name(res)}"
            )
        if broadcast_shapes(shape, res.get_shape()) != tuple(res.get_shape()):
            raise VerifyException(
                f"'{self.name}' inputs of broadcast shape {list(shape)} do not broadcast to "
                f"the result {type_name(res)}"
            )

    def decompose(self) -> Decomposition:
        """nn ops computing the body (see ``fusec.dialects.scalar_ops``)."""
        from fusec.dialects.scalar_ops import decompose_elementwise

        return decompositions.located(self, decompose_elementwise(self))


@irdl_op_definition
class ReduceOp(RegionOp):
    """A reduction whose value per element is computed by an elementwise prologue ``body``.

    The prologue runs over the inputs' broadcast shape; ``kind`` reduces its ``axes``.
    """

    name = "fused.reduce"
    kind = prop_def(StringAttr)
    axes = prop_def(I64Array)
    keepdims = prop_def(BoolAttr, default_value=bool_attr(False))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        kind: str,
        axes: Sequence[int],
        result_type: Attribute,
        body: Region,
        keepdims: bool = False,
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[result_type],
            regions=[body],
            properties={
                "kind": StringAttr(kind),
                "axes": ints_attr(axes),
                "keepdims": bool_attr(keepdims),
            },
        )

    def reduced_axes(self) -> tuple[int, ...]:
        """The normalised axes over the prologue's (broadcast) shape."""
        shape = broadcast_shapes(*(v.type.get_shape() for v in self.inputs))  # type: ignore
        rank = len(shape or ())
        return tuple(a % rank for a in ints_prop(self, "axes"))

    def verify_(self) -> None:
        check_choice(self, "kind", str_prop(self, "kind"), REDUCE_KINDS)
        shape, elem = self.verify_body()
        res = tensor_type(self, "result", self.result)
        if res.element_type != elem:
            raise VerifyException(
                f"'{self.name}' body yields {type_name(elem)}, but the result is {type_name(res)}"
            )
        axes = check_reduce_axes(self, ints_prop(self, "axes"), len(shape))
        check_result_shape(self, res, reduced_shape(shape, axes, bool_prop(self, "keepdims")))

    def decompose(self) -> Decomposition:
        """nn ops computing the prologue, then the nn reduction (see ``scalar_ops``)."""
        from fusec.dialects.scalar_ops import decompose_reduce

        return decompositions.located(self, decompose_reduce(self))


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends the scalar body of ``fused.elementwise`` and ``fused.reduce``."""

    name = "fused.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ElementwiseOp, ReduceOp), Pure()))
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


def scalar_body(arg_types: Sequence[Attribute]) -> tuple[Region, Block]:
    """An empty single-block region with one argument per type, for building bodies."""
    block = Block(arg_types=list(arg_types))
    return Region(block), block


FUSED_OPS: tuple[type[IRDLOperation], ...] = (
    MatmulBiasActOp,
    ResidualLayerNormOp,
    ResidualRmsNormOp,
    SwigluOp,
    AttentionBlockOp,
    TransformerLayerOp,
    ElementwiseOp,
    ReduceOp,
)

Fused = Dialect("fused", [*FUSED_OPS, YieldOp], [])

__all__ = [
    "ACTIVATIONS",
    "FUSED_OPS",
    "AttentionBlockOp",
    "ElementwiseOp",
    "Fused",
    "MatmulBiasActOp",
    "ReduceOp",
    "ResidualLayerNormOp",
    "ResidualRmsNormOp",
    "SwigluOp",
    "TransformerLayerOp",
    "YieldOp",
    "scalar_body",
    "float_prop",
    "int_prop",
    "str_prop",
    "bool_prop",
]
