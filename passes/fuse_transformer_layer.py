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
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import discard, feeds_only, located_at, producer, shape_of, why_shared
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-transformer-layer"


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
            if not isinstance(producer(ffn_value), MatmulBiasActOp):
                continue
            fc2 = linear(producer(ffn_value), with_activation=False)
            if fc2 is None:
                missed(PASS, op, "the FFN's second projection has an activation or a bias "
                       "that is not 1-D")
                continue
            if not feeds_only(ffn_value, op):
                missed(PASS, op, why_shared(ffn_value, op, "the FFN output"))
                continue
            fc1 = linear(producer(fc2.x), with_activation=True)
            if fc1 is None:
                missed(PASS, op, "the FFN's first projection is not a matmul_bias_act with an "
                       "activation and a 1-D bias")
                continue
            if not feeds_only(fc2.x, fc2):
                missed(PASS, op, why_shared(fc2.x, fc2, "the FFN's activation"))
                continue
            if fc1.x != h1:
                missed(PASS, op, "the FFN does not read the residual it is added to")
                continue
            ln1 = producer(h1)
            if not isinstance(ln1, ResidualLayerNormOp):
                missed(PASS, op, "the FFN's input is not a residual_layer_norm")
                continue
            if ln1.parent is not op.parent:
                missed(PASS, op, "the first norm is in another block")
                continue
            if h1.uses.get_length() != 2:  # fc1's x and this norm, nothing else
                missed(
                    PASS,
                    op,
                    f"the first norm's result has {h1.uses.get_length()} uses "
                    "(the FFN and the residual add only)",
                )
                continue
            attn = self.attention_of(ln1)
            if isinstance(attn, str):
                missed(PASS, op, attn)
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
                discard(layer)
                missed(PASS, op, "the layer's result type would differ from the norm's")
                continue
            if not may_fuse(PASS, op, "fused.transformer_layer"):
                discard(layer)
                return
            rewriter.replace(op, located_at(layer, op))
            for absorbed in (fc2, fc1, ln1, attn):
                rewriter.erase(absorbed)
            return

    def attention_of(self, ln1: ResidualLayerNormOp) -> AttentionBlockOp | str:
        """The attention block ``ln1`` adds to its own input, when small enough to fuse; else
        why not (a remark)."""
        reason = "the first norm does not add an attention_block to its input"
        for attn_value, hidden in sum_operands(ln1):
            attn = producer(attn_value)
            if not isinstance(attn, AttentionBlockOp):
                continue
            batch, seq, _ = shape_of(hidden)
            if not feeds_only(attn_value, ln1):
                reason = why_shared(attn_value, ln1, "the attention_block result")
            elif attn.hidden != hidden:
                reason = "the attention_block does not read the residual it is added to"
            elif batch * seq > self.max_tokens:
                reason = f"batch * seq = {batch * seq} is over max-tokens={self.max_tokens}"
            else:
                return attn
        return reason


@dataclass(frozen=True)
class FuseTransformerLayerPass(ModulePass):
    name = PASS

    max_tokens: int = 64
    """Largest ``batch * seq`` the fused layer is used for (as in fuse-attention-block)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseTransformerLayer(self.max_tokens), (ResidualLayerNormOp,))
