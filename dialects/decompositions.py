"""How each structured ``fused`` op decomposes back into ``nn`` ops.

Each ``decompose_*`` function takes a fused op and returns ``(ops, results)``: new, detached
``nn`` ops in program order (to be inserted before the fused op) and the values that replace
the fused op's results. The new ops carry the fused op's location, and their results get
readable name hints. The identities::

    matmul_bias_act(x, w, b){act}     = act(add(matmul(x, w), b))
    residual_layer_norm(x, r, g, b)   = layer_norm(add(x, r), g, b){axis = -1}
    residual_rms_norm(x, r, g)        = rms_norm(add(x, r), g){axis = -1}
    swiglu(cat)                       = mul(up, silu(gate)), up/gate = narrow halves of cat
    attention_block(h, wqkv, bqkv, wo, bo, mask)
        = add(matmul(attention(narrow x3 (add(matmul(h, wqkv), bqkv)), mask), wo), bo)
    transformer_layer = layer_norm(add(ffn(h1), h1)), h1 = layer_norm(add(attention_block, h))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fusec.dialects import nn
from fusec.dialects.common import bool_prop, float_prop, int_prop, str_prop
from xdsl.dialects.builtin import TensorType, UnknownLoc
from xdsl.ir import Operation, SSAValue

if TYPE_CHECKING:
    from fusec.dialects.fused import (
        AttentionBlockOp,
        MatmulBiasActOp,
        ResidualLayerNormOp,
        ResidualRmsNormOp,
        SwigluOp,
        TransformerLayerOp,
    )

Decomposition = tuple[list[Operation], list[SSAValue]]

# Activation name (fused.ACTIVATIONS, except "none") -> the nn op that applies it.
ACTIVATION_OPS: dict[str, Callable[[SSAValue], Operation]] = {
    "relu": nn.ReluOp,
    "gelu": lambda x: nn.GeluOp(x, "none"),
    "gelu_tanh": lambda x: nn.GeluOp(x, "tanh"),
    "silu": nn.SiluOp,
    "sigmoid": nn.SigmoidOp,
    "tanh": nn.TanhOp,
}


class OpSequence:
    """Collects new ops in order, stamping each with one location."""

    def __init__(self, origin: Operation):
        self.origin = origin
        self.ops: list[Operation] = []

    def add(self, op: Operation, name: str) -> SSAValue:
        """Appends ``op`` and returns its result, named ``name``."""
        op.location = self.origin.location
        self.ops.append(op)
        result = op.results[0]
        result.name_hint = name
        return result

    def matmul(self, x: SSAValue, w: SSAValue, name: str) -> SSAValue:
        """``x @ w``; the result type follows the shapes."""
        xt, wt = x.type, w.type
        assert isinstance(xt, TensorType) and isinstance(wt, TensorType)
        shape = (*xt.get_shape()[:-1], wt.get_shape()[-1])
        return self.add(nn.MatmulOp(x, w, TensorType(xt.element_type, shape)), name)

    def linear(self, x: SSAValue, w: SSAValue, b: SSAValue, name: str) -> SSAValue:
        """``x @ w + b``."""
        mm = self.matmul(x, w, f"{name}_mm")
        return self.add(nn.AddOp(mm, b, mm.type), name)

    def activation(self, x: SSAValue, activation: str, name: str) -> SSAValue:
        """``act(x)``; ``"none"`` adds nothing."""
        if activation == "none":
            return x
        return self.add(ACTIVATION_OPS[activation](x), name)

    def narrow(self, x: SSAValue, start: int, length: int, name: str) -> SSAValue:
        """The slice ``[start, start + length)`` of the last axis of ``x``."""
        assert isinstance(x.type, TensorType)
        return self.add(nn.NarrowOp(x, x.type.get_num_dims() - 1, start, length), name)

    def residual_layer_norm(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        eps: float,
        name: str,
    ) -> SSAValue:
        """``layer_norm(x + residual)`` over the last axis."""
        total = self.add(nn.AddOp(x, residual, x.type), f"{name}_in")
        return self.add(nn.LayerNormOp(total, gamma, beta, axis=-1, eps=eps), name)

    def done(self, result: SSAValue) -> Decomposition:
        return self.ops, [result]


def located(origin: Operation, decomposition: Decomposition) -> Decomposition:
    """``decomposition`` with ``origin``'s location on every new op that has none."""
    for op in decomposition[0]:
        if isinstance(op.location, UnknownLoc):
            op.location = origin.location
    return decomposition


def decompose_matmul_bias_act(op: MatmulBiasActOp) -> Decomposition:
    seq = OpSequence(op)
    y = seq.linear(op.x, op.w, op.bias, "linear")
    return seq.done(seq.activation(y, str_prop(op, "activation"), "act"))


def decompose_residual_layer_norm(op: ResidualLayerNormOp) -> Decomposition:
    seq = OpSequence(op)
    return seq.done(
        seq.residual_layer_norm(op.x, op.residual, op.gamma, op.beta, float_prop(op, "eps"), "ln")
    )


def decompose_residual_rms_norm(op: ResidualRmsNormOp) -> Decomposition:
    seq = OpSequence(op)
    total = seq.add(nn.AddOp(op.x, op.residual, op.x.type), "rms_in")
    norm = nn.RmsNormOp(total, op.gamma, axis=-1, eps=float_prop(op, "eps"))
    return seq.done(seq.add(norm, "rms"))


def decompose_swiglu(op: SwigluOp) -> Decomposition:
    seq = OpSequence(op)
    assert isinstance(op.cat.type, TensorType)
    half = op.cat.type.get_shape()[-1] // 2
    first = seq.narrow(op.cat, 0, half, "first_half")
    second = seq.narrow(op.cat, half, half, "second_half")
    up, gate = (second, first) if bool_prop(op, "gate_first") else (first, second)
    activated = seq.add(nn.SiluOp(gate), "gate_act")
    return seq.done(seq.add(nn.MulOp(up, activated, op.result.type), "swiglu"))


def build_attention_block(
    seq: OpSequence,
    op: Operation,
    hidden: SSAValue,
    weights: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
    mask: SSAValue,
) -> SSAValue:
    """Appends the nn ops of ``fused.attention_block`` (``op`` holds num_heads, head_dim)."""
    qkv_w, qkv_b, out_w, out_b = weights
    heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
    h = heads * dim
    qkv = seq.linear(hidden, qkv_w, qkv_b, "qkv")
    q = seq.narrow(qkv, 0, h, "q")
    k = seq.narrow(qkv, h, h, "k")
    v = seq.narrow(qkv, 2 * h, h, "v")
    attn = seq.add(nn.AttentionOp(q, k, v, heads, dim, mask=mask), "attn")
    return seq.linear(attn, out_w, out_b, "attn_out")


def decompose_attention_block(op: AttentionBlockOp) -> Decomposition:
    seq = OpSequence(op)
    weights = (op.qkv_w, op.qkv_b, op.out_w, op.out_b)
    return seq.done(build_attention_block(seq, op, op.hidden, weights, op.mask))


def decompose_transformer_layer(op: TransformerLayerOp) -> Decomposition:
    seq = OpSequence(op)
    weights = (op.qkv_w, op.qkv_b, op.out_w, op.out_b)
    attn = build_attention_block(seq, op, op.hidden, weights, op.mask)
    h1 = seq.residual_layer_norm(attn, op.hidden, op.ln1_g, op.ln1_b, float_prop(op, "eps1"), "ln1")
    fc1 = seq.linear(h1, op.fc1_w, op.fc1_b, "fc1")
    act = seq.activation(fc1, str_prop(op, "activation"), "fc1_act")
    fc2 = seq.linear(act, op.fc2_w, op.fc2_b, "fc2")
    out = seq.residual_layer_norm(fc2, h1, op.ln2_g, op.ln2_b, float_prop(op, "eps2"), "ln2")
    return seq.done(out)
