"""The aten op converters: one table, ``FX_OPS``, from op name (``aten.linear``) to a function
that emits ``nn`` ops for one FX node.

A converter takes the `FxImporter`, the node and its arguments by schema name (defaults filled
in, nodes replaced by their values: an ``SSAValue``, a constant ``torch.Tensor``, a Python
number, list or None) and returns the node's value (a tuple for ops with several results). It
builds IR with the ONNX converters' builders (`onnx_ops`: broadcast, reshape, expand, narrow,
matmul, where...). Result shapes and dtypes are read from the node's ``meta["val"]``, which
``make_fx`` and ``torch.export`` record, so that PyTorch's type promotion and view rules are
not restated here.

`unsupported_reason` says why a node cannot be converted (None when it can): the dynamo backend
leaves such nodes to PyTorch. `convert_node` computes a node whose tensor operands are all
constants with PyTorch (masks from ``arange``, ``full``), and converts the others.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, SSAValue

from fusec.dialects import nn
from fusec.dialects.common import element_of, ints_prop, shape_of
from fusec.errors import error_line
from fusec.frontends.onnx_ops import (
    broadcast,
    convert_and,
    convert_or,
    expand,
    logical_not,
    matmul,
    narrow,
    splat,
    tensor_type,
    where,
)
from fusec.frontends.onnx_ops import reshape as onnx_reshape
from fusec.frontends.torch_fx import FxImporter, TorchImportError, element_type_of, op_name

Converter = Callable[[FxImporter, Any, dict[str, Any]], Any]


# --- what a node's arguments and result are ------------------------------------------------------


def meta(node: Any) -> Any:
    """The node's example result (a FakeTensor, or a list of them), or None."""
    return node.meta.get("val")


def result_dtype(imp: FxImporter, node: Any) -> Any:
    value = meta(node)
    if value is None or not hasattr(value, "dtype"):
        raise imp.error("the node has no recorded result type (trace it with make_fx or "
                        "torch.export)")
    return value.dtype


def result_shape(node: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in meta(node).shape)


def ir_type(imp: FxImporter, dtype: Any) -> Attribute:
    elem = element_type_of(dtype)
    if elem is None:
        raise imp.error(f"dtype {dtype} is not supported")
    return elem


def operand(imp: FxImporter, value: Any, dtype: Any) -> SSAValue:
    """``value`` (IR, a constant tensor or a Python number) as IR of PyTorch dtype ``dtype``."""
    import torch

    elem = ir_type(imp, dtype)
    if isinstance(value, SSAValue):
        if element_of(value) == elem:
            return value
        return imp.emit(nn.CastOp(value, tensor_type(elem, shape_of(value))))
    if isinstance(value, bool | int | float):
        return splat(imp, bool(value) if elem == i1 else value, elem)
    if isinstance(value, torch.Tensor):
        return imp.tensor(value if value.dtype == dtype else value.to(dtype))
    raise imp.error(f"operand of type {type(value).__name__} is not supported")


def on_host(value: Any) -> Any:
    """A value folded at import time with its tensors on the CPU (a node such as ``arange(...,
    device="cuda")`` folds to a CUDA tensor; the importer's other constants are on the host)."""
    import torch

    return torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: t.cpu(), value)


def promoted(node: Any, *values: Any) -> Any:
    """PyTorch's result type of ``values`` (the node's tensor arguments or numbers)."""
    import torch

    stand_ins: list[Any] = []
    for value in values:
        if hasattr(value, "meta") and meta(value) is not None:
            example = meta(value)
            stand_ins.append(torch.empty([1] * example.dim(), dtype=example.dtype))
        elif isinstance(value, torch.Tensor):
            stand_ins.append(torch.empty([1] * value.dim(), dtype=value.dtype))
        else:
            stand_ins.append(value)
    dtype = torch.result_type(stand_ins[0], stand_ins[1]) if len(stand_ins) > 1 else (
        stand_ins[0].dtype)
    return dtype


def axis_of(imp: FxImporter, axis: int, rank: int) -> int:
    if not -max(rank, 1) <= axis < max(rank, 1):
        raise imp.error(f"dim {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def emit_binary(imp: FxImporter, cls: type[nn.BinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
    if element_of(a) not in cls.ALLOWED_TYPES:
        raise imp.error(f"{element_of(a)} operands are not supported")
    shape = broadcast(imp, a, b)
    return imp.emit(cls(a, b, tensor_type(element_of(a), shape)))


# --- elementwise ---------------------------------------------------------------------------------


def arithmetic(cls: type[nn.BinaryOp], reverse: bool = False) -> Converter:
    """``input op other`` (``other * alpha`` for add and sub; ``reverse`` for rsub)."""

    def convert(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
        dtype = result_dtype(imp, node)
        a = operand(imp, kw["input"], dtype)
        b = operand(imp, kw["other"], dtype)
        alpha = kw.get("alpha", 1)
        if alpha is not None and alpha != 1:
            b = emit_binary(imp, nn.MulOp, b, splat(imp, alpha, element_of(b)))
        return emit_binary(imp, cls, b, a) if reverse else emit_binary(imp, cls, a, b)

    return convert


def convert_div(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    if kw.get("rounding_mode") is not None:
        raise imp.error(f"rounding_mode '{kw['rounding_mode']}' is not supported")
    return arithmetic(nn.DivOp)(imp, node, kw)


def convert_pow(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    x = operand(imp, kw["input"], dtype)
    exponent = kw["exponent"]
    if isinstance(exponent, int | float) and exponent == 2:
        return emit_binary(imp, nn.MulOp, x, x)
    if isinstance(exponent, int | float) and exponent == 0.5:
        return imp.emit(nn.SqrtOp(x))
    return emit_binary(imp, nn.PowOp, x, operand(imp, exponent, dtype))


def unary(cls: type[nn.UnaryOp]) -> Converter:
    def convert(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
        x = operand(imp, kw["input"], result_dtype(imp, node))
        if element_of(x) not in cls.ALLOWED_TYPES:
            raise imp.error(f"{element_of(x)} operands are not supported")
        return imp.emit(cls(x))

    return convert


def convert_gelu(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    approximate = kw.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise imp.error(f"approximate '{approximate}' is not supported")
    x = operand(imp, kw["input"], result_dtype(imp, node))
    return imp.emit(nn.GeluOp(x, approximate))


def convert_reciprocal(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    return emit_binary(imp, nn.DivOp, splat(imp, 1.0, element_of(x)), x)


def convert_square(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    return emit_binary(imp, nn.MulOp, x, x)


def convert_clamp(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    x = operand(imp, kw["input"], dtype)
    low = kw.get("min")
    high = kw.get("max")
    if low is not None:
        x = emit_binary(imp, nn.MaxOp, x, operand(imp, low, dtype))
    if high is not None:
        x = emit_binary(imp, nn.MinOp, x, operand(imp, high, dtype))
    return x


def compare(predicate: str) -> Converter:
    def convert(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
        dtype = promoted(node, node_arg(node, 0, "input", kw), node_arg(node, 1, "other", kw))
        a = operand(imp, kw["input"], dtype)
        b = operand(imp, kw["other"], dtype)
        shape = broadcast(imp, a, b)
        if element_of(a) == i1:  # bools: equal is "not xor", not-equal is "xor"
            if predicate not in ("eq", "ne"):
                raise imp.error("ordering comparisons of bool tensors are not supported")
            same = where(imp, a, b, logical_not(imp, b, shape), shape)
            return same if predicate == "eq" else logical_not(imp, same)
        return imp.emit(nn.CmpOp(a, b, predicate, tensor_type(i1, shape)))

    return convert


def node_arg(node: Any, index: int, name: str, kw: dict[str, Any]) -> Any:
    """The node's argument ``index`` as written in the graph (a Node for a tensor), for type
    promotion; the normalised value when it was passed by name."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, kw[name])


def logical(combine: Callable[..., Any]) -> Converter:
    def convert(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
        import torch

        a = operand(imp, kw["input"], torch.bool)
        b = operand(imp, kw["other"], torch.bool)
        return combine(imp, None, [a, b])[0]

    return convert


def convert_not(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    import torch

    if result_dtype(imp, node) != torch.bool:
        raise imp.error("bitwise not of integers is not supported")
    return logical_not(imp, operand(imp, kw["input"], torch.bool))


def convert_where(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    import torch

    dtype = result_dtype(imp, node)
    cond = operand(imp, kw["condition"], torch.bool)
    return where(imp, cond, operand(imp, kw["input"], dtype), operand(imp, kw["other"], dtype))


def convert_masked_fill(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    import torch

    dtype = result_dtype(imp, node)
    x = operand(imp, kw["input"], dtype)
    mask = operand(imp, kw["mask"], torch.bool)
    fill = operand(imp, kw["value"], dtype)
    return where(imp, mask, fill, x, broadcast(imp, mask, x))


def convert_cast(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    return operand(imp, kw["input"], result_dtype(imp, node))


def convert_identity(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    return kw["input"]


def convert_dropout(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    if kw.get("train") and kw.get("p", 0.0) > 0:
        raise imp.error("dropout in training mode is not supported")
    return kw["input"]


def convert_nothing(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    """Checks that ``torch.export`` inserts (``_assert_tensor_metadata``): no value."""
    return None


# --- contraction ---------------------------------------------------------------------------------


def transpose_last(imp: FxImporter, x: SSAValue) -> SSAValue:
    shape = shape_of(x)
    if len(shape) < 2:
        return x
    perm = [*range(len(shape) - 2), len(shape) - 1, len(shape) - 2]
    return imp.emit(nn.TransposeOp(x, perm, tensor_type(element_of(x), [shape[p] for p in perm])))


def linear(imp: FxImporter, x: SSAValue, weight: Any, bias: Any, dtype: Any) -> SSAValue:
    """``x @ weight^T + bias``."""
    y = matmul(imp, x, transpose_last(imp, operand(imp, weight, dtype)))
    if bias is not None:
        y = emit_binary(imp, nn.AddOp, y, operand(imp, bias, dtype))
    return y


def convert_linear(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    return linear(imp, operand(imp, kw["input"], dtype), kw["weight"], kw.get("bias"), dtype)


def convert_encoder_layer(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    """``nn.TransformerEncoderLayer``'s inference fast path (``batch_first``, no mask): the
    layer written out, attention as one ``nn.attention`` on the packed QKV projection."""
    if kw.get("mask") is not None:
        raise imp.error("the fast path with a mask is not supported")
    dtype = result_dtype(imp, node)
    x = operand(imp, kw["src"], dtype)
    width, heads = int(kw["embed_dim"]), int(kw["num_heads"])
    eps = float(kw["eps"])

    def norm(h: SSAValue, index: int) -> SSAValue:
        gamma = norm_vector(imp, kw[f"norm_weight_{index}"], dtype, width, 1.0)
        beta = norm_vector(imp, kw[f"norm_bias_{index}"], dtype, width, 0.0)
        return imp.emit(nn.LayerNormOp(h, gamma, beta, -1, eps))

    def self_attention(h: SSAValue) -> SSAValue:
        qkv = linear(imp, h, kw["qkv_weight"], kw["qkv_bias"], dtype)
        q, k, v = (narrow(imp, qkv, 2, i * width, width) for i in range(3))
        a = imp.emit(nn.AttentionOp(q, k, v, heads, width // heads))
        return linear(imp, a, kw["proj_weight"], kw["proj_bias"], dtype)

    def feed_forward(h: SSAValue) -> SSAValue:
        up = linear(imp, h, kw["ffn_weight_1"], kw["ffn_bias_1"], dtype)
        act = imp.emit(nn.GeluOp(up) if kw["use_gelu"] else nn.ReluOp(up))
        return linear(imp, act, kw["ffn_weight_2"], kw["ffn_bias_2"], dtype)

    if len(shape_of(x)) != 3:
        raise imp.error("the fast path on other than [B, S, E] inputs is not supported")
    if kw["norm_first"]:
        x = emit_binary(imp, nn.AddOp, x, self_attention(norm(x, 1)))
        return emit_binary(imp, nn.AddOp, x, feed_forward(norm(x, 2)))
    x = norm(emit_binary(imp, nn.AddOp, x, self_attention(x)), 1)
    return norm(emit_binary(imp, nn.AddOp, x, feed_forward(x)), 2)


def convert_matmul(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    return matmul(imp, operand(imp, kw["input"], dtype), operand(imp, kw["mat2" if "mat2" in kw
                                                                        else "other"], dtype))


def convert_addmm(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    y = matmul(imp, operand(imp, kw["mat1"], dtype), operand(imp, kw["mat2"], dtype))
    alpha, beta = kw.get("alpha", 1), kw.get("beta", 1)
    if alpha != 1:
        y = emit_binary(imp, nn.MulOp, y, splat(imp, alpha, element_of(y)))
    if beta == 0:
        return y
    bias = operand(imp, kw["input"], dtype)
    if beta != 1:
        bias = emit_binary(imp, nn.MulOp, bias, splat(imp, beta, element_of(bias)))
    return emit_binary(imp, nn.AddOp, y, bias)


def convert_t(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    return transpose_last(imp, operand(imp, kw["input"], result_dtype(imp, node)))


# --- shape and data movement ---------------------------------------------------------------------


def convert_reshape(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    """Every op that only reshapes (view, unsqueeze, squeeze, flatten...): to the recorded
    result shape."""
    return reshape(imp, operand(imp, kw["input"], result_dtype(imp, node)), result_shape(node))


def convert_permute(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    rank = len(shape_of(x))
    perm = [axis_of(imp, d, rank) for d in kw["dims"]]
    return permute(imp, x, perm)


def reshape(imp: FxImporter, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    """``x`` reshaped, looking through a reshape that made ``x`` (the ops left unused go at
    the end of the import), so that the views around attention cancel out."""
    if isinstance(x.owner, nn.ReshapeOp):
        x = x.owner.input
    return onnx_reshape(imp, x, shape)


def permute(imp: FxImporter, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    """``x`` transposed; a transpose of a transpose is one (or none)."""
    if isinstance(x.owner, nn.TransposeOp):
        inner = list(ints_prop(x.owner, "perm"))
        x, perm = x.owner.input, [inner[p] for p in perm]
    if list(perm) == list(range(len(perm))):
        return x
    shape = shape_of(x)
    return imp.emit(nn.TransposeOp(x, list(perm), tensor_type(element_of(x),
                                                              [shape[p] for p in perm])))


def convert_transpose(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    rank = len(shape_of(x))
    perm = list(range(rank))
    a, b = axis_of(imp, kw["dim0"], rank), axis_of(imp, kw["dim1"], rank)
    perm[a], perm[b] = perm[b], perm[a]
    return permute(imp, x, perm)


def convert_slice(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    if kw.get("step", 1) != 1:
        raise imp.error(f"slice step {kw['step']} is not supported (only 1)")
    shape = shape_of(x)
    axis = axis_of(imp, kw.get("dim", 0), len(shape))
    begin, stop, _ = slice(kw.get("start"), kw.get("end")).indices(shape[axis])
    if stop <= begin:
        raise imp.error(f"empty slice of dim {axis} of {list(shape)}")
    return narrow(imp, x, axis, begin, stop - begin)


def convert_select(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    shape = shape_of(x)
    axis = axis_of(imp, kw["dim"], len(shape))
    index = kw["index"]
    if not -shape[axis] <= index < shape[axis]:
        raise imp.error(f"index {index} is out of range for dim {axis} of {list(shape)}")
    return reshape(imp, narrow(imp, x, axis, index % shape[axis], 1), result_shape(node))


def convert_cat(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    values = [operand(imp, v, dtype) for v in kw["tensors"]]
    values = [v for v in values if math.prod(shape_of(v)) != 0] or values[:1]
    axis = axis_of(imp, kw.get("dim", 0), len(result_shape(node)))
    if len(values) == 1:
        return values[0]
    return imp.emit(nn.ConcatOp(values, axis, tensor_type(ir_type(imp, dtype),
                                                          result_shape(node))))


def convert_expand(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    shape = result_shape(node)
    lead = len(shape) - len(shape_of(x))
    return expand(imp, reshape(imp, x, [*([1] * lead), *shape_of(x)]), shape)


def pieces(imp: FxImporter, node: Any, kw: dict[str, Any]) -> tuple[SSAValue, int, list[int]]:
    """The input, the axis and the piece sizes of a split (from the recorded results)."""
    x = operand(imp, kw["input"], meta(node)[0].dtype)
    axis = axis_of(imp, kw.get("dim", 0), len(shape_of(x)))
    return x, axis, [int(piece.shape[axis]) if piece.dim() == len(shape_of(x)) else 1
                     for piece in meta(node)]


def convert_split(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x, axis, sizes = pieces(imp, node, kw)
    results, start = [], 0
    for size in sizes:
        results.append(narrow(imp, x, axis, start, size) if size else None)
        start += size
    return tuple(results)


def convert_unbind(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x, axis, sizes = pieces(imp, node, kw)
    return tuple(reshape(imp, narrow(imp, x, axis, i, 1), tuple(int(d) for d in piece.shape))
                 for i, piece in enumerate(meta(node)))


def convert_index(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    """``x[i0, i1, ...]`` with constant index tensors on the leading dims: one ``nn.gather`` of
    the linear indices on ``x`` flattened over those dims, or a reshape where the indices
    visit every element in order (how Hugging Face's masks index ``mask[batch, key]``)."""
    import torch

    x = operand(imp, kw["input"], result_dtype(imp, node))
    indices = kw["indices"]
    if any(not isinstance(i, torch.Tensor) for i in indices):
        raise imp.error("indexing with computed or omitted (None) indices is not supported")
    shape = shape_of(x)
    dims = shape[:len(indices)]
    rest = shape[len(indices):]
    index = torch.broadcast_tensors(*[i.long() for i in indices])
    for i, dim in zip(index, dims, strict=True):
        if i.numel() and (int(i.max()) >= dim or int(i.min()) < -dim):
            raise imp.error(f"an index is out of range for dims {list(dims)}")
    linear = sum(torch.where(i < 0, i + dim, i) * math.prod(dims[k + 1:])
                 for k, (i, dim) in enumerate(zip(index, dims, strict=True)))
    flat = reshape(imp, x, (math.prod(dims), *rest))
    if linear.numel() == math.prod(dims) and bool(
            (linear.reshape(-1) == torch.arange(linear.numel())).all()):
        return reshape(imp, flat, result_shape(node))
    gathered = imp.emit(nn.GatherOp(flat, imp.tensor(linear.to(torch.int32)), 0, tensor_type(
        element_of(x), [*linear.shape, *rest])))
    return reshape(imp, gathered, result_shape(node))


def convert_getitem(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    source, index = node.args
    value = imp.values_by_node[source][index]
    if value is None:
        raise imp.error(f"result {index} of '{source.name}' is not supported")
    return value


def convert_embedding(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    dtype = result_dtype(imp, node)
    table = operand(imp, kw["weight"], dtype)
    indices = kw["indices"]
    idx = indices if isinstance(indices, SSAValue) else imp.tensor(indices)
    if str(element_of(idx)) != "i32":
        raise imp.error("indices must be integers")
    out = [*shape_of(idx), shape_of(table)[1]]
    return imp.emit(nn.GatherOp(table, idx, 0, tensor_type(element_of(table), out)))


# --- normalisation, softmax, reductions ----------------------------------------------------------


def norm_vector(imp: FxImporter, value: Any, dtype: Any, width: int, fill: float) -> SSAValue:
    import torch

    if value is None:
        return imp.tensor(torch.full((width,), fill, dtype=dtype))
    return reshape(imp, operand(imp, value, dtype), (width,))


def last_axis_only(imp: FxImporter, x: SSAValue, normalized: Sequence[int]) -> int:
    shape = shape_of(x)
    if len(normalized) != 1 or not shape or shape[-1] != normalized[0]:
        raise imp.error(f"normalizing over {list(normalized)} of {list(shape)} is not supported "
                        "(only the last dim)")
    return shape[-1]


def convert_layer_norm(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    value = meta(node)
    dtype = value[0].dtype if isinstance(value, list | tuple) else value.dtype
    x = operand(imp, kw["input"], dtype)
    width = last_axis_only(imp, x, kw["normalized_shape"])
    gamma = norm_vector(imp, kw.get("weight"), dtype, width, 1.0)
    beta = norm_vector(imp, kw.get("bias"), dtype, width, 0.0)
    y = imp.emit(nn.LayerNormOp(x, gamma, beta, -1, float(kw["eps"])))
    return (y, None, None) if isinstance(value, list | tuple) else y


def convert_rms_norm(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    import torch

    dtype = result_dtype(imp, node)
    x = operand(imp, kw["input"], dtype)
    width = last_axis_only(imp, x, kw["normalized_shape"])
    eps = kw.get("eps")
    if eps is None:
        eps = torch.finfo(dtype).eps
    gamma = norm_vector(imp, kw.get("weight"), dtype, width, 1.0)
    return imp.emit(nn.RmsNormOp(x, gamma, -1, float(eps)))


def convert_softmax(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    x = operand(imp, kw["input"], result_dtype(imp, node))
    return imp.emit(nn.SoftmaxOp(x, axis_of(imp, kw["dim"], len(shape_of(x)))))


def reduction(kind: str) -> Converter:
    def convert(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
        dtype = result_dtype(imp, node)
        x = operand(imp, kw["input"], dtype)
        shape = shape_of(x)
        dims = kw.get("dim")
        if dims is None or (isinstance(dims, Sequence) and len(dims) == 0):
            axes = list(range(len(shape)))
        else:
            dims = [dims] if isinstance(dims, int) else dims
            axes = sorted({axis_of(imp, d, len(shape)) for d in dims})
        keepdims = bool(kw.get("keepdim", False))
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdims else [
            d for i, d in enumerate(shape) if i not in axes]
        if not axes:
            return x
        cls = nn.REDUCE_OPS[kind]
        return imp.emit(cls(x, axes, tensor_type(element_of(x), out), keepdims))

    return convert


# --- attention -----------------------------------------------------------------------------------


def convert_sdpa(imp: FxImporter, node: Any, kw: dict[str, Any]) -> Any:
    """``scaled_dot_product_attention`` on ``[B, H, S, D]``: one ``nn.attention`` (heads packed
    in the last dimension) when the mask is none, a key mask (``[B|1, 1, 1, S_k]`` bools) or a
    constant causal or all-true one; else the math written out (matmul, mask, softmax,
    matmul). Grouped-query attention (``enable_gqa``: fewer key/value heads) repeats each key
    and value head for its group of query heads, as PyTorch does."""
    import torch

    if kw.get("dropout_p", 0.0):
        raise imp.error("attention dropout is not supported")
    dtype = result_dtype(imp, node)
    q, k, v = (operand(imp, kw[name], dtype) for name in ("query", "key", "value"))
    if len(shape_of(q)) != 4 or len(shape_of(k)) != 4 or len(shape_of(v)) != 4:
        raise imp.error("attention on other than [B, H, S, D] tensors is not supported")
    batch, heads, seq, dim = shape_of(q)
    kv_heads = shape_of(k)[1]
    if kv_heads != heads:
        if not kw.get("enable_gqa") or heads % kv_heads:
            raise imp.error(f"{heads} query heads and {kv_heads} key heads need enable_gqa")
        k, v = repeat_heads(imp, k, heads), repeat_heads(imp, v, heads)
    keys = shape_of(k)[2]
    scale = kw.get("scale")
    causal = bool(kw.get("is_causal"))
    mask = kw.get("attn_mask")
    if isinstance(mask, torch.Tensor):  # a constant mask: maybe causal, maybe all true
        mask, causal = constant_mask(mask, causal, seq, keys)
    key_mask, also_causal = key_padding_mask(imp, mask, batch, seq, keys)
    causal |= also_causal
    if mask is None or key_mask is not None:
        packed = [pack_heads(imp, t) for t in (q, k, v)]
        out = imp.emit(nn.AttentionOp(*packed, heads, dim, key_mask, scale, causal))
        return permute(imp, reshape(imp, out, (batch, seq, heads, dim)), (0, 2, 1, 3))
    return attention_math(imp, q, k, v, mask, causal, scale if scale is not None
                          else 1.0 / math.sqrt(dim), dtype)


def repeat_heads(imp: FxImporter, x: SSAValue, heads: int) -> SSAValue:
    """``[B, Hkv, S, D]`` -> ``[B, H, S, D]``, key head ``j`` serving query heads
    ``j*g .. j*g+g-1`` (``repeat_interleave`` on the head dim)."""
    b, kv, s, d = shape_of(x)
    grown = expand(imp, reshape(imp, x, (b, kv, 1, s, d)), (b, kv, heads // kv, s, d))
    return reshape(imp, grown, (b, heads, s, d))


def pack_heads(imp: FxImporter, x: SSAValue) -> SSAValue:
    """``[B, H, S, D]`` -> ``[B, S, H*D]``."""
    b, h, s, d = shape_of(x)
    return reshape(imp, permute(imp, x, (0, 2, 1, 3)), (b, s, h * d))


def constant_mask(mask: Any, causal: bool, seq: int, keys: int) -> tuple[Any, bool]:
    """A constant mask that is all true (or all zero) is none; one that is the causal pattern
    (and no other) is ``causal``. Otherwise the mask, unchanged."""
    import torch

    visible = mask if mask.dtype == torch.bool else mask == 0
    if mask.dtype != torch.bool and not bool(((mask == 0) | torch.isneginf(mask)).all()):
        return mask, causal
    try:
        full = torch.broadcast_to(visible, (*visible.shape[:-2], seq, keys))
    except RuntimeError:  # not a mask of these queries and keys
        return mask, causal
    if bool(full.all()):
        return None, causal
    tril = torch.ones(seq, keys, dtype=torch.bool).tril()
    if seq == keys and bool((full == tril).all()):
        return None, True
    return mask, causal


def is_all_true(value: SSAValue) -> bool:
    op = value.owner
    if not isinstance(op, nn.ConstantOp) or element_of(value) != i1:
        return False
    return all(bool(v) for v in op.value.get_values())


def is_all_false(value: SSAValue) -> bool:
    op = value.owner
    if not isinstance(op, nn.ConstantOp) or element_of(value) != i1:
        return False
    return not any(bool(v) for v in op.value.get_values())


def broadcast_source(imp: FxImporter, mask: SSAValue) -> tuple[SSAValue, list[Any]]:
    """The bool mask before broadcasts and ands with constants, and those constants (as
    tensors): ``where(true, a, b)`` (an ``expand`` writes ``b = a``) is ``a``; ``where(c, a,
    false)`` is ``c and a``, and where ``c`` or ``a`` is a constant it is set aside. The result
    only repeats what is left, so when that has the key mask's shape, it is a key mask (and
    the constants say what else is hidden: `constant_mask`)."""
    known = {id(ssa): value for value, ssa in imp.materialized.values()}
    factors: list[Any] = []
    while isinstance(mask.owner, nn.WhereOp):
        cond, a, b = mask.owner.operands
        if is_all_true(cond):
            mask = a
        elif is_all_false(b) and id(cond) in known:
            factors.append(known[id(cond)])
            mask = a
        elif is_all_false(b) and id(a) in known:
            factors.append(known[id(a)])
            mask = cond
        else:
            break
    return mask, factors


def key_padding_mask(imp: FxImporter, mask: Any, batch: int, seq: int,
                     keys: int) -> tuple[SSAValue | None, bool]:
    """A bool mask of shape ``[B|1, 1, 1, S_k]`` (or ``[S_k]``...), or a broadcast of one, as
    ``nn.attention``'s ``[B, S_k]`` key mask, and whether constants anded with it make it
    causal too; (None, False) for any other mask."""
    if not isinstance(mask, SSAValue) or element_of(mask) != i1:
        return None, False
    mask, factors = broadcast_source(imp, mask)
    causal = False
    for factor in factors:
        rest, is_causal = constant_mask(factor, False, seq, keys)
        if rest is not None:
            return None, False
        causal |= is_causal
    shape = shape_of(mask)
    if not shape or shape[-1] != keys or any(d != 1 for d in shape[-3:-1]) or len(shape) > 4:
        return None, False
    lead = shape[0] if len(shape) == 4 else 1
    if lead not in (1, batch):
        return None, False
    return expand(imp, reshape(imp, mask, (lead, keys)), (batch, keys)), causal


def attention_math(imp: FxImporter, q: SSAValue, k: SSAValue, v: SSAValue, mask: Any,
                   causal: bool, scale: float, dtype: Any) -> SSAValue:
    """softmax(q k^T * scale + mask) v, over ``[B, H, S, D]``; a query row with no visible key
    gives zeros, as PyTorch's attention does."""
    import torch

    elem = element_of(q)
    s = shape_of(q)[2]
    keys = shape_of(k)[2]
    scores = matmul(imp, q, transpose_last(imp, k))
    scores = emit_binary(imp, nn.MulOp, scores, splat(imp, scale, elem))
    shape = shape_of(scores)
    visible: SSAValue | None = None
    if causal:
        visible = imp.tensor(torch.ones(s, keys, dtype=torch.bool).tril())
    if mask is not None:
        is_bool = (isinstance(mask, SSAValue) and element_of(mask) == i1) or (
            isinstance(mask, torch.Tensor) and mask.dtype == torch.bool)
        m = operand(imp, mask, torch.bool if is_bool else dtype)
        if is_bool:
            visible = m if visible is None else where(imp, visible, m, splat(imp, False, i1))
        else:
            scores = emit_binary(imp, nn.AddOp, scores, m)
            shape = shape_of(scores)
    minus_inf = splat(imp, -math.inf, elem)
    if visible is not None:
        scores = where(imp, visible, scores, minus_inf, broadcast(imp, visible, scores))
    weights = imp.emit(nn.SoftmaxOp(scores, len(shape) - 1))
    # rows with every key hidden: softmax of -inf is NaN; PyTorch gives zeros
    row_max = imp.emit(nn.ReduceMaxOp(scores, [len(shape) - 1],
                                      tensor_type(elem, [*shape[:-1], 1]), True))
    hidden = imp.emit(nn.CmpOp(row_max, minus_inf, "eq", tensor_type(i1, shape_of(row_max))))
    weights = where(imp, hidden, splat(imp, 0.0, elem), weights, shape)
    return matmul(imp, weights, v)


# --- the table -----------------------------------------------------------------------------------

RESHAPES = ("view", "_unsafe_view", "reshape", "unsqueeze", "squeeze", "flatten", "unflatten",
            "view_as", "reshape_as")
IDENTITIES = ("contiguous", "clone", "alias", "detach", "detach_", "lift_fresh_copy",
              "positive")
CASTS = ("_to_copy", "to", "type_as")

FX_OPS: dict[str, Converter] = {
    "aten.add": arithmetic(nn.AddOp),
    "aten.sub": arithmetic(nn.SubOp),
    "aten.rsub": arithmetic(nn.SubOp, reverse=True),
    "aten.mul": arithmetic(nn.MulOp),
    "aten.div": convert_div,
    "aten.maximum": arithmetic(nn.MaxOp),
    "aten.minimum": arithmetic(nn.MinOp),
    "aten.pow": convert_pow,
    "aten.relu": unary(nn.ReluOp),
    "aten.gelu": convert_gelu,
    "aten.silu": unary(nn.SiluOp),
    "aten.sigmoid": unary(nn.SigmoidOp),
    "aten.tanh": unary(nn.TanhOp),
    "aten.exp": unary(nn.ExpOp),
    "aten.log": unary(nn.LogOp),
    "aten.sqrt": unary(nn.SqrtOp),
    "aten.rsqrt": unary(nn.RsqrtOp),
    "aten.neg": unary(nn.NegOp),
    "aten.abs": unary(nn.AbsOp),
    "aten.erf": unary(nn.ErfOp),
    "aten.sin": unary(nn.SinOp),
    "aten.cos": unary(nn.CosOp),
    "aten.reciprocal": convert_reciprocal,
    "aten.square": convert_square,
    "aten.clamp": convert_clamp,
    "aten.clamp_min": lambda imp, node, kw: convert_clamp(imp, node, {**kw, "min": kw["min"]}),
    "aten.clamp_max": lambda imp, node, kw: convert_clamp(imp, node, {**kw, "max": kw["max"]}),
    "aten.eq": compare("eq"),
    "aten.ne": compare("ne"),
    "aten.lt": compare("lt"),
    "aten.le": compare("le"),
    "aten.gt": compare("gt"),
    "aten.ge": compare("ge"),
    "aten.logical_and": logical(convert_and),
    "aten.logical_or": logical(convert_or),
    "aten.bitwise_and": logical(convert_and),
    "aten.bitwise_or": logical(convert_or),
    "aten.__and__": logical(convert_and),
    "aten.__or__": logical(convert_or),
    "aten.logical_not": convert_not,
    "aten.bitwise_not": convert_not,
    "aten.where": convert_where,
    "aten.masked_fill": convert_masked_fill,
    "aten.dropout": convert_dropout,
    "aten._assert_tensor_metadata": convert_nothing,
    "aten.linear": convert_linear,
    "aten.matmul": convert_matmul,
    "aten.mm": convert_matmul,
    "aten.bmm": convert_matmul,
    "aten.addmm": convert_addmm,
    "aten.t": convert_t,
    "aten.permute": convert_permute,
    "aten.transpose": convert_transpose,
    "aten.slice": convert_slice,
    "aten.select": convert_select,
    "aten.cat": convert_cat,
    "aten.expand": convert_expand,
    "aten.split": convert_split,
    "aten.split_with_sizes": convert_split,
    "aten.chunk": convert_split,
    "aten.unbind": convert_unbind,
    "getitem": convert_getitem,
    "aten.index": convert_index,
    "aten.embedding": convert_embedding,
    "aten.layer_norm": convert_layer_norm,
    "aten.native_layer_norm": convert_layer_norm,
    "aten.rms_norm": convert_rms_norm,
    "aten.softmax": convert_softmax,
    "aten._softmax": convert_softmax,
    "aten.sum": reduction("sum"),
    "aten.mean": reduction("mean"),
    "aten.amax": reduction("max"),
    "aten.amin": reduction("min"),
    "aten.scaled_dot_product_attention": convert_sdpa,
    "aten._transformer_encoder_layer_fwd": convert_encoder_layer,
    **{f"aten.{name}": convert_reshape for name in RESHAPES},
    **{f"aten.{name}": convert_identity for name in IDENTITIES},
    **{f"aten.{name}": convert_cast for name in CASTS},
}

SHAPE_ONLY = ("aten.zeros_like", "aten.ones_like", "aten.full_like", "aten.new_zeros",
              "aten.new_ones", "aten.new_full", "aten.new_empty", "aten.empty_like")
"""Ops whose result depends on their tensor operand's shape and dtype only: computed here."""


def unsupported_reason(node: Any) -> str | None:
    """Why fusec cannot convert ``node`` (a ``call_function`` node), or None when it can."""
    import torch

    name = op_name(node.target)
    if node.target is operator.getitem:
        source = node.args[0]
        return None if isinstance(source, torch.fx.Node) and unsupported_reason(
            source) is None else "the indexed op is not supported"
    if name not in FX_OPS and name not in SHAPE_ONLY:
        return f"no converter for {name}"
    value = meta(node)
    values = value if isinstance(value, list | tuple) else [value]
    for v in values:
        if isinstance(v, torch.Tensor) and element_type_of(v.dtype) is None:
            return f"dtype {v.dtype} is not supported"
    for arg in node.all_input_nodes:
        example = meta(arg)
        if isinstance(example, torch.Tensor) and element_type_of(example.dtype) is None:
            return f"operand of dtype {example.dtype} is not supported"
    if name == "aten.scaled_dot_product_attention" and float(normalized(node).get(
            "dropout_p", 0.0) or 0.0):
        return "attention dropout"
    if name == "aten._transformer_encoder_layer_fwd" and normalized(node).get("mask") is not None:
        return "the encoder layer's fast path with a mask"
    if name == "aten.div" and normalized(node).get("rounding_mode") is not None:
        return "rounding division"
    if name == "aten.slice" and normalized(node).get("step", 1) != 1:
        return "slice with a step"
    return None


def constant_nodes(gm: Any, constant_inputs: set[int],
                   kept: set[Any] = frozenset()) -> set[Any]:  # type: ignore[assignment]
    """The nodes of ``gm`` whose values are known at import time: ``get_attr``, the
    placeholders at ``constant_inputs``, and deterministic ops on those alone; none in
    ``kept`` (tensors changed in place) nor what depends on them."""
    constants: set[Any] = set()
    placeholders = 0
    for node in gm.graph.nodes:
        if node in kept:
            if node.op == "placeholder":
                placeholders += 1
            continue
        if node.op == "placeholder":
            if placeholders in constant_inputs:
                constants.add(node)
            placeholders += 1
        elif node.op == "get_attr":
            constants.add(node)
        elif node.op == "call_function" and foldable(node) and all(
                n in constants for n in node.all_input_nodes):
            constants.add(node)
    return constants


def normalized(node: Any) -> dict[str, Any]:
    """The node's arguments by schema name, defaults filled in (nodes not replaced)."""
    from torch.fx.operator_schemas import normalize_function

    pair = normalize_function(node.target, tuple(node.args), dict(node.kwargs),
                              normalize_to_only_use_kwargs=True)
    if pair is None:
        return {**{str(i): a for i, a in enumerate(node.args)}, **node.kwargs}
    return dict(pair.kwargs)


def convert_node(imp: FxImporter, node: Any) -> Any:
    """The node's value: computed now when its tensor operands are constants, else IR."""
    import torch

    name = op_name(node.target)
    values = imp.values_by_node
    args = torch.fx.node.map_arg(node.args, lambda n: values[n])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: values[n])
    flat = [*torch.utils._pytree.tree_leaves((args, kwargs))]
    if name in SHAPE_ONLY:
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: torch.zeros(
            meta(n).shape, dtype=meta(n).dtype))
        return node.target(*args, **kwargs)
    if not any(isinstance(v, SSAValue) for v in flat) and foldable(node):
        return on_host(node.target(*args, **kwargs))
    if name not in FX_OPS:
        raise imp.error("not supported")
    kw = normalized(node) if node.target is not operator.getitem else {}
    kw = {key: torch.fx.node.map_arg(value, lambda n: values[n]) for key, value in kw.items()}
    try:
        return FX_OPS[name](imp, node, kw)
    except TorchImportError:
        raise
    except Exception as e:  # a verifier or shape error on this node: still one line
        first = error_line(e)
        raise imp.error(first) from None


def foldable(node: Any) -> bool:
    """An op PyTorch may compute at import time: deterministic, no side effects."""
    import torch

    tags = getattr(node.target, "tags", ())
    if torch.Tag.nondeterministic_seeded in tags or torch.Tag.nondeterministic_bitwise in tags:
        return False
    return isinstance(node.target, torch._ops.OpOverload) or node.target is operator.getitem
