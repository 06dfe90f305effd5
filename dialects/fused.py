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
from typing import ClassVar

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    I64,
    IndexType,
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
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from fusec.dialects import decompositions
from fusec.dialects.column_stats import (
    COLUMN_STATS_OPS,
    CenteredGramOp,
    ExplainedVarianceOp,
    PowerStepNormalizeOp,
)
from fusec.dialects.common import (
    CAST_TYPES,
    FLOAT_TYPES,
    bool_attr,
    bool_prop,
    broadcast_or_fail,
    broadcast_shapes,
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
    str_prop,
    tensor_type,
    type_name,
)
from fusec.dialects.decompositions import Decomposition
from fusec.dialects.image_normalize import ImageNormalizeOp
from fusec.dialects.nn import REDUCE_KINDS, check_mask, check_reduce_axes, reduced_shape
from fusec.dialects.index_maps import IndexMap, broadcast_map, from_affine
from fusec.dialects.op_kinds import OpKind

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
    FUSION_KIND: ClassVar[OpKind] = OpKind.GEMM
    COLUMN_OPERANDS: ClassVar[tuple[str, ...]] = ("w", "bias")
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
    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION
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
    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION
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
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
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
    FUSION_KIND: ClassVar[OpKind] = OpKind.GEMM
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
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
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
    """An op over broadcast ``inputs`` whose scalar ``body`` computes values per element.

    The body has one block argument per input (that input's element type) and ends in
    ``fused.yield`` of one scalar per result. The body holds scalar ``arith`` and ``math`` ops
    only (``fused.row_reduce`` also ``fused.reduce_value``).
    """

    inputs = var_operand_def()
    body = region_def("single_block")
    traits = traits_def(Pure())

    BODY_EXTRA_OPS: ClassVar[tuple[str, ...]] = ()
    """Names of non-``arith``/``math`` ops the body may also hold."""

    def verify_body(
        self, yields: int = 1, broadcast: bool = True
    ) -> tuple[tuple[int, ...], list[Attribute]]:
        """Checks the body against the inputs; returns the inputs' broadcast shape (with
        ``broadcast``; else ``()``) and the element types the body yields (``yields`` of
        them)."""
        types = [tensor_type(self, f"input #{i}", v) for i, v in enumerate(self.inputs)]
        for i, t in enumerate(types):
            check_element_type(self, f"input #{i}", t, CAST_TYPES)
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
        if not isinstance(term, YieldOp) or len(term.values) != yields:
            what = "one value" if yields == 1 else f"{yields} values (one per result)"
            raise VerifyException(f"'{self.name}' body must end in fused.yield of {what}")
        for op in block.ops:
            if op is term:
                continue
            if op.dialect_name() not in ("arith", "math") and op.name not in self.BODY_EXTRA_OPS:
                raise VerifyException(
                    f"'{self.name}' body may hold only arith and math ops, found '{op.name}'"
                )
            for r in op.results:
                if isinstance(r.type, TensorType):
                    raise VerifyException(
                        f"'{self.name}' body op '{op.name}' must compute scalars, "
                        f"got {type_name(r.type)}"
                    )
        if not broadcast:
            return (), [v.type for v in term.values]
        shape = broadcast_or_fail(self, [(f"input #{i}", t) for i, t in enumerate(types)])
        return shape, [v.type for v in term.values]


@irdl_op_definition
class ElementwiseOp(RegionOp):
    """A fused elementwise region; the inputs broadcast (numpy rules) to the result shape.

    A region may have several results (``fused.yield`` then yields one scalar per result, in
    order): the extra ones are intermediates that other code reads, stored by the same kernel
    (``fuse-multi-output``). All results have one shape; element types may differ.

    With ``indexing_maps`` (one ``affine_map`` per input, from the result's index to the
    input's: ``d_k``, ``d_k + c`` or ``c`` per input dimension, each index clamped into the
    input's bounds; see ``dialects/index_maps.py``) the inputs are read through those maps
    instead of broadcast: transposed, sliced, or shifted into a piece of a concat, which the
    body selects with ``fused.index`` (the element's position along a dimension).
    """

    name = "fused.elementwise"
    FUSION_KIND: ClassVar[OpKind] = OpKind.ELEMENTWISE
    outputs = var_result_def()
    indexing_maps = opt_prop_def(ArrayAttr[AffineMapAttr])
    BODY_EXTRA_OPS: ClassVar[tuple[str, ...]] = ("fused.index",)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $outputs) $body"

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_type: Attribute | Sequence[Attribute],
        body: Region,
        indexing_maps: Sequence[AffineMapAttr] | None = None,
    ):
        types = [result_type] if isinstance(result_type, Attribute) else list(result_type)
        props = {} if indexing_maps is None else {"indexing_maps": ArrayAttr(indexing_maps)}
        super().__init__(
            operands=[list(inputs)], result_types=[types], regions=[body], properties=props
        )

    def input_maps(self) -> list[IndexMap]:
        """How each input is read at a point of the result: its index map, or the broadcast."""
        out = tuple(self.results[0].type.get_shape())  # type: ignore[attr-defined]
        if self.indexing_maps is None:
            return [broadcast_map(v.type.get_shape(), out) for v in self.inputs]  # type: ignore
        maps = [from_affine(m) for m in self.indexing_maps.data]
        assert all(m is not None for m in maps), "verified maps"
        return maps  # type: ignore[return-value]

    def verify_maps(self, rank: int) -> None:
        assert self.indexing_maps is not None
        maps = self.indexing_maps.data
        if len(maps) != len(self.inputs):
            raise VerifyException(
                f"'{self.name}' has {len(maps)} indexing map(s) for {len(self.inputs)} input(s)"
            )
        for i, (attr, v) in enumerate(zip(maps, self.inputs, strict=True)):
            t = tensor_type(self, f"input #{i}", v)
            terms = from_affine(attr)
            bad = (
                terms is None
                or attr.data.num_dims != rank
                or attr.data.num_symbols
                or len(terms) != t.get_num_dims()
            )
            dims = [d for d, _ in terms or () if d is not None]
            if bad or len(set(dims)) != len(dims) or any(d >= rank for d in dims):
                raise VerifyException(
                    f"'{self.name}' indexing map #{i} {attr.data} must map the {rank} result "
                    f"dimensions to the {t.get_num_dims()} of {type_name(t)}, each index "
                    "d_k, d_k + c or c, no d_k twice"
                )

    @property
    def result(self) -> SSAValue:
        """The first (for a one-result region: the) result."""
        return self.results[0]

    def verify_(self) -> None:
        if not self.results:
            raise VerifyException(f"'{self.name}' must have at least one result")
        mapped = self.indexing_maps is not None
        shape, elems = self.verify_body(len(self.results), broadcast=not mapped)
        first = tensor_type(self, "result", self.results[0])
        if mapped:
            self.verify_maps(first.get_num_dims())
        for i, (r, elem) in enumerate(zip(self.results, elems, strict=True)):
            what = "result" if len(self.results) == 1 else f"result #{i}"
            res = tensor_type(self, what, r)
            if res.element_type != elem:
                raise VerifyException(
                    f"'{self.name}' body yields {type_name(elem)}, but the {what} is "
                    f"{type_name(res)}"
                )
            if tuple(res.get_shape()) != tuple(first.get_shape()):
                raise VerifyException(
                    f"'{self.name}' results must have one shape: {type_name(first)} and "
                    f"{type_name(res)}"
                )
        if not mapped and broadcast_shapes(shape, first.get_shape()) != tuple(first.get_shape()):
            raise VerifyException(
                f"'{self.name}' inputs of broadcast shape {list(shape)} do not broadcast to "
                f"the result {type_name(first)}"
            )

    def decompose(self) -> Decomposition:
        """nn ops computing the body (see ``fusec.dialects.scalar_ops``); with index maps, the
        inputs' views and a concat per ``fused.index`` select (``view_decompositions``)."""
        if self.indexing_maps is not None:
            from fusec.dialects.view_decompositions import decompose_mapped

            return decompositions.located(self, decompose_mapped(self))
        from fusec.dialects.scalar_ops import decompose_elementwise

        return decompositions.located(self, decompose_elementwise(self))


@irdl_op_definition
class ReduceOp(RegionOp):
    """A reduction whose value per element is computed by an elementwise prologue ``body``.

    The prologue runs over the inputs' broadcast shape; ``kind`` reduces its ``axes``.
    """

    name = "fused.reduce"
    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION
    result = result_def()
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
        shape, (elem,) = self.verify_body()
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
class ReduceValueOp(IRDLOperation):
    """In a ``fused.row_reduce`` body: ``kind`` (sum, mean, max, min) of ``value`` over the row.

    ``value`` is a per-element scalar of the row; the result is the same at every element of
    the row, so later body ops can combine it with per-element values (reduce, then
    broadcast). A ``max``/``min`` of a row holding NaN is NaN, as numpy's.
    """

    name = "fused.reduce_value"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    value = operand_def()
    result = result_def()
    kind = prop_def(StringAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value attr-dict `:` type($value) `->` type($result)"

    def __init__(self, value: SSAValue, kind: str):
        super().__init__(
            operands=[value], result_types=[value.type], properties={"kind": StringAttr(kind)}
        )

    def verify_(self) -> None:
        check_choice(self, "kind", str_prop(self, "kind"), REDUCE_KINDS)
        if self.result.type != self.value.type:
            raise VerifyException(
                f"'{self.name}' result type {type_name(self.result.type)} must equal the "
                f"operand type {type_name(self.value.type)}"
            )
        parent = self.parent_op()
        if parent is None or parent.name not in ("fused.row_reduce", "kernel.template"):
            raise VerifyException(f"'{self.name}' must be in the body of a fused.row_reduce")


@irdl_op_definition
class RowReduceOp(RegionOp):
    """Rows reduced and broadcast back, in one kernel: softmax, centering, LayerNorm written out.

    The body runs at every element of the result shape; the row is its ``axis`` (default the
    last; a middle or first axis makes strided rows: ``x - mean(x, 1)`` of a 3-d tensor, column
    statistics of a matrix over axis 0). Besides
    scalar ``arith``/``math`` ops it holds ``fused.reduce_value`` ops (at least one), each the
    reduction of a per-element value over the row; later ops may use it at every element of
    the row, and later reductions may read it (chains: max, then the sum of ``exp(x - max)``).
    The inputs broadcast (numpy rules) to the result shape; an input whose last dimension is 1
    is per row, one of rank 1 per column.
    """

    name = "fused.row_reduce"
    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION
    result = result_def()
    axis = prop_def(I64Attr, default_value=i64_attr(-1))
    BODY_EXTRA_OPS: ClassVar[tuple[str, ...]] = ("fused.reduce_value",)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(
        self, inputs: Sequence[SSAValue], result_type: Attribute, body: Region, axis: int = -1
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[result_type],
            regions=[body],
            properties={"axis": i64_attr(axis)},
        )

    def reductions(self) -> list[ReduceValueOp]:
        return [o for o in self.body.block.ops if isinstance(o, ReduceValueOp)]

    def row_axis(self) -> int:
        """The reduced axis of the result shape, normalised (0 .. rank - 1)."""
        rank = self.result.type.get_num_dims()  # type: ignore[attr-defined]
        return int_prop(self, "axis") % rank

    def verify_(self) -> None:
        shape, (elem,) = self.verify_body()
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "result", res, CAST_TYPES)
        if res.element_type != elem:
            raise VerifyException(
                f"'{self.name}' body yields {type_name(elem)}, but the result is {type_name(res)}"
            )
        if res.get_num_dims() < 1:
            raise VerifyException(f"'{self.name}' result ({type_name(res)}) must have rank >= 1")
        check_axis(self, "axis", int_prop(self, "axis"), res.get_num_dims())
        if broadcast_shapes(shape, res.get_shape()) != tuple(res.get_shape()):
            raise VerifyException(
                f"'{self.name}' inputs of broadcast shape {list(shape)} do not broadcast to "
                f"the result {type_name(res)}"
            )
        if not self.reductions():
            raise VerifyException(
                f"'{self.name}' body must hold at least one fused.reduce_value "
                "(else it is a fused.elementwise)"
            )

    def decompose(self) -> Decomposition:
        """nn ops computing the body; each reduction an ``nn.reduce_*`` over ``axis`` with
        ``keepdims`` (see ``scalar_ops``)."""
        from fusec.dialects.scalar_ops import decompose_row_reduce

        return decompositions.located(self, decompose_row_reduce(self))


@irdl_op_definition
class MatmulEpilogueOp(IRDLOperation):
    """``epilogue(x @ w, extras...)``: a matmul whose every output element goes through a scalar
    ``body`` before it is stored (alpha and beta, an added matrix, row and column scales,
    clamps, activations), generalizing ``fused.matmul_bias_act``.

    The body's arguments are the product's element, then one scalar per ``extras`` operand,
    each broadcast (numpy rules) to the product's shape; it holds scalar ``arith``/``math``
    ops and ends in ``fused.yield`` of one value.
    """

    name = "fused.matmul_epilogue"
    FUSION_KIND: ClassVar[OpKind] = OpKind.GEMM
    x = operand_def()
    w = operand_def()
    extras = var_operand_def()
    result = result_def()
    body = region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results) $body"

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        extras: Sequence[SSAValue],
        result_type: Attribute,
        body: Region,
    ):
        super().__init__(operands=[x, w, list(extras)], result_types=[result_type],
                         regions=[body])

    def verify_(self) -> None:
        x = tensor_type(self, "x", self.x)
        w = tensor_type(self, "w", self.w)
        res = tensor_type(self, "result", self.result)
        check_element_type(self, "x", x, FLOAT_TYPES)
        check_same_element_type(self, [("x", x), ("w", w)])
        shape = matmul_shape(self, x, w, "x", "w")
        check_result_shape(self, res, shape)
        block = self.body.block
        extras = [tensor_type(self, f"extra #{i}", v) for i, v in enumerate(self.extras)]
        want = [x.element_type, *(t.element_type for t in extras)]
        if [a.type for a in block.args] != want:
            raise VerifyException(
                f"'{self.name}' body arguments must be the product's element type, then one "
                f"per extra of its element type: ({', '.join(type_name(t) for t in want)})"
            )
        for i, t in enumerate(extras):
            if broadcast_shapes(tuple(t.get_shape()), tuple(shape)) != tuple(shape):
                raise VerifyException(
                    f"'{self.name}' extra #{i} ({type_name(t)}) does not broadcast to the "
                    f"product's shape {list(shape)}"
                )
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1:
            raise VerifyException(f"'{self.name}' body must end in fused.yield of one value")
        if term.values[0].type != res.element_type:
            raise VerifyException(
                f"'{self.name}' body yields {type_name(term.values[0].type)}, but the result is "
                f"{type_name(res)}"
            )
        for op in block.ops:
            if op is not term and op.dialect_name() not in ("arith", "math"):
                raise VerifyException(
                    f"'{self.name}' body may hold only arith and math ops, found '{op.name}'"
                )

    def decompose(self) -> Decomposition:
        """``nn.matmul``, then nn ops computing the body over the product and the extras."""
        from fusec.dialects.scalar_ops import decompose_matmul_epilogue

        return decompositions.located(self, decompose_matmul_epilogue(self))


@irdl_op_definition
class IndexOp(IRDLOperation):
    """In a ``fused.elementwise`` body: the element's position along result dimension ``dim``
    (``linalg.index``); a concat taken into the region selects its piece by it."""

    name = "fused.index"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    dim = prop_def(I64Attr)
    result = result_def(IndexType)
    traits = lazy_traits_def(lambda: (HasParent(ElementwiseOp), Pure()))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, dim: int):
        super().__init__(result_types=[IndexType()], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self) -> None:
        parent = self.parent_op()
        rank = len(parent.results[0].type.get_shape()) if parent and parent.results else 0  # type: ignore[attr-defined]
        if not 0 <= self.dim.value.data < rank:
            raise VerifyException(
                f"'{self.name}' dim {self.dim.value.data} is not a dimension of the rank-{rank} "
                "result"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends the scalar body of ``fused.elementwise``, ``fused.reduce``, ``fused.row_reduce`` and
    ``fused.matmul_epilogue``."""

    name = "fused.yield"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ElementwiseOp, ReduceOp, RowReduceOp, MatmulEpilogueOp), Pure()))
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
    RowReduceOp,
    MatmulEpilogueOp,
    *COLUMN_STATS_OPS,
    ImageNormalizeOp,
)

Fused = Dialect("fused", [*FUSED_OPS, ReduceValueOp, IndexOp, YieldOp], [])

__all__ = [
    "ACTIVATIONS",
    "FUSED_OPS",
    "AttentionBlockOp",
    "CenteredGramOp",
    "ExplainedVarianceOp",
    "PowerStepNormalizeOp",
    "ElementwiseOp",
    "Fused",
    "ImageNormalizeOp",
    "IndexOp",
    "MatmulBiasActOp",
    "MatmulEpilogueOp",
    "ReduceOp",
    "ReduceValueOp",
    "ResidualLayerNormOp",
    "ResidualRmsNormOp",
    "RowReduceOp",
    "SwigluOp",
    "TransformerLayerOp",
    "YieldOp",
    "scalar_body",
    "float_prop",
    "int_prop",
    "str_prop",
    "bool_prop",
]
