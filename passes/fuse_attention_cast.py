"""Lets an attention store its result widened: the cast to f32 of a 16-bit attention becomes the
attention's result type.

    cast(attention(q, k, v) : f16 or bf16) : f32 -> attention(q, k, v) : f32

``nn.attention`` of 16-bit operands with an f32 result rounds its result to the operands' type
and stores it widened (`dialects.nn.AttentionOp`), so the rewrite changes no number: it saves
the cast's launch and one round trip of the result through memory. This is what a float16
model whose residual stream stays float32 writes (torch's TorchScript exporter: attention's f16
context cast to f32 for an f32 output projection).

Preconditions: the cast's input is an ``nn.attention`` of f16 or bf16 operands, read by the cast
alone (a returned or shared attention result stays as it is), and the cast is to f32.

    %a = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 8 : i64}
           : tensor<1x4x16xf16>, tensor<1x4x16xf16>, tensor<1x4x16xf16> -> tensor<1x4x16xf16>
    %c = nn.cast %a : tensor<1x4x16xf16> -> tensor<1x4x16xf32>
  becomes
    %c = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 8 : i64}
           : tensor<1x4x16xf16>, tensor<1x4x16xf16>, tensor<1x4x16xf16> -> tensor<1x4x16xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.common import bool_prop, element_of, int_prop
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import feeds_only, located_at, producer, why_shared
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-attention-cast"


class FuseAttentionCast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.CastOp, rewriter: PatternRewriter) -> None:
        attn = producer(op.input)
        if not isinstance(attn, nn.AttentionOp):
            return
        if not isinstance(element_of(op.result), Float32Type):
            missed(PASS, op, "the cast is not to f32")
            return
        if isinstance(element_of(attn.result), Float32Type):
            missed(PASS, op, "the attention's result is already f32")
            return
        if not feeds_only(op.input, op):
            missed(PASS, op, why_shared(op.input, op, "the attention result"))
            return
        if not may_fuse(PASS, op, "nn.attention"):
            return
        new = nn.AttentionOp(
            attn.q, attn.k, attn.v, int_prop(attn, "num_heads"), int_prop(attn, "head_dim"),
            mask=attn.mask, scale=attn.scale.value.data if attn.scale is not None else None,
            causal=bool_prop(attn, "causal"),
            num_kv_heads=attn.kv_heads() if attn.num_kv_heads is not None else None,
            window=attn.window_size(), result_type=op.result.type)
        rewriter.replace(op, located_at(new, attn))
        rewriter.erase(attn)


@dataclass(frozen=True)
class FuseAttentionCastPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseAttentionCast(), (nn.CastOp,))
