"""Undoes fusion: every ``fused`` op becomes its ``decompose()``, the ``nn`` ops it stands for.

One pattern serves every fused op; ``ops`` restricts it to the ops it names, by full name in
quotes or by the name without the ``fused.`` prefix:
``unfuse{ops=swiglu,attention_block}`` or ``unfuse{ops="fused.swiglu"}`` (xDSL's option
syntax: a comma separates the values of one option, a space separates options, and an unquoted
value may not contain a dot). Ops a decomposition produces are unfused too when they are named.
A ``fused.elementwise`` body op with no ``nn`` equivalent (``math.sin``) fails the pass, naming it.

    %y = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : ...
  becomes
    %m = nn.matmul %x, %w : ...
    %a = nn.add %m, %b : ...
    %y = nn.gelu %a : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from fusec.dialects.fused import FUSED_OPS
from fusec.dialects.scalar_ops import ScalarOpError
from fusec.passes._util import OpPassFailure

FUSED_NAMES = tuple(op.name for op in FUSED_OPS)


def full_name(name: str) -> str:
    """``swiglu`` or ``fused.swiglu`` -> ``fused.swiglu``; ``ValueError`` for any other name."""
    full = name if name.startswith("fused.") else f"fused.{name}"
    if full not in FUSED_NAMES:
        raise ValueError(f"unknown fused op '{name}' (known: {', '.join(FUSED_NAMES)})")
    return full


@dataclass
class Decompose(RewritePattern):
    """``fused op -> op.decompose()`` for the op names in ``names``."""

    names: frozenset[str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in self.names or not isinstance(op, FUSED_OPS):
            return
        try:
            new_ops, results = op.decompose()  # type: ignore[attr-defined]
        except ScalarOpError as e:  # a region body op with no nn equivalent
            raise OpPassFailure("unfuse", e.op, str(e)) from None
        rewriter.replace(op, new_ops, results)


@dataclass(frozen=True)
class UnfusePass(ModulePass):
    name = "unfuse"

    ops: tuple[str, ...] = ()
    """Fused ops to decompose (with or without the ``fused.`` prefix); empty means all."""

    def __post_init__(self) -> None:
        for name in self.ops:
            full_name(name)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = frozenset(full_name(n) for n in self.ops) if self.ops else frozenset(FUSED_NAMES)
        PatternRewriteWalker(Decompose(names)).rewrite_module(op)
