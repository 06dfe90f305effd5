"""``lower-to-kernels``: the column-statistics ops, two template launches each.

    fused.centered_gram %x {scale}        -> CPU: column_mean(x) -> mean;
                                                  centered_gram(x, mean) -> out
                                             GPU, with the knob gram_split_on_gpu (else as the CPU):
                                                  gram_slices(x) -> partials, slice means and
                                                  residual sums (slices of rows);
                                                  gram_combine(them) -> out
    fused.power_step_normalize %a, %q     -> gemm_column_sums{squares}(a, q) -> y, partials;
                                             column_finish{normalize}(partials, y) -> out
    fused.explained_variance %g, %q       -> gemm_column_sums{times_rhs}(g, q) -> partials;
                                             column_finish{sum}(partials) -> out

The kernels are in ``codegen/kernels/column_stats.py`` (the GPU Gram in
``centered_gram_split.py``); ``y``, ``mean``, ``partials`` and the slice statistics are
intermediate buffers.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from fusec import knobs
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


GRAM_TILE = 64
"""Side of a work-group's tile of the GPU Gram (``centered_gram_split.TILE``)."""

GRAM_TARGET_GROUPS = 384
"""Work-groups the GPU Gram aims at (tiles of the upper triangle times slices of rows): a few
per SM of a 132-SM H100 or H200, so that the 2 x 4 x 4 64 x 64 tiles of a 256-wide Gram fill
the card."""

GRAM_PARTIALS_BYTES = 64 << 20
"""At most this many bytes of per-slice partial Grams (``S * d * d`` floats)."""


def gram_slice_rows(n: int, d: int) -> int:
    """Rows per slice of the GPU Gram of ``[n, d]``: enough slices that the upper tiles times
    the slices reach `GRAM_TARGET_GROUPS`, each a multiple of 16 rows, within
    `GRAM_PARTIALS_BYTES`."""
    tiles = -(-d // GRAM_TILE)
    pairs = tiles * (tiles + 1) // 2
    slices = max(1, min(-(-GRAM_TARGET_GROUPS // pairs), GRAM_PARTIALS_BYTES // (4 * d * d)))
    per_slice = -(-n // slices)
    return max(16, -(-per_slice // 16) * 16)


def lower_centered_gram(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.CenteredGramOp)
    n, d = shape_of(op.x)
    if n == 0:  # (d == 0, an empty result, is not lowered at all: `produces_nothing`)
        raise LoweringError(f"'{op.name}' of {op.x.type} has no rows: their mean is undefined")
    out = lo.alloc(op.result.type)
    x = lo.buffer(op.x)
    if lo.options.device == "gpu" and knobs.value("gram_split_on_gpu"):
        rows = gram_slice_rows(n, d)
        slices = -(-n // rows)
        partials = lo.alloc(TensorType(f32, [slices, d, d]), "gram_partials")
        means = lo.alloc(TensorType(f32, [slices, d]), "gram_slice_mean")
        resid = lo.alloc(TensorType(f32, [slices, d]), "gram_slice_resid")
        sizes = params(n=n, d=d, slice_rows=rows)
        lo.template("gram_slices", sizes, [x], [partials, means, resid])
        lo.template("gram_combine", {**sizes, **params(scale=float_prop(op, "scale"))},
                    [partials, means, resid], [out])
        return [out]
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
