"""Fuses masked self-attention with its QKV and output projections (small inputs only).

``matmul_bias_act(attention(narrow_q(qkv), narrow_k(qkv), narrow_v(qkv), mask), out_w, out_b)
-> fused.attention_block(hidden, qkv_w, qkv_b, out_w, out_b, mask)`` where ``qkv =
matmul_bias_act(hidden, qkv_w, qkv_b)``.

Preconditions (matched from the output projection up):
- both projections are ``fused.matmul_bias_act`` without activation, with 2-D weights and 1-D
  biases of exactly the projection width (``qkv_w: [E, 3h]``, ``out_w: [h, N]``), and the
  attention output is the output projection's ``x``;
- ``q``, ``k``, ``v`` are ``nn.narrow``s of the last axis of ``qkv`` at ``0, h, 2h``, each ``h =
  num_heads * head_dim`` wide, and ``qkv`` is exactly ``3h`` wide;
- the attention has a mask, the default scale and no causal masking;
- nothing else reads an absorbed value: ``qkv`` has exactly the three narrows as uses, each
  narrow and the attention have one use (a returned intermediate blocks the fusion);
- the attention's ``batch * seq`` is at most ``max-tokens``: the fused kernel wins only while
  Q, K and V stay on chip, so above it the pass leaves the chain alone.

    %qkv = fused.matmul_bias_act %h, %wqkv, %bqkv : ... -> tensor<1x4x96xf32>
    %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : ...
    %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : ...
    %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : ...
    %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : ...
    %o = fused.matmul_bias_act %a, %wo, %bo : ... -> tensor<1x4x32xf32>
  becomes
    %o = fused.attention_block %h, %wqkv, %bqkv, %wo, %bo, %mask
           {num_heads = 4 : i64, head_dim = 8 : i64} : (...) -> tensor<1x4x32xf32>
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

from fusec.dialects import nn
from fusec.dialects.common import bool_prop, int_prop, str_prop
from fusec.dialects.fused import AttentionBlockOp, MatmulBiasActOp
from fusec.passes._rooted import rewrite_roots
from fusec.passes._util import (
    feeds_only,
    is_last_axis,
    located_at,
    producer,
    shape_of,
    why_shared,
)
from fusec.passes.remarks import may_fuse, missed

PASS = "fuse-attention-block"


def plain_linear(op: Operation | None) -> MatmulBiasActOp | None:
    """``op`` as ``x @ w + b`` with a 2-D ``w`` and a 1-D ``b`` as wide as ``w``'s columns."""
    if not isinstance(op, MatmulBiasActOp) or str_prop(op, "activation") != "none":
        return None
    w = shape_of(op.w)
    if len(w) != 2 or shape_of(op.bias) != (w[1],):
        return None
    return op


def qkv_split(
    q: SSAValue, k: SSAValue, v: SSAValue, attn: Operation, h: int
) -> SSAValue | str:
    """The tensor ``q, k, v`` are the ``[0, h), [h, 2h), [2h, 3h)`` last-axis slices of, when each
    slice is read only by ``attn``; else why not (a remark)."""
    sources: list[SSAValue] = []
    for i, (name, value) in enumerate((("q", q), ("k", k), ("v", v))):
        narrow = producer(value)
        if not isinstance(narrow, nn.NarrowOp):
            return f"{name} is not a narrow of the QKV projection"
        if not feeds_only(value, attn):
            return why_shared(value, attn, f"the {name} narrow")
        if not is_last_axis(narrow, len(shape_of(narrow.input))):
            return f"the {name} narrow is not over the last axis"
        if (int_prop(narrow, "start"), int_prop(narrow, "length")) != (i * h, h):
            return f"the {name} narrow is not [{i * h}, {(i + 1) * h}) of the projection"
        sources.append(narrow.input)
    qkv = sources[0]
    if any(s != qkv for s in sources):
        return "q, k and v are narrows of different tensors"
    if shape_of(qkv)[-1] != 3 * h:
        return f"the QKV projection is not {3 * h} wide"
    return qkv


@dataclass
class FuseAttentionBlock(RewritePattern):
    max_tokens: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulBiasActOp, rewriter: PatternRewriter) -> None:
        attn = producer(op.x)
        if not isinstance(attn, nn.AttentionOp):
            return
        if plain_linear(op) is None:
            missed(PASS, op, "the output projection has an activation or a bias that is not 1-D")
            return
        if not feeds_only(op.x, op):
            missed(PASS, op, why_shared(op.x, op, "the attention result"))
            return
        if attn.mask is None:
            missed(PASS, op, "the attention has no mask")
            return
        if attn.scale is not None:
            missed(PASS, op, "the attention has an explicit scale")
            return
        if bool_prop(attn, "causal"):
            missed(PASS, op, "the attention is causal")
            return
        if attn.kv_heads() != int_prop(attn, "num_heads"):
            missed(PASS, op, "the attention groups its query heads (num_kv_heads)")
            return
        if attn.result.type.element_type != attn.q.type.element_type:  # type: ignore[attr-defined]
            missed(PASS, op, "the attention stores its result widened (fuse-attention-cast)")
            return
        batch, seq, _ = shape_of(attn.q)
        if batch * seq > self.max_tokens:
            missed(PASS, op, f"batch * seq = {batch * seq} is over max-tokens={self.max_tokens}")
            return
        heads, head_dim = int_prop(attn, "num_heads"), int_prop(attn, "head_dim")
        qkv_value = qkv_split(attn.q, attn.k, attn.v, attn, heads * head_dim)
        if isinstance(qkv_value, str):
            missed(PASS, op, qkv_value)
            return
        qkv = plain_linear(producer(qkv_value))
        if qkv is None:
            missed(PASS, op, "the QKV projection is not a matmul_bias_act without activation")
            return
        if qkv.parent is not op.parent:
            missed(PASS, op, "the QKV projection is in another block")
            return
        if qkv.result.uses.get_length() != 3:
            missed(PASS, op, f"the QKV projection has {qkv.result.uses.get_length()} uses, not 3")
            return
        if not may_fuse(PASS, op, "fused.attention_block"):
            return
        narrows = [producer(v) for v in (attn.q, attn.k, attn.v)]
        block = AttentionBlockOp(
            qkv.x, qkv.w, qkv.bias, op.w, op.bias, attn.mask, heads, head_dim, op.result.type
        )
        rewriter.replace(op, located_at(block, op))
        rewriter.erase(attn)
        for narrow in narrows:
            assert narrow is not None
            rewriter.erase(narrow)
        rewriter.erase(qkv)


@dataclass(frozen=True)
class FuseAttentionBlockPass(ModulePass):
    name = PASS

    max_tokens: int = 64
    """Largest attention ``batch * seq`` the fused block is used for."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_roots(op, FuseAttentionBlock(self.max_tokens), (MatmulBiasActOp,))
