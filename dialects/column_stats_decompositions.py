"""How the column-statistics ops decompose back into ``nn`` ops::

    centered_gram(x){scale}
        = mul(matmul(transpose(xc, [1, 0]), xc), scale), xc = sub(x, reduce_mean(x, [0], keep))
          (no mul when scale is 1)
    power_step_normalize(a, q){eps}
        = div(y, add(sqrt(reduce_sum(mul(y, y), [0], keep)), eps)), y = matmul(a, q)
    explained_variance(g, q) = reduce_sum(mul(q, matmul(g, q)), [0], keep = rank 2 result)
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from fusec.dialects import nn
from fusec.dialects.decompositions import Decomposition, OpSequence


def constant(seq: OpSequence, value: float, name: str) -> SSAValue:
    """A rank-0 f32 ``nn.constant``."""
    t = TensorType(f32, [])
    attr = DenseIntOrFPElementsAttr.from_list(t, [float(np.float32(value))])
    return seq.add(nn.ConstantOp(attr), name)


def column_sum(seq: OpSequence, x: SSAValue, kind: type[nn.ReduceOp], keepdims: bool,
               name: str) -> SSAValue:
    """``reduce(x, axes = [0])`` of a rank-2 ``x``."""
    t = x.type
    assert isinstance(t, TensorType)
    d = t.get_shape()[1]
    shape = [1, d] if keepdims else [d]
    return seq.add(kind(x, [0], TensorType(f32, shape), keepdims), name)


def centered_gram(op: Operation, x: SSAValue, scale: float) -> Decomposition:
    seq = OpSequence(op)
    t = x.type
    assert isinstance(t, TensorType)
    n, d = t.get_shape()
    mean = column_sum(seq, x, nn.ReduceMeanOp, True, "col_mean")
    xc = seq.add(nn.SubOp(x, mean, t), "centered")
    xt = seq.add(nn.TransposeOp(xc, [1, 0], TensorType(f32, [d, n])), "centered_t")
    gram = seq.matmul(xt, xc, "gram")
    if scale == 1.0:
        return seq.done(gram)
    return seq.done(seq.add(nn.MulOp(gram, constant(seq, scale, "scale"), gram.type), "cov"))


def power_step_normalize(op: Operation, a: SSAValue, q: SSAValue, eps: float) -> Decomposition:
    seq = OpSequence(op)
    y = seq.matmul(a, q, "step")
    squares = seq.add(nn.MulOp(y, y, y.type), "squares")
    total = column_sum(seq, squares, nn.ReduceSumOp, True, "col_sumsq")
    norm = seq.add(nn.SqrtOp(total), "col_norm")
    denominator = seq.add(nn.AddOp(norm, constant(seq, eps, "eps"), norm.type), "col_denom")
    return seq.done(seq.add(nn.DivOp(y, denominator, y.type), "normalized"))


def explained_variance(op: Operation, g: SSAValue, q: SSAValue,
                       result_type: Attribute) -> Decomposition:
    seq = OpSequence(op)
    gq = seq.matmul(g, q, "gq")
    product = seq.add(nn.MulOp(q, gq, gq.type), "q_gq")
    assert isinstance(result_type, TensorType)
    keepdims = result_type.get_num_dims() == 2
    return seq.done(column_sum(seq, product, nn.ReduceSumOp, keepdims, "explained"))
