"""`rewrite_roots` and `RootedApplier` visit and rewrite as xDSL's walker and applier do.

`RootedWalker` fills its worklist by following the blocks' linked lists: the ops it admits come
in the order of xDSL's own walk (here with every op admitted, on a module with nested regions).
A pattern walked with roots makes the same rewrites, in the same order, as with the plain walker;
an op of no root class is never offered to a pattern.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import Source, parse_module
from fusec.dialects import nn
from fusec.passes._rooted import RootedApplier, RootedWalker, rewrite_roots

PROGRAM = """\
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %r = nn.relu %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %e = fused.elementwise %r, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    %t = arith.mulf %s, %q : f32
    fused.yield %t : f32
  }
  %n = nn.neg %e : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.add %n, %e : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
"""


def parsed():
    return parse_module(make_context(), Source(PROGRAM, "t.mlir"), lambda *_: None)


class Record(RewritePattern):
    """Records the ops it is offered; rewrites none."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.seen.append(op.name)


class NegToSub(RewritePattern):
    """``nn.neg(x) -> nn.sub(x, x)`` (not the same value: a rewrite to compare walks by)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.NegOp):
            rewriter.replace(op, nn.SubOp(op.input, op.input, op.results[0].type))


def test_population_order_is_xdsl_walk_order() -> None:
    module = parsed()
    assert any(op.name == "fused.elementwise" for op in module.walk())
    rooted = RootedWalker(Record(), roots=(Operation,))
    rooted._populate_worklist(module.body)  # noqa: SLF001 - the order is what is tested
    plain = PatternRewriteWalker(Record())
    plain._populate_worklist(module.body)  # noqa: SLF001
    assert rooted._worklist._stack == plain._worklist._stack  # noqa: SLF001
    assert len(rooted._worklist._stack) == sum(1 for _ in module.body.walk())  # noqa: SLF001


def test_only_root_ops_are_offered() -> None:
    pattern = Record()
    rewrite_roots(parsed(), pattern, (nn.AddOp,))
    assert pattern.seen == ["nn.add", "nn.add"]


def test_same_rewrites_as_the_plain_walker() -> None:
    plain, rooted = parsed(), parsed()
    PatternRewriteWalker(NegToSub()).rewrite_module(plain)
    rewrite_roots(rooted, NegToSub(), (nn.NegOp,))
    assert str(rooted) == str(plain)
    assert "nn.sub" in str(rooted) and "nn.neg" not in str(rooted)


def test_applier_matches_greedy_applier() -> None:
    plain, rooted = parsed(), parsed()
    record_plain, record_rooted = Record(), Record()
    PatternRewriteWalker(GreedyRewritePatternApplier([NegToSub(), record_plain])).rewrite_module(
        plain
    )
    PatternRewriteWalker(
        RootedApplier([(NegToSub(), (nn.NegOp,)), (record_rooted, (Operation,))])
    ).rewrite_module(rooted)
    assert str(rooted) == str(plain)
    assert record_rooted.seen == record_plain.seen
