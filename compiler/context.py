"""The MLIR context fusec works in: which dialects are loaded."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.dialects.vector import Vector
from xdsl.ir import Dialect

from fusec.dialects.fused import Fused
from fusec.dialects.kernel import Kernel
from fusec.dialects.nn import NN


def dialects() -> list[Dialect]:
    """Every dialect a fusec program may use, in load order: the tensor level, then what the
    kernel-level IR adds (buffers, loops, vectors and the ``kernel`` dialect)."""
    return [Builtin, Func, Arith, Math, NN, Fused, MemRef, Scf, Vector, Kernel]


def make_context() -> Context:
    """A fresh context with all of fusec's dialects loaded."""
    ctx = Context()
    for dialect in dialects():
        ctx.load_dialect(dialect)
    return ctx
