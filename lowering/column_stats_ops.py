"""``lower-to-kernels``: the column-statistics ops, two template launches each.

    fused.centered_gram %x {scale}        -> column_mean(x) -> mean;
                                             centered_gram(x, mean) -> out
    fused.power_step_normalize %a, %q     -> gemm_column_sums{squares}(a, q) -> y, partials;
                                             column_finish{normalize}(partials, y) -> out
    fused.explained_variance %g, %q       -> gemm_column_sums{times_rhs}(g, q) -> partials;
                                             column_finish{sum}(partials) -> out

The kernels are in ``codegen/kernels/column_stats.py``; ``y``, ``mean`` and ``partials`` are
intermediate buffers.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from fusec.dialects import fused
from fusec.dialects.common import float_prop
from fusec.lowering.generated_ops import shape_of
from fusec.lowering.lower_to_kernels import FunctionLowering, LoweringError
from fusec.lowering.template_ops import params

TILES = {"gpu": 16, "cpu": 8}
"""Rows of output summed into one row of partials, by device kind (a template parameter):
the side of the GPU kernels' square tiles, the rows of a CPU work-item's register tile. A
partials buffer has ``ceil(m / tile)`` rows."""


def shape(lo: FunctionLowering) -> dict[str, Attribute]:
    """The kernels' shape parameters: the device kind and its tile."""
    kind = lo.options.device
    return params(shape=kind, tile=TILES[kind])


def lower_centered_gram(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.CenteredGramOp)
    n, d = shape_of(op.x)
    out = lo.alloc(op.result.type)
    if n == 0 or d == 0:
        return [out]
    x = lo.buffer(op.x)
    mean = lo.alloc(TensorType(f32, [d]), "col_mean")
    lo.template("column_mean", {**params(rows=n, cols=d), **shape(lo)}, [x], [mean])
    scale = {**params(rows=n, cols=d, scale=float_prop(op, "scale")), **shape(lo)}
    lo.template("centered_gram", scale, [x, mean], [out])
    return [out]


def column_sums(lo: FunctionLowering, a: SSAValue, b: SSAValue, mode: str,
                y: SSAValue | None) -> tuple[SSAValue, int]:
    """Launches ``gemm_column_sums`` of ``a @ b``; its partials buffer and row count."""
    (m, k), (_, c) = shape_of(a), shape_of(b)
    parts = -(-m // TILES[lo.options.device])
    partials = lo.alloc(TensorType(f32, [parts, c]), "col_partials")
    outs = [y, partials] if y is not None else [partials]
    lo.template("gemm_column_sums", {**params(m=m, k=k, c=c, mode=mode), **shape(lo)},
                [lo.buffer(a), lo.buffer(b)], outs)
    return partials, parts


def lower_power_step_normalize(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.PowerStepNormalizeOp)
    (m, k), (_, c) = shape_of(op.a), shape_of(op.q)
    out = lo.alloc(op.result.type)
    if m == 0 or c == 0:
        return [out]
    if k == 0:  # y = 0: every column is 0 / (0 + eps)
        raise_empty(op)
    y = lo.alloc(op.result.type, "step")
    partials, parts = column_sums(lo, op.a, op.q, "squares", y)
    finish = params(parts=parts, m=m, c=c, mode="normalize", eps=float_prop(op, "eps"))
    lo.template("column_finish", {**finish, **shape(lo)}, [partials, y], [out])
    return [out]


def lower_explained_variance(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.ExplainedVarianceOp)
    (d, _), (_, k) = shape_of(op.g), shape_of(op.q)
    out = lo.alloc(op.result.type)
    if k == 0:
        return [out]
    if d == 0:
        raise_empty(op)
    partials, parts = column_sums(lo, op.g, op.q, "times_rhs", None)
    finish = params(parts=parts, m=d, c=k, mode="sum", eps=0.0)
    lo.template("column_finish", {**finish, **shape(lo)},
                [partials], [out])
    return [out]


def raise_empty(op: Operation) -> None:
    raise LoweringError(f"'{op.name}' with an empty inner dimension is not supported; "
                        "run unfuse on it first")


COLUMN_STATS_LOWERINGS = {
    fused.CenteredGramOp: lower_centered_gram,
    fused.PowerStepNormalizeOp: lower_power_step_normalize,
    fused.ExplainedVarianceOp: lower_explained_variance,
}
