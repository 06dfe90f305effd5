"""Fuses the elementwise consumer of a matmul into the GEMM kernel's epilogue.

    f(matmul(x, w), e...) -> fused.matmul_epilogue(x, w, e...) { f(acc, e...) on scalars }

So ``alpha * (A @ B) + beta * C``, row and column scales, clamps and activations after a matmul
are one kernel, as ``fused.matmul_bias_act`` is for a bias and one activation. The consumer is
a ``fused.elementwise`` (run ``fuse-elementwise`` first to grow it) or one ``nn`` elementwise
op; the producer is a float ``nn.matmul``, a ``fused.matmul_bias_act`` (its bias and
activation become the first body ops) or a ``fused.matmul_epilogue`` (which absorbs further
consumers the same way, to a fixpoint).

Preconditions: the product is read only by the consumer (perhaps more than once; a returned
or shared product stays materialised); the product is a float (f32, or f16/bf16 of f16/bf16
operands: the GEMM accumulates in f32 and the epilogue rounds the accumulator to the product's
type first, as the unfused matmul stores it); the consumer's result has the
product's shape (and any element type: a cast to f16, bf16, i8 or i32 at the end is stored by
the GEMM, extras of any type are read in their own), so every other input of the consumer
broadcasts to the product's shape (an extra of the epilogue); a 16-bit product's consumer
yields the product's type or f32 (the tensor-core kernels store those; a GEMM storing another
type than its operands' or f32 takes the portable kernel, so such a cast after a 16-bit matmul
stays apart: a float16 model's down projection feeding a float32 residual fuses); the body stays within
``max-steps`` scalar steps and ``max-inputs`` extras. A product that already ends in a cast
(another type than its operands') takes no further consumers.

Before::

    %p = nn.matmul %a, %b : tensor<5x7xf32>, tensor<7x3xf32> -> tensor<5x3xf32>
    %y = fused.elementwise %p, %c : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32> {
    ^bb0(%x: f32, %z: f32):
      %two = arith.constant 2.0 : f32
      %s = arith.mulf %x, %two : f32
      %t = arith.addf %s, %z : f32
      fused.yield %t : f32
    }

After::

    %y = fused.matmul_epilogue %a, %b, %c : (tensor<5x7xf32>, tensor<7x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32> {
    ^bb0(%acc: f32, %z: f32):
      %two = arith.constant 2.0 : f32
      %s = arith.mulf %acc, %two : f32
      %t = arith.addf %s, %z : f32
      fused.yield %t : f32
    }
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from fusec.dialects import fused, nn
from fusec.dialects.common import CAST_TYPES, FLOAT_TYPES, element_of, str_prop
from fusec.dialects.decompositions import ACTIVATION_OPS
from fusec.dialects.scalar_ops import build_scalar
from fusec.passes._elementwise import (
    BodyBuilder,
    Limits,
    dead_constants,
    fusible,
    sole_user,
    steps,
    tensor_inputs,
)
from fusec.passes._util import located_at, producer, shape_of
from fusec.passes.fuse_elementwise import check_limits
from fusec.passes.remarks import may_fuse

PASS = "fuse-matmul-epilogue"

Product = nn.MatmulOp | fused.MatmulBiasActOp | fused.MatmulEpilogueOp


def product_of(op: Operation) -> tuple[Product, SSAValue] | None:
    """The float matmul whose product ``op`` reads and no other op does, and that product
    (of its operands' type: one whose epilogue ends in a cast is not taken)."""
    for value in dict.fromkeys(op.operands):
        prod = producer(value)
        if not isinstance(prod, Product) or sole_user(value) is not op:
            continue
        t = value.type
        if (isinstance(t, TensorType) and t.element_type in FLOAT_TYPES
                and t.element_type == element_of(operands_of(prod)[0])):
            return prod, value
    return None


def body_of(prod: Product) -> tuple[Block, list[SSAValue], SSAValue]:
    """``prod``'s epilogue as a detached body without its yield: the block (arguments: the
    accumulator, then one per extra), the extras, and the value the yield gave."""
    if isinstance(prod, fused.MatmulEpilogueOp):
        block = prod.detach_region(prod.body).detach_block(0)
        term = block.last_op
        assert isinstance(term, fused.YieldOp)
        value = term.values[0]
        block.erase_op(term)
        return block, list(prod.extras), value
    if isinstance(prod, nn.MatmulOp):
        block = Block(arg_types=[element_of(prod.lhs)])
        return block, [], block.args[0]
    bias = prod.bias
    block = Block(arg_types=[element_of(prod.x), element_of(bias)])
    add = arith.AddfOp(block.args[0], block.args[1])
    block.add_op(add)
    value: SSAValue = add.result
    activation = str_prop(prod, "activation")
    if activation != "none":
        probe = Block(arg_types=[prod.result.type]).args[0]
        ops, value = build_scalar(ACTIVATION_OPS[activation](probe), [value])
        block.add_ops(ops)
    return block, [bias], value


def prologue_steps(prod: Product) -> int:
    if isinstance(prod, fused.MatmulEpilogueOp):
        return steps(prod)  # type: ignore[arg-type]
    if isinstance(prod, fused.MatmulBiasActOp):
        activation = str_prop(prod, "activation")
        if activation == "none":
            return 1
        probe = Block(arg_types=[prod.result.type]).args[0]
        return 1 + steps(ACTIVATION_OPS[activation](probe))
    return 0


def operands_of(prod: Product) -> tuple[SSAValue, SSAValue]:
    if isinstance(prod, nn.MatmulOp):
        return prod.lhs, prod.rhs
    return prod.x, prod.w


class FuseIntoEpilogue(RewritePattern):
    def __init__(self, limits: Limits):
        self.limits = limits

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not fusible(op):
            return
        found = product_of(op)
        if found is None:
            return
        prod, value = found
        t = op.results[0].type
        if not isinstance(t, TensorType) or t.element_type not in CAST_TYPES:
            return
        if element_of(value) != f32 and t.element_type not in (element_of(value), f32):
            return  # a 16-bit GEMM storing another type loses its tensor-core kernels
        if shape_of(op.results[0]) != shape_of(value):
            return
        extras_before = list(prod.extras) if isinstance(prod, fused.MatmulEpilogueOp) else (
            [prod.bias] if isinstance(prod, fused.MatmulBiasActOp) else [])
        others = [v for v in dict.fromkeys(tensor_inputs(op)) if v is not value]
        extras = list(dict.fromkeys([*extras_before, *others]))
        if not self.limits.admit(prologue_steps(prod) + steps(op), len(extras)):
            return
        if not may_fuse(PASS, op, "fused.matmul_epilogue"):
            return
        block, old_extras, yielded = body_of(prod)
        placeholder = Block(arg_types=[element_of(value)]).args[0]
        builder = BodyBuilder(block, [placeholder, *old_extras])
        builder.scalar[value] = yielded
        result = builder.add(op)
        block.add_ops(builder.ops)
        block.add_op(fused.YieldOp(result))
        x, w = operands_of(prod)
        new = fused.MatmulEpilogueOp(x, w, builder.inputs[1:], op.results[0].type, Region(block))
        located_at(new, op)
        rewriter.replace(op, new)
        rewriter.erase(prod)
        for const in dead_constants(builder.constants):
            rewriter.erase(const)


@dataclass(frozen=True)
class FuseMatmulEpiloguePass(ModulePass):
    name = PASS

    max_steps: int = 32
    """The most scalar steps (ops other than constants) an epilogue may hold."""

    max_inputs: int = 8
    """The most extra tensor inputs an epilogue may read."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        limits = Limits(self.max_steps, self.max_inputs)
        check_limits(self.name, limits)
        PatternRewriteWalker(FuseIntoEpilogue(limits)).rewrite_module(op)
