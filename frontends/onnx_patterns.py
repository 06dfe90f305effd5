"""Recognises the decompositions that exporters write and rewrites them into canonical ``nn`` ops,
so that imported models fuse as the hand-written examples do.

    0.5 * x * (1 + erf(x / sqrt(2)))           ->  nn.gelu(x)                  (any order)
    x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))  ->  nn.gelu(x) {tanh}

Each rewrite is a pattern on the op that ends the decomposition, walking up through use-def; a
value that something outside the decomposition reads stays as it was (a fusion never absorbs a
value that something else reads).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import region_dce

from fusec.dialects import nn

TOLERANCE = 1e-5


def splat_of(value: SSAValue) -> float | None:
    """The value of a splat ``nn.constant``, else None."""
    if not isinstance(value, OpResult) or not isinstance(value.op, nn.ConstantOp):
        return None
    attr = value.op.value
    if not attr.is_splat():
        return None
    values = attr.get_values()
    return float(values[0]) if values else None


def is_splat(value: SSAValue, expected: float) -> bool:
    found = splat_of(value)
    return found is not None and math.isclose(found, expected, rel_tol=TOLERANCE)


def producer(value: SSAValue, cls: type[Operation]) -> Operation | None:
    """The op of type ``cls`` defining ``value`` when this is its only use."""
    if isinstance(value, OpResult) and isinstance(value.op, cls) and value.has_one_use():
        return value.op
    return None


def factors(value: SSAValue, depth: int = 3) -> list[SSAValue]:
    """The factors of a product tree of single-use ``nn.mul`` ops."""
    op = producer(value, nn.MulOp)
    if op is None or depth == 0:
        return [value]
    return [*factors(op.operands[0], depth - 1), *factors(op.operands[1], depth - 1)]


def product_root_factors(op: nn.MulOp) -> list[SSAValue]:
    return [*factors(op.lhs), *factors(op.rhs)]


def erf_argument(value: SSAValue) -> SSAValue | None:
    """``x`` when ``value`` is ``1 + erf(x / sqrt 2)`` (or ``x * (1/sqrt 2)``)."""
    add = producer(value, nn.AddOp)
    if add is None:
        return None
    for erf_side, one_side in ((add.operands[0], add.operands[1]),
                               (add.operands[1], add.operands[0])):
        erf = producer(erf_side, nn.ErfOp)
        if erf is None or not is_splat(one_side, 1.0):
            continue
        inner = erf.operands[0]
        div = producer(inner, nn.DivOp)
        if div is not None and is_splat(div.operands[1], math.sqrt(2.0)):
            return div.operands[0]
        mul = producer(inner, nn.MulOp)
        if mul is not None:
            for a, b in ((mul.operands[0], mul.operands[1]), (mul.operands[1], mul.operands[0])):
                if is_splat(b, 1.0 / math.sqrt(2.0)):
                    return a
    return None


class ErfGelu(RewritePattern):
    """``0.5 * x * (1 + erf(x / sqrt 2))``, the three factors in any order -> ``nn.gelu``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, nn.MulOp):
            return
        parts = product_root_factors(op)
        if len(parts) != 3:
            return
        for i, candidate in enumerate(parts):
            x = erf_argument(candidate)
            if x is None:
                continue
            rest = [p for j, p in enumerate(parts) if j != i]
            if not any(r is x for r in rest):
                continue
            other = rest[1] if rest[0] is x else rest[0]
            if not is_splat(other, 0.5) or x.type != op.result.type:
                continue
            rewriter.replace(op, nn.GeluOp(x, "none"))
            return


def canonicalize(module: ModuleOp) -> None:
    """Applies the patterns above to ``module`` in place, then removes what they left dead."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier([ErfGelu()]), apply_recursively=True
    ).rewrite_module(module)
    for op in module.ops:
        for region in op.regions:
            region_dce(region)
