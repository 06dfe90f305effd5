"""The column-statistics ops of the ``fused`` dialect (seed 000's special kernels):

    fused.centered_gram %x {scale}            : [n, d] -> [d, d]
        (x - mean(x, 0))^T (x - mean(x, 0)) * scale   (scale = 1 / (n - 1): a covariance)
    fused.power_step_normalize %a, %q {eps}   : [m, k], [k, c] -> [m, c]
        y = a @ q, then each column y[:, j] / (sqrt(sum_i y[i, j]^2) + eps)
    fused.explained_variance %g, %q           : [d, d], [d, k] -> [k] or [1, k]
        diag(q^T g q) = sum_i q[i, j] * (g @ q)[i, j], without the k x k matrix

Each is f32 and rank 2; ``decompose()`` gives the ``nn`` ops (column_stats_decompositions).
``fused.py`` lists them in the dialect.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, FloatAttr, TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fusec.dialects import column_stats_decompositions as decompose
from fusec.dialects.common import (
    check_result_shape,
    f32_attr,
    float_prop,
    tensor_type,
    type_name,
)
from fusec.dialects.decompositions import Decomposition
from fusec.dialects.op_kinds import OpKind

F32Attr = FloatAttr[Float32Type]


def matrix(op: Operation, what: str, value: SSAValue) -> TensorType:
    """``value``'s type, which must be a rank-2 f32 tensor."""
    t = tensor_type(op, what, value)
    if t.element_type != f32 or t.get_num_dims() != 2:
        raise VerifyException(f"'{op.name}' {what} ({type_name(t)}) must be a rank-2 f32 tensor")
    return t


@irdl_op_definition
class CenteredGramOp(IRDLOperation):
    """``(x - mean(x, 0))^T (x - mean(x, 0)) * scale`` of ``x: [n, d]``, a ``[d, d]`` result.

    ``scale`` is any f32 (``1 / (n - 1)`` for a sample covariance; ``inf`` when ``n = 1``, so
    that the zero Gram of one row gives NaN, as ``0 / 0`` does in the program it came from).
    """

    name = "fused.centered_gram"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    x = operand_def()
    result = result_def()
    scale = prop_def(F32Attr, default_value=f32_attr(1.0))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` type($x) `->` type($result)"

    def __init__(self, x: SSAValue, scale: float = 1.0):
        t = x.type
        assert isinstance(t, TensorType)
        d = t.get_shape()[1]
        super().__init__(operands=[x], result_types=[TensorType(f32, [d, d])],
                         properties={"scale": f32_attr(scale)})

    def verify_(self) -> None:
        x = matrix(self, "x", self.x)
        res = matrix(self, "result", self.result)
        d = x.get_shape()[1]
        check_result_shape(self, res, (d, d))

    def decompose(self) -> Decomposition:
        return decompose.centered_gram(self, self.x, float_prop(self, "scale"))


@irdl_op_definition
class PowerStepNormalizeOp(IRDLOperation):
    """``y = a @ q`` (``a: [m, k]``, ``q: [k, c]``), each column divided by its Euclidean norm
    plus ``eps`` (``eps >= 0``; 0 keeps a zero column's ``0 / 0 = NaN``)."""

    name = "fused.power_step_normalize"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    a = operand_def()
    q = operand_def()
    result = result_def()
    eps = prop_def(F32Attr, default_value=f32_attr(0.0))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$a `,` $q attr-dict `:` type($a) `,` type($q) `->` type($result)"

    def __init__(self, a: SSAValue, q: SSAValue, eps: float = 0.0):
        at, qt = a.type, q.type
        assert isinstance(at, TensorType) and isinstance(qt, TensorType)
        shape = [at.get_shape()[0], qt.get_shape()[1]]
        super().__init__(operands=[a, q], result_types=[TensorType(f32, shape)],
                         properties={"eps": f32_attr(eps)})

    def verify_(self) -> None:
        a = matrix(self, "a", self.a)
        q = matrix(self, "q", self.q)
        res = matrix(self, "result", self.result)
        (m, k), (k2, c) = a.get_shape(), q.get_shape()
        if k != k2:
            raise VerifyException(
                f"'{self.name}' a ({type_name(a)}) and q ({type_name(q)}) do not multiply: "
                f"{k} != {k2}")
        check_result_shape(self, res, (m, c))
        eps = float_prop(self, "eps")
        if not eps >= 0.0 or eps == float("inf"):
            raise VerifyException(f"'{self.name}' eps must be finite and >= 0, got {eps}")

    def decompose(self) -> Decomposition:
        return decompose.power_step_normalize(self, self.a, self.q, float_prop(self, "eps"))


@irdl_op_definition
class ExplainedVarianceOp(IRDLOperation):
    """``diag(q^T g q)`` of ``g: [d, d]`` and ``q: [d, k]``: ``sum_i q[i, j] * (g @ q)[i, j]``,
    a ``[k]`` or ``[1, k]`` result (the ``k x k`` matrix is never formed)."""

    name = "fused.explained_variance"
    FUSION_KIND: ClassVar[OpKind] = OpKind.OPAQUE
    g = operand_def()
    q = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$g `,` $q attr-dict `:` type($g) `,` type($q) `->` type($result)"

    def __init__(self, g: SSAValue, q: SSAValue, result_type: Attribute):
        super().__init__(operands=[g, q], result_types=[result_type])

    def verify_(self) -> None:
        g = matrix(self, "g", self.g)
        q = matrix(self, "q", self.q)
        res = tensor_type(self, "result", self.result)
        (d, d2), (d3, k) = g.get_shape(), q.get_shape()
        if d != d2 or d != d3:
            raise VerifyException(
                f"'{self.name}' g ({type_name(g)}) must be square and match q's rows "
                f"({type_name(q)})")
        if res.element_type != f32 or tuple(res.get_shape()) not in ((k,), (1, k)):
            raise VerifyException(
                f"'{self.name}' result ({type_name(res)}) must be tensor<{k}xf32> or "
                f"tensor<1x{k}xf32>")

    def decompose(self) -> Decomposition:
        return decompose.explained_variance(self, self.g, self.q, self.result.type)


COLUMN_STATS_OPS: tuple[type[IRDLOperation], ...] = (
    CenteredGramOp,
    PowerStepNormalizeOp,
    ExplainedVarianceOp,
)
