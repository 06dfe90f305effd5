"""The table of ONNX op converters, ``ONNX_OPS``: op type to the function that emits ``nn`` ops
for one node (`onnx_ops`; opset 23's fused attention ops, `onnx_attention`), and
`convert_node`, which applies it with one-line errors.
"""

from __future__ import annotations

from fusec.dialects import nn
from fusec.errors import error_line
from fusec.frontends import onnx_ops as ops
from fusec.frontends.onnx_attention import convert_attention, convert_rotary_embedding
from fusec.frontends.onnx_import import Importer, OnnxImportError, Value, op_version_error
from fusec.frontends.onnx_ops import Converter

ONNX_OPS: dict[str, Converter] = {
    "Add": ops.binary(nn.AddOp),
    "Sub": ops.binary(nn.SubOp),
    "Mul": ops.binary(nn.MulOp),
    "Div": ops.binary(nn.DivOp),
    "Pow": ops.convert_pow,
    "Max": ops.convert_variadic(nn.MaxOp),
    "Min": ops.convert_variadic(nn.MinOp),
    "Sum": ops.convert_variadic(nn.AddOp),
    "Relu": ops.unary(nn.ReluOp),
    "Sigmoid": ops.unary(nn.SigmoidOp),
    "Tanh": ops.unary(nn.TanhOp),
    "Exp": ops.unary(nn.ExpOp),
    "Log": ops.unary(nn.LogOp),
    "Sqrt": ops.unary(nn.SqrtOp),
    "Neg": ops.unary(nn.NegOp),
    "Abs": ops.unary(nn.AbsOp),
    "Erf": ops.unary(nn.ErfOp),
    "Sin": ops.unary(nn.SinOp),
    "Cos": ops.unary(nn.CosOp),
    "Reciprocal": ops.convert_reciprocal,
    "Gelu": ops.convert_gelu,
    "Clip": ops.convert_clip,
    "Equal": ops.compare("eq"),
    "Less": ops.compare("lt"),
    "LessOrEqual": ops.compare("le"),
    "Greater": ops.compare("gt"),
    "GreaterOrEqual": ops.compare("ge"),
    "And": ops.convert_and,
    "Or": ops.convert_or,
    "Xor": ops.convert_xor,
    "Not": ops.convert_not,
    "Where": ops.convert_where,
    "IsNaN": ops.convert_isnan,
    "IsInf": ops.convert_isinf,
    "Cast": ops.convert_cast,
    "CastLike": ops.convert_cast_like,
    "Identity": ops.convert_identity,
    "Dropout": ops.convert_dropout,
    "MatMul": ops.convert_matmul,
    "Gemm": ops.convert_gemm,
    "Reshape": ops.convert_reshape,
    "Flatten": ops.convert_flatten,
    "Squeeze": ops.convert_squeeze,
    "Unsqueeze": ops.convert_unsqueeze,
    "Transpose": ops.convert_transpose,
    "Slice": ops.convert_slice,
    "Split": ops.convert_split,
    "Concat": ops.convert_concat,
    "Expand": ops.convert_expand,
    "Gather": ops.convert_gather,
    "GatherND": ops.convert_gather_nd,
    "GatherElements": ops.convert_gather_elements,
    "CumSum": ops.convert_cumsum,
    "Tile": ops.convert_tile,
    "Trilu": ops.convert_trilu,
    "RMSNormalization": ops.convert_rms_norm,
    "Softmax": ops.convert_softmax,
    "LayerNormalization": ops.convert_layer_norm,
    "Attention": convert_attention,
    "RotaryEmbedding": convert_rotary_embedding,
    "ReduceSum": ops.reduction("sum", 13),
    "ReduceMean": ops.reduction("mean", 18),
    "ReduceMax": ops.reduction("max", 18),
    "ReduceMin": ops.reduction("min", 18),
}


def convert_node(imp: Importer, node: object, args: list[Value | None]) -> list[Value]:
    """The node's outputs as IR; a one-line error for an op type or form not supported."""
    domain = node.domain  # type: ignore[attr-defined]
    op_type = node.op_type  # type: ignore[attr-defined]
    if domain not in ("", "ai.onnx") or op_type not in ONNX_OPS:
        raise imp.error("not supported")
    version_error = op_version_error(op_type, imp.opset)
    if version_error is not None:
        raise imp.error(version_error)
    try:
        return ONNX_OPS[op_type](imp, node, args)
    except OnnxImportError:
        raise
    except Exception as e:  # a verifier or shape error on this node: still one line
        first = error_line(e)
        raise imp.error(first) from None
