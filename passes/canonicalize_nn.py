"""Rewrites ``nn`` ops into canonical forms, so that fusions apply to every spelling.

The fusions match one spelling each; after this pass (first in ``default``) every spelling
that computes the same thing is that one:

    reduce(x){axes, keepdims = false} -> reshape   ->  reduce(x){axes, keepdims = true}
    x / sqrt(v)                                    ->  x * rsqrt(v)
    1 / sqrt(v)                                    ->  rsqrt(v)
    pow(x, 2)                                      ->  x * x
    pow(x, 1)                                      ->  x
    c1 <op> c2, <op>(c) (splat constants)          ->  the constant (float32 arithmetic)
    gather(c, idx) (c a splat, maybe reshaped)     ->  the splat of gather's shape
    gather(t, idx) * c (t bound, c a splat)        ->  gather(t * c, idx)
    c <op> x (op commutative: add, mul, max, min)  ->  x <op> c
    reshape(f(x, b)), reshape(matmul(x, w))        ->  f(reshape(x), b), matmul(reshape(x), w)
    reshape(reshape(x)), reshape(x) to x's type    ->  reshape(x), x
    transpose(x) moving only unit axes, last kept  ->  reshape(x)
    V⁻¹(f(V(x))), V a transpose or reshape         ->  f(x), axes renamed (_cancelling_views.py)
    reduce(f(transpose(x))), kept axes in order    ->  reduce(f(x)), axes renamed (the same)
    attention(q, repeat(k), repeat(v))             ->  attention(q, k, v){num_kv_heads}
    x + neg(y), neg(y) + x                         ->  x - y
    gather(x, [s, s + 1, ..., s + n - 1]){axis}    ->  narrow(x){axis, start = s, length = n}
    gather(x, [s, s + k, ..., s + (n-1) k]){axis}  ->  reshape(narrow(reshape(x))) (_strided_gather.py)
    softmax(x){axis not last, or read by arith}    ->  exp(x - max) / sum(exp(x - max)), keepdims
    mean(x) * n                                    ->  sum(x)  (n: the count reduced)
    neg(min(neg(x))), neg(max(neg(x))); neg(neg x) ->  max(x), min(x); x

The grouped-heads form: an ``nn.attention`` whose k and v are views (reshape, transpose,
narrow, gather of constant indices, where on a constant true) of tensors with fewer heads,
each head repeated for a group of consecutive query heads, reads those heads once
(``num_kv_heads``). The views are judged by their values, not their spelling: the chain is run
on ``arange`` of its source (``passes/_view_tables.py``); when every group of ``g`` heads reads
the same elements, in k and in v, the kept heads are read through the canonical chain of that
table (narrows and a transpose of the source's axes, or of the source reshaped), checked on
``arange`` again.

The keepdims form: a reduction that drops its axes is rewritten to keep them when every reader
is a ``nn.reshape`` (the reduced values in the same order: a reshape to the keepdims shape goes
away, another one reads the kept form) or, for axes that lead the shape (``mean(x, 0)`` of a
matrix), a broadcasting elementwise op (numpy prepends the size-1 axes that keepdims keeps, so
it reads the same values). A returned reduction, or one read by anything else, keeps its form.

``x / sqrt(v)`` becomes ``x * rsqrt(v)`` when the ``sqrt`` has no other reader; the two differ
by an ulp or so, within what the reference comparisons allow (``rsqrt`` is what the norm
kernels compute). ``pow(x, 0.5)`` and ``pow(x, -0.5)`` are left alone: ``pow(-inf, 0.5)`` is
``+inf`` where ``sqrt(-inf)`` is NaN, and ``pow(-0, 0.5)`` is ``+0`` where ``sqrt(-0)`` is ``-0``.

Rows before the GEMM: a reshape that keeps the last axis (it merges or splits leading axes
only, as exporters write around a 2-D ``MatMul``) of a GEMM's epilogue chain moves above it
to the GEMM's input, one op at a time, where each value it passes has no other reader: above
an elementwise op whose other operands are vectors along the last axis (a bias), and above a
GEMM that declares column operands (`column_operands`: a 2-D weight, a bias), whose rows are
independent, by reshaping its input. A reshape whose chain does not reach such a GEMM stays
(moved into other arithmetic, it would only cut view regions apart) (several reshapes of one value to one type move as one). A reshape of a reshape is one
reshape, a reshape to its input's type is nothing, and a transpose that keeps the last axis and
the order of the axes longer than 1 (torch's ``(B, S, E) -> (S, B, E)`` with one batch) is a
reshape. So
``reshape(add(matmul(reshape(h), w), b))`` is ``add(matmul(h, w), b)``, which the GEMM epilogue
fusions match whatever leading axes the exporter flattened.

A gather from a table of one repeated value (a splat constant, through reshapes) is that value
wherever it reads (RoBERTa's token-type buffer, all zeros, read at the position ids); its
indices are then not read, so an index out of the table's range is not reported there, as it
is where a gather reads a table.

A gathered row scaled by a constant (Gemma's embedding times sqrt(hidden)) is a row of the
scaled table: where the table is known at compile time (`known_at_compile_time`: bound, or a
constant) and read by nothing else, the product moves onto the table, which
``compiler/fold_params.py`` then computes once (a product is correctly rounded alike in numpy
and on the device), so the multiply costs no launch per call.

Folding computes in float32 (numpy), as the program would; it folds splat constants of
``f32`` only. Each rewrite is a remark (``fusec-opt --remarks``) naming its rule, and counts
towards ``--rewrite-limit``.

Before::

    %m = nn.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
    %k = nn.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
    %s = nn.sqrt %k : tensor<4x1xf32> -> tensor<4x1xf32>
    %y = nn.div %x, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>

After::

    %m = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    %s = nn.rsqrt %m : tensor<4x1xf32> -> tensor<4x1xf32>
    %y = nn.mul %x, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
"""

# ruff: noqa: E501 - IR examples are written one op per line

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fusec.dialects import nn
from fusec.dialects.bound_inputs import known_at_compile_time
from fusec.dialects.common import bool_prop, int_prop, ints_prop, shape_of
from fusec.dialects.op_kinds import OpKind, column_operands, op_kind
from fusec.dialects.scalar_ops import splat_value
from fusec.passes._cancelling_views import CancellingViews, TransposedReduction
from fusec.passes._rooted import RootedApplier, Roots
from fusec.passes._strided_gather import StridedGather
from fusec.passes._util import producer
from fusec.passes._view_tables import constant_data, strided_view, view_input, view_table
from fusec.passes.remarks import may_fuse

PASS = "canonicalize-nn"

MAX_CHAIN = 16
"""How far up an epilogue chain a reshape is moved to the GEMM (the ops between are few)."""

COMMUTATIVE_OPS = (nn.AddOp, nn.MulOp, nn.MaxOp, nn.MinOp)

FOLD_BINARY: dict[type[nn.BinaryOp], Callable[[np.float32, np.float32], np.float32]] = {
    nn.AddOp: np.add,
    nn.SubOp: np.subtract,
    nn.MulOp: np.multiply,
    nn.DivOp: np.divide,
    nn.MaxOp: np.maximum,
    nn.MinOp: np.minimum,
}

FOLD_UNARY: dict[type[nn.UnaryOp], Callable[[np.float32], np.float32]] = {
    nn.NegOp: np.negative,
    nn.AbsOp: np.abs,
    nn.SqrtOp: np.sqrt,
    nn.RsqrtOp: lambda v: np.float32(1) / np.sqrt(v),
    nn.ExpOp: np.exp,
    nn.LogOp: np.log,
}


def applied(op: Operation, rule: str) -> bool:
    """Whether the rewrite by ``rule`` rooted at ``op`` may happen (see `may_fuse`)."""
    return may_fuse(PASS, op, f"canonical form '{rule}'", verb="rewrote")


def f32_splat(value: SSAValue) -> np.float32 | None:
    """The value of an f32 splat constant, else None."""
    owner = producer(value)
    if owner is None or not isinstance(value.type, TensorType) or value.type.element_type != f32:
        return None
    v = splat_value(owner)
    return np.float32(v) if isinstance(v, float) else None


def splat_constant(value: np.float32, t: TensorType) -> nn.ConstantOp:  # type: ignore[type-arg]
    shape = t.get_shape()
    return nn.ConstantOp(
        DenseIntOrFPElementsAttr.from_list(t, [float(value)] * math.prod(shape))
    )


def erase_if_dead(value: SSAValue, rewriter: PatternRewriter) -> None:
    """Erases the constant defining ``value`` once nothing reads it."""
    owner = producer(value)
    if isinstance(owner, nn.ConstantOp) and not owner.result.uses:
        rewriter.erase(owner)


def reads_as_kept(user: Operation, reduce: nn.ReduceOp) -> bool:
    """``user`` reads ``reduce``'s value the same with its axes kept as size-1 dimensions."""
    if isinstance(user, nn.ReshapeOp):
        return True
    if op_kind(user) is not OpKind.ELEMENTWISE:  # reads its operands with numpy broadcasting
        return False
    rank = len(shape_of(reduce.input))
    axes = sorted(a % rank for a in ints_prop(reduce, "axes"))
    leading = axes == list(range(len(axes)))
    return leading and len(shape_of(user.results[0])) >= rank


class KeepdimsForm(RewritePattern):
    """``reduce{keepdims = false}`` read only by reshapes (or broadcasts, for leading axes)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReduceOp, rewriter: PatternRewriter) -> None:
        if bool_prop(op, "keepdims") or not op.result.uses:
            return
        if not ints_prop(op, "axes") or not shape_of(op.input):
            return
        users = [use.operation for use in op.result.uses]
        if not all(reads_as_kept(u, op) for u in users):
            return
        if not applied(op, "keepdims"):
            return
        shape = list(shape_of(op.input))
        for a in ints_prop(op, "axes"):
            shape[a % len(shape)] = 1
        kept_type = TensorType(op.result.type.element_type, shape)  # type: ignore[attr-defined]
        kept = type(op)(op.input, list(ints_prop(op, "axes")), kept_type, keepdims=True)
        kept.location = op.location
        rewriter.insert(kept)
        for user in dict.fromkeys(users):
            if isinstance(user, nn.ReshapeOp) and user.result.type == kept_type:
                rewriter.replace(user, [], [kept.result])
            elif isinstance(user, nn.ReshapeOp):
                reshaped = nn.ReshapeOp(kept.result, user.result.type)
                reshaped.location = user.location
                rewriter.replace(user, reshaped)
        rewriter.replace_all_uses_with(op.result, kept.result)  # the broadcasting readers
        rewriter.erase(op)


class DivideBySqrt(RewritePattern):
    """``x / sqrt(v) -> x * rsqrt(v)``; ``1 / sqrt(v) -> rsqrt(v)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.DivOp, rewriter: PatternRewriter) -> None:
        sqrt = producer(op.rhs)
        if not isinstance(sqrt, nn.SqrtOp) or not sqrt.result.has_one_use():
            return
        if not applied(op, "x * rsqrt(v)"):
            return
        rsqrt = nn.RsqrtOp(sqrt.input)
        rsqrt.location = sqrt.location
        rewriter.insert(rsqrt)
        if f32_splat(op.lhs) == 1.0 and rsqrt.result.type == op.result.type:
            one = op.lhs
            rewriter.replace(op, [], [rsqrt.result])
            erase_if_dead(one, rewriter)
        else:
            rewriter.replace(op, nn.MulOp(op.lhs, rsqrt.result, op.result.type))
        rewriter.erase(sqrt)


class PowerByConstant(RewritePattern):
    """``pow(x, 2) -> x * x``; ``pow(x, 1) -> x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.PowOp, rewriter: PatternRewriter) -> None:
        exponent = f32_splat(op.rhs)
        if exponent not in (1.0, 2.0) or op.lhs.type != op.result.type:
            return
        if not applied(op, f"pow(x, {exponent:g})"):
            return
        exponent_value = op.rhs
        if exponent == 2.0:
            rewriter.replace(op, nn.MulOp(op.lhs, op.lhs, op.result.type))
        else:
            rewriter.replace(op, [], [op.lhs])
        erase_if_dead(exponent_value, rewriter)


class FoldConstants(RewritePattern):
    """An f32 binary or unary op of splat constants is the splat of its value."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.BinaryOp) and type(op) in FOLD_BINARY:
            lhs, rhs = f32_splat(op.lhs), f32_splat(op.rhs)
            if lhs is None or rhs is None:
                return
            with np.errstate(all="ignore"):
                value = np.float32(FOLD_BINARY[type(op)](lhs, rhs))
        elif isinstance(op, nn.UnaryOp) and type(op) in FOLD_UNARY:
            x = f32_splat(op.input)
            if x is None:
                return
            with np.errstate(all="ignore"):
                value = np.float32(FOLD_UNARY[type(op)](x))
        else:
            return
        if not applied(op, "constant fold"):
            return
        const = splat_constant(value, op.results[0].type)  # type: ignore[arg-type]
        const.location = op.location
        operands = list(op.operands)
        rewriter.replace(op, const)
        for operand in operands:
            erase_if_dead(operand, rewriter)


class GatherOfSplat(RewritePattern):
    """``gather(c, idx)`` with ``c`` a splat constant (or a reshape of one) -> the splat."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.GatherOp, rewriter: PatternRewriter) -> None:
        table = op.operands[0]
        while isinstance(producer(table), nn.ReshapeOp):
            table = producer(table).operands[0]  # type: ignore[union-attr]
        value = splat_value(producer(table)) if producer(table) is not None else None
        if value is None or not applied(op, "gather of a splat"):
            return
        t = op.results[0].type
        const = nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            t, [value] * math.prod(t.get_shape())))  # type: ignore[attr-defined]
        const.location = op.location
        rewriter.replace(op, const)


class ScaleTheGatheredTable(RewritePattern):
    """``gather(t, idx) * c`` -> ``gather(t * c, idx)``, ``t`` known at compile time."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        gather, scale = producer(op.lhs), op.rhs
        if not isinstance(gather, nn.GatherOp) or splat_value(producer(scale)) is None:
            return
        table = gather.operands[0]
        if (len(shape_of(scale)) > len(shape_of(table)) or not known_at_compile_time(table)
                or not table.has_one_use() or not gather.results[0].has_one_use()
                or op.result.type != gather.results[0].type
                or not applied(op, "scale the gathered table")):
            return
        scaled = nn.MulOp(table, scale, table.type)
        moved = nn.GatherOp(scaled.result, gather.operands[1],
                            int_prop(gather, "axis"), op.result.type)
        scaled.location = moved.location = op.location
        rewriter.insert(scaled, InsertPoint.before(op))
        rewriter.replace(op, moved)
        rewriter.erase(gather)


class ConstantOnTheRight(RewritePattern):
    """A commutative op reads a splat constant as its right operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.BinaryOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op, COMMUTATIVE_OPS):
            return
        owner = producer(op.lhs)
        if owner is None or splat_value(owner) is None:
            return
        right = producer(op.rhs)
        if right is not None and splat_value(right) is not None:
            return  # both constant: folded (or not f32), nothing to order
        if not applied(op, "constant on the right"):
            return
        ordered = type(op)(op.rhs, op.lhs, op.result.type)
        ordered.location = op.location
        rewriter.replace(op, ordered)


def keeps_last_axis(op: nn.ReshapeOp) -> bool:
    """``op`` merges or splits leading axes only: both shapes end in the same last axis."""
    src, dst = shape_of(op.input), shape_of(op.result)
    return bool(src) and bool(dst) and src[-1] == dst[-1]


def row_operands(op: Operation) -> list[bool] | None:
    """For an op a last-axis-keeping reshape may move above: per operand, whether it is
    reshaped with the result (else it is read as it is, being a vector along the last axis or
    a GEMM's column operand); None when the reshape may not move above ``op``. An elementwise
    op reshapes exactly one operand (the others are vectors), so nothing new is reshaped
    beside the chain."""
    if len(op.results) != 1 or op.regions:
        return None
    shape = shape_of(op.results[0])
    if op_kind(op) is OpKind.ELEMENTWISE:
        flags = [shape_of(v) == shape for v in op.operands]
        vectors = all(full or (len(shape_of(v)) <= 1 and shape_of(v) in ((), (1,), shape[-1:]))
                      for v, full in zip(op.operands, flags, strict=True))
        return flags if vectors and sum(flags) == 1 else None
    names = column_operands(op)
    if not names:
        return None
    cols = [getattr(op, n) for n in names]
    if len(shape_of(cols[0])) != 2 or any(len(shape_of(c)) > 1 for c in cols[1:]):
        return None
    return [i == 0 for i in range(len(op.operands))]


def ends_at_gemm(value: SSAValue) -> bool:
    """``value`` is made by a GEMM with column operands, through ops that a last-axis-keeping
    reshape moves above (`row_operands`) and such reshapes: the reshape can reach the GEMM's
    input."""
    for _ in range(MAX_CHAIN):
        owner = producer(value)
        if owner is None:
            return False
        if isinstance(owner, nn.ReshapeOp):
            value = owner.input
            continue
        flags = row_operands(owner)
        if flags is None:
            return False
        if column_operands(owner):
            return True
        value = owner.operands[flags.index(True)]
    return False


class ReshapeTowardInputs(RewritePattern):
    """A last-axis-keeping reshape moves above the elementwise op or GEMM making its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.ReshapeOp, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type:
            if applied(op, "identity reshape"):
                rewriter.replace(op, [], [op.input])
            return
        source = producer(op.input)
        if isinstance(source, nn.ReshapeOp):
            if applied(op, "reshape of a reshape"):
                joined = nn.ReshapeOp(source.input, op.result.type)
                joined.location = op.location
                rewriter.replace(op, joined)
                if not source.result.uses:
                    rewriter.erase(source)
            return
        readers = [use.operation for use in op.input.uses]
        if len(shape_of(op.result)) < 2:
            return  # it would reach the GEMM as a vector: a GEMM reads [..., M, K] (fuzz 600111)
        if source is None or not keeps_last_axis(op) or not all(
                isinstance(r, nn.ReshapeOp) and r.result.type == op.result.type
                for r in readers) or not ends_at_gemm(op.input):
            return
        flags = row_operands(source)
        if flags is None or not applied(op, "reshape toward inputs"):
            return
        rows = list(shape_of(op.result)[:-1])
        operands: list[SSAValue] = []
        for v, reshaped in zip(source.operands, flags, strict=True):
            if not reshaped:
                operands.append(v)
                continue
            t = v.type
            assert isinstance(t, TensorType)
            moved = nn.ReshapeOp(v, TensorType(t.element_type, [*rows, shape_of(v)[-1]]))
            moved.location = op.location
            rewriter.insert_op(moved, InsertPoint.before(source))
            operands.append(moved.result)
        elem = source.results[0].type.element_type  # type: ignore[attr-defined]
        moved_op = type(source).create(
            operands=operands, result_types=[TensorType(elem, shape_of(op.result))],
            properties=dict(source.properties), attributes=dict(source.attributes),
        )
        moved_op.location = source.location
        rewriter.replace(op, moved_op)
        for other in readers:
            if other is not op:
                rewriter.replace(other, [], [moved_op.results[0]])
        rewriter.erase(source)


class UnitAxesTranspose(RewritePattern):
    """A transpose that keeps the last axis and moves only axes of size 1 is a reshape of the
    rows (one that moves the last axis stays: the fusions of a matrix and its transpose, such
    as ``fuse-centered-gram``, match it even for a single row)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.TransposeOp, rewriter: PatternRewriter) -> None:
        shape = shape_of(op.input)
        perm = ints_prop(op, "perm")
        moved = [p for p in perm if shape[p] != 1]
        if not perm or perm[-1] != len(perm) - 1 or moved != sorted(moved):
            return
        if not applied(op, "transpose of unit axes"):
            return
        reshape = nn.ReshapeOp(op.input, op.result.type)
        reshape.location = op.location
        rewriter.replace(op, reshape)
def repeat_groups(table: np.ndarray, shape: tuple[int, ...], heads: int, dim: int) -> set[int]:
    """The sizes ``g > 1`` of the groups of ``heads`` consecutive heads that ``table`` (a
    ``[B, S, heads*D]`` view table) reads the same elements for."""
    batch, seq = shape[0], shape[1]
    groups = set()
    for g in range(2, heads + 1):
        if heads % g == 0:
            split = table.reshape(batch, seq, heads // g, g, dim)
            if np.array_equal(split, np.broadcast_to(split[:, :, :, :1], split.shape)):
                groups.add(g)
    return groups


def erase_dead_views(value: SSAValue, rewriter: PatternRewriter) -> None:
    """Erases the chain of views (and their constant operands) ending at ``value`` as far as
    nothing else reads it."""
    owner = producer(value)
    while owner is not None and not owner.results[0].uses and view_input(owner) is not None:
        read = view_input(owner)
        operands = [v for v in owner.operands if v is not read]
        rewriter.erase(owner)
        for operand in operands:
            erase_if_dead(operand, rewriter)
        owner = producer(read) if read is not None else None


class GroupedHeads(RewritePattern):
    """``nn.attention`` whose k and v repeat each key/value head for a group of query heads,
    read through views (Unsqueeze/Expand/Reshape, a Gather of ``[0, 0, 1, 1]``, Tile: any chain
    whose index table says so) -> ``num_kv_heads``, k and v read through the canonical chain of
    the one head per group."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.AttentionOp, rewriter: PatternRewriter) -> None:
        heads, dim = int_prop(op, "num_heads"), int_prop(op, "head_dim")
        kv_heads = op.kv_heads()
        shape = shape_of(op.k)
        found = [view_table(op.k), view_table(op.v)]
        if found[0] is None or found[1] is None:
            return
        groups = repeat_groups(found[0][1], shape, kv_heads, dim) & repeat_groups(
            found[1][1], shape, kv_heads, dim)
        if not groups:
            return
        kept_heads = kv_heads // max(groups)
        box = (shape[0], shape[1], kept_heads, dim)
        chains = []
        for source, table in found:
            kept = table.reshape(*box[:3], max(groups), dim)[:, :, :, 0]
            chain = strided_view(kept, shape_of(source), box, (*box[:2], kept_heads * dim))
            if chain is None:
                return
            chains.append((source, chain))
        if not applied(op, "grouped heads"):
            return
        read = []
        for source, chain in chains:
            ops = chain.build(source)
            for view in ops:
                view.location = op.location
                rewriter.insert(view)
            read.append(ops[-1].results[0] if ops else source)
        old_k, old_v = op.k, op.v
        new = nn.AttentionOp(op.q, read[0], read[1], heads, dim, mask=op.mask,
                             scale=op.scale_value() if op.scale is not None else None,
                             causal=bool_prop(op, "causal"), num_kv_heads=kept_heads,
                             window=op.window_size())
        new.location = op.location
        rewriter.replace(op, new)
        erase_dead_views(old_k, rewriter)
        erase_dead_views(old_v, rewriter)


class SubtractForAddOfNeg(RewritePattern):
    """``x + neg(y)``, ``neg(y) + x`` -> ``x - y`` (the ``neg`` kept while something else reads
    it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.AddOp, rewriter: PatternRewriter) -> None:
        for plain, negated in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            neg = producer(negated)
            if isinstance(neg, nn.NegOp) and applied(op, "x - y"):
                rewriter.replace(op, nn.SubOp(plain, neg.input, op.result.type))
                if not neg.result.uses:
                    rewriter.erase(neg)
                return


def consecutive_start(indices: np.ndarray, size: int) -> int | None:
    """The start of ``indices`` when they are ``start, start + 1, ...`` within ``size`` (negative
    ones counting from the end), else None."""
    if indices.ndim != 1 or not indices.size or np.any(indices < -size) or np.any(
            indices >= size):
        return None
    run = indices.astype(np.int64) % size
    start = int(run[0])
    return start if np.array_equal(run, np.arange(start, start + run.size)) else None


class NarrowForGather(RewritePattern):
    """``gather(x, [s, s + 1, ..., s + n - 1]){axis}`` (constant indices: a slice written as a
    Gather or a stepped Slice of step 1) -> ``narrow(x){axis, start = s, length = n}``, which
    the elementwise fuser reads as an index map."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.GatherOp, rewriter: PatternRewriter) -> None:
        indices = constant_data(op.indices)
        if indices is None or indices.dtype.kind not in "iu":
            return
        axis = int_prop(op, "axis") % len(shape_of(op.data))
        start = consecutive_start(indices, shape_of(op.data)[axis])
        if start is None or not applied(op, "narrow for gather"):
            return
        table = op.indices
        rewriter.replace(op, nn.NarrowOp(op.data, axis, start, indices.size))
        erase_if_dead(table, rewriter)


class SoftmaxWrittenOut(RewritePattern):
    """``softmax(x){axis}`` (f32) over an axis other than the last, or read only by elementwise
    ops (``log(softmax(x))``) -> ``exp(x - max) / sum(exp(x - max))`` with keepdims
    reductions, which ``fuse-row-reduce`` computes in one kernel over that axis with its
    elementwise readers (``nn.softmax`` itself runs over the last axis only: transposed there
    and back, three launches; its readers, another one)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.SoftmaxOp, rewriter: PatternRewriter) -> None:
        t = op.input.type
        if not isinstance(t, TensorType) or t.element_type != f32:
            return
        rank = len(shape_of(op.input))
        axis = int_prop(op, "axis") % rank
        readers = [use.operation for use in op.result.uses]
        read_by_arithmetic = bool(readers) and all(
            op_kind(r) is OpKind.ELEMENTWISE for r in readers)
        if axis == rank - 1 and not read_by_arithmetic:
            return
        if not applied(op, "softmax written out"):
            return
        shape = list(shape_of(op.input))
        shape[axis] = 1
        kept = TensorType(f32, shape)
        high = nn.ReduceMaxOp(op.input, [axis], kept, keepdims=True)
        shifted = nn.SubOp(op.input, high.result, t)
        exp = nn.ExpOp(shifted.result)
        total = nn.ReduceSumOp(exp.result, [axis], kept, keepdims=True)
        ops = [high, shifted, exp, total, nn.DivOp(exp.result, total.result, t)]
        for new in ops:
            new.location = op.location
        rewriter.replace(op, ops)


EXTREMUM_OF_NEGATED: dict[type[nn.ReduceOp], type[nn.ReduceOp]] = {
    nn.ReduceMinOp: nn.ReduceMaxOp,
    nn.ReduceMaxOp: nn.ReduceMinOp,
}


class NegatedExtremum(RewritePattern):
    """``neg(min(neg(x)))`` -> ``max(x)``, ``neg(max(neg(x)))`` -> ``min(x)`` (exact: negation
    reverses the order, NaN stays NaN); ``neg(neg(x))`` -> ``x``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.NegOp, rewriter: PatternRewriter) -> None:
        inner = producer(op.input)
        if isinstance(inner, nn.NegOp) and inner.input.type == op.result.type:
            if applied(op, "neg(neg(x))"):
                rewriter.replace(op, [], [inner.input])
                if not inner.result.uses:
                    rewriter.erase(inner)
            return
        if type(inner) not in EXTREMUM_OF_NEGATED or not inner.result.has_one_use():
            return
        negated = producer(inner.input)  # type: ignore[union-attr]
        if not isinstance(negated, nn.NegOp) or not applied(op, "extremum of a negation"):
            return
        assert isinstance(inner, nn.ReduceOp)
        flipped = EXTREMUM_OF_NEGATED[type(inner)](
            negated.input, list(ints_prop(inner, "axes")), op.result.type,
            keepdims=bool_prop(inner, "keepdims"))
        flipped.location = inner.location
        rewriter.replace(op, flipped)
        rewriter.erase(inner)
        if not negated.result.uses:
            rewriter.erase(negated)


class ScaledReduction(RewritePattern):
    """``mean(x) * n`` -> ``sum(x)``, ``n`` the count of elements each result reduces (f32, the
    mean read once): the sum without the two roundings of ``* (1/n) * n``. The other way
    (``sum / n`` -> ``mean``) is not a canonical form: kernels compute a mean as ``sum * (1/n)``,
    which differs from ``sum / n`` by an ulp, and a zero variance of constant rows would not
    stay zero."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MulOp, rewriter: PatternRewriter) -> None:
        reduce, scale = producer(op.lhs), f32_splat(op.rhs)
        if not isinstance(reduce, nn.ReduceMeanOp) or scale is None:
            return
        if not reduce.result.has_one_use() or reduce.result.type != op.result.type:
            return
        shape = shape_of(reduce.input)
        count = math.prod(shape[a % len(shape)] for a in ints_prop(reduce, "axes"))
        if scale != np.float32(count) or not applied(op, "sum for mean * n"):
            return
        constant = op.rhs
        new = nn.ReduceSumOp(reduce.input, list(ints_prop(reduce, "axes")), op.result.type,
                             keepdims=bool_prop(reduce, "keepdims"))
        new.location = reduce.location
        rewriter.replace(op, new)
        rewriter.erase(reduce)
        erase_if_dead(constant, rewriter)


@dataclass(frozen=True)
class CanonicalizeNnPass(ModulePass):
    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Each pattern with the classes of the ops it is matched on (`RootedApplier`).
        patterns: list[tuple[RewritePattern, Roots]] = [
            (FoldConstants(), (nn.BinaryOp, nn.UnaryOp)),
            (GatherOfSplat(), (nn.GatherOp,)),
            (ScaleTheGatheredTable(), (nn.MulOp,)),
            (ConstantOnTheRight(), (nn.BinaryOp,)),
            (PowerByConstant(), (nn.PowOp,)),
            (DivideBySqrt(), (nn.DivOp,)),
            (KeepdimsForm(), (nn.ReduceOp,)),
            (ReshapeTowardInputs(), (nn.ReshapeOp,)),
            (UnitAxesTranspose(), (nn.TransposeOp,)),
            (CancellingViews(), (nn.TransposeOp, nn.ReshapeOp)),
            (TransposedReduction(), (nn.ReduceOp,)),
            (GroupedHeads(), (nn.AttentionOp,)),
            (SubtractForAddOfNeg(), (nn.AddOp,)),
            (NarrowForGather(), (nn.GatherOp,)),
            (StridedGather(), (nn.GatherOp,)),
            (SoftmaxWrittenOut(), (nn.SoftmaxOp,)),
            (ScaledReduction(), (nn.MulOp,)),
            (NegatedExtremum(), (nn.NegOp,)),
        ]
        PatternRewriteWalker(RootedApplier(patterns)).rewrite_module(op)
