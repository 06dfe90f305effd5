"""The MLIR context fusec works in: which dialects are loaded."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.ir import Dialect

from fusec.dialects.fused import Fused
from fusec.dialects.nn import NN


def dialects() -> list[Dialect]:
    """Every dialect a fusec program may use, in load order."""
    return [Builtin, Func, Arith, Math, NN, Fused]


def make_context() -> Context:
    """A fresh context with all of fusec's dialects loaded."""
    ctx = Context()
    for dialect in dialects():
        ctx.load_dialect(dialect)
    return ctx
