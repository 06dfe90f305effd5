"""Fuses a post-LN BERT encoder layer into one ``fused.transformer_layer`` (small inputs only).

    h1  = residual_layer_norm(attention_block(hidden, ...), hidden, ln1_g, ln1_b)
    out = residual_layer_norm(matmul_bias_act(matmul_bias_act(h1, fc1_w, fc1_b){act},
                                              fc2_w, fc2_b), h1, ln2_g, ln2_b)
  ->
    out = fused.transformer_layer(hidden, mask, qkv_w, qkv_b, out_w, out_b, ln1_g, ln1_b,
                                  fc1_w, fc1_b, fc2_w, fc2_b, ln2_g, ln2_b)

This is the shape ``fuse-matmul-bias-act``, ``fuse-attention-block`` and
``fuse-residual-layer-norm`` leave for a BERT layer, so it runs after them.

Preconditions (matched from the second norm up; the residual adds may list their operands in
either order):
- the attention block's only use is the first norm, whose other operand is the block's input;
- ``h1`` has exactly two uses: the first FFN matmul's ``x`` and the second norm;
- the FFN is ``fused.matmul_bias_act`` with an activation, then one without, each read only by
  the next op, with 2-D weights (``[E, I]``, ``[I, E]``) and 1-D biases of exactly their width;
- the attention's ``batch * seq`` is at most ``max-tokens`` (as in ``fuse-attention-block``).
A returned or shared intermediate blocks the fusion.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects.common import float_prop, int_prop, str_prop
from fusec.dialects.fused import (
    AttentionBlockOp,
    MatmulBiasActOp,
    ResidualLayerNormOp,
    TransformerLayerOp,
)
from fusec.passes._util import feeds_only, producer, shape_of


def linear(op: Operation | None, with_activation: bool) -> MatmulBiasActOp | None:
    """``op`` as a projection with a 2-D weight and an exact 1-D bias; with or without an
    activation, as asked."""
    if not isinstance(op, MatmulBiasActOp):
        return None
    if (str_prop(op, "activation") != "none") != with_activation:
        return None
    w = shape_of(op.w)
    if len(w) != 2 or shape_of(op.bias) != (w[1],):
        return None
    return op


def sum_operands(norm: ResidualLayerNormOp) -> tuple[tuple[SSAValue, SSAValue], ...]:
    """The residual sum's two operands, in both orders (the add commutes)."""
    return ((norm.x, norm.residual), (norm.residual, norm.x))


@dataclass
class FuseTransformerLayer(RewritePattern):
    max_tokens: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ResidualLayerNormOp, rewriter: PatternRewriter) -> None:
        for ffn_value, h1 in sum_operands(op):
            fc2 = linear(producer(ffn_value), with_activation=False)
            if fc2 is None or not feeds_only(ffn_value, op):
                continue
            fc1 = linear(producer(fc2.x), with_activation=True)
            if fc1 is None or not feeds_only(fc2.x, fc2) or fc1.x != h1:
                continue
            ln1 = producer(h1)
            if not isinstance(ln1, ResidualLayerNormOp) or ln1.parent is not op.parent:
                continue
            if h1.uses.get_length() != 2:  # fc1's x and this norm, nothing else
                continue
            attn = self.attention_of(ln1)
            if attn is None:
                continue
            layer = TransformerLayerOp(
                [
                    attn.hidden,
                    attn.mask,
                    attn.qkv_w,
                    attn.qkv_b,
                    attn.out_w,
                    attn.out_b,
                    ln1.gamma,
                    ln1.beta,
                    fc1.w,
                    fc1.bias,
                    fc2.w,
                    fc2.bias,
                    op.gamma,
                    op.beta,
                ],
                num_heads=int_prop(attn, "num_heads"),
                head_dim=int_prop(attn, "head_dim"),
                intermediate_size=shape_of(fc1.w)[1],
                eps1=float_prop(ln1, "eps"),
                eps2=float_prop(op, "eps"),
                activation=str_prop(fc1, "activation"),
            )
            if layer.result.type != op.result.type:
                continue
            rewriter.replace(op, layer)
            for absorbed in (fc2, fc1, ln1, attn):
                rewriter.erase(absorbed)
            return

    def attention_of(self, ln1: ResidualLayerNormOp) -> AttentionBlockOp | None:
        """The attention block ``ln1`` adds to its own input, when small enough to fuse."""
        for attn_value, hidden in sum_operands(ln1):
            attn = producer(attn_value)
            if not isinstance(attn, AttentionBlockOp) or not feeds_only(attn_value, ln1):
                continue
            if attn.hidden != hidden:
                continue
            batch, seq, _ = shape_of(hidden)
            if batch * seq <= self.max_tokens:
                return attn
        return None


@dataclass(frozen=True)
class FuseTransformerLayerPass(ModulePass):
    name = "fuse-transformer-layer"

    max_tokens: int = 64
    """Largest ``batch * seq`` the fused layer is used for (as in fuse-attention-block)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseTransformerLayer(self.max_tokens)).rewrite_module(op)
