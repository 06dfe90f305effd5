"""A deliberately wrong "fusion" for the bisection tests: ``nn.neg(x) -> x``.

It goes through `fusec.passes.remarks.may_fuse` like a real fusion, so ``--rewrite-limit``
counts it and ``fusec-run --bisect`` must name it. Loaded only by tests/tools/test_differential.py,
never registered with fusec.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.passes.remarks import may_fuse

PASS = "planted-drop-negation"


class DropNegation(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.NegOp, rewriter: PatternRewriter) -> None:
        if may_fuse(PASS, op, "nn.neg dropped (wrong on purpose)"):
            rewriter.replace(op, [], [op.operands[0]])


@dataclass(frozen=True)
class DropNegationPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DropNegation()).rewrite_module(op)
