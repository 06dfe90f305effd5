"""numpy semantics of the column-statistics ops (``fusec.dialects.column_stats``), in float64
like every reference op; the executor rounds the result to f32 once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from fusec.dialects.column_stats import CenteredGramOp, ExplainedVarianceOp, PowerStepNormalizeOp
from fusec.dialects.common import float_prop
from fusec.reference.ops import Array, OpImpl, wide


def centered_gram(op: Operation, args: Sequence[Array]) -> Array:
    x = wide(args[0])
    xc = x - x.mean(axis=0, keepdims=True)
    return (xc.T @ xc) * float_prop(op, "scale")


def power_step_normalize(op: Operation, args: Sequence[Array]) -> Array:
    y = wide(args[0]) @ wide(args[1])
    norm = np.sqrt((y * y).sum(axis=0, keepdims=True))
    return y / (norm + float_prop(op, "eps"))


def explained_variance(op: Operation, args: Sequence[Array]) -> Array:
    g, q = wide(args[0]), wide(args[1])
    t = op.results[0].type
    assert isinstance(t, TensorType)
    return (q * (g @ q)).sum(axis=0, keepdims=t.get_num_dims() == 2)


COLUMN_STATS_IMPLS: dict[type[Operation], OpImpl] = {
    CenteredGramOp: centered_gram,
    PowerStepNormalizeOp: power_step_normalize,
    ExplainedVarianceOp: explained_variance,
}
