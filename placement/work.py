"""How much work each unit of a fused function is: the quantities the cost model reads.

A unit is one op of the function after fusion: an ``nn`` op (one kernel) or a ``fused`` op (a
fused group: one kernel, or a template such as a GEMM with its epilogue). Everything comes from
the tensor types: the elements the unit touches (the largest operand or result), the matmul
flops (``m*k*n`` per product, as the seed counts them), the leading batch of its rank-3+
operands, the elements read and written per element (traffic) and scalar ops per element
(steps) of elementwise work, and the bytes of each operand and result (what a transfer between
devices moves).

``nn.constant`` is no unit (it is a global every segment that reads it gets a copy of), and
``nn.reshape`` is a view: no kernel, so it is placed with its operand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, TensorType
from xdsl.ir import Operation, SSAValue

from fusec.dialects import fused, scalar_ops
from fusec.placement.cost_model import Kind

MATMUL_OPS = {"nn.matmul", "fused.matmul_bias_act", "fused.matmul_epilogue"}
ATTENTION_OPS = {"nn.attention", "fused.attention_block", "fused.transformer_layer"}
COLUMN_STATS_OPS = {"fused.centered_gram", "fused.power_step_normalize",
                    "fused.explained_variance"}
"""Products in disguise (`column_stats_flops`): costed as matmuls."""
REDUCTION_OPS = {
    "nn.reduce_sum", "nn.reduce_mean", "nn.reduce_max", "nn.reduce_min", "fused.reduce",
    "nn.softmax", "nn.layer_norm", "nn.rms_norm", "fused.residual_layer_norm",
    "fused.residual_rms_norm", "fused.row_reduce", "fused.image_normalize",
}
ELEMENTWISE_OPS = {
    "nn.add", "nn.sub", "nn.mul", "nn.div", "nn.max", "nn.min", "nn.pow", "nn.cmp", "nn.where",
    "fused.elementwise", "fused.swiglu",
}
STEPS = {"nn.sigmoid": 4, "nn.gelu": 5, "nn.silu": 5, "nn.softmax": 5, "nn.layer_norm": 6,
         "nn.rms_norm": 4, "fused.residual_layer_norm": 7, "fused.residual_rms_norm": 5,
         "fused.image_normalize": 6}
"""Scalar steps per element of the ops that take more than one (the elementwise ones as
fuse-elementwise counts them; for norms and softmax, their arithmetic); a fused group's are its
body's (a fused reduction's, plus the reduction)."""
TRANSCENDENTAL_OPS = {"nn.exp", "nn.log", "nn.tanh", "nn.sqrt", "nn.rsqrt", "nn.erf",
                     "nn.pow", "nn.sigmoid", "nn.gelu", "nn.silu", "nn.softmax", "fused.swiglu"}
"""Ops with one transcendental per element (a softmax's exp; a norm's square root is once
per row, not per element, so norms have none)."""
CHEAP_MATH = {"math.absf", "math.absi", "math.copysign", "math.fma", "math.floor",
              "math.ceil", "math.round", "math.roundeven", "math.trunc"}
"""``math`` ops of a fused body that are not transcendentals."""
GROUP_OPS = {"fused.elementwise", "fused.reduce", "fused.row_reduce"}
"""Fused elementwise and reduction groups: what the fusion-override rule keeps together."""
VIEW_OPS = {"nn.reshape"}
NOT_UNITS = {"nn.constant"}


@dataclass(frozen=True)
class Work:
    """One unit's size, as the cost model sees it."""

    index: int
    """Position among the function's units."""
    label: str
    """The op and its first result's name: ``fused.elementwise %y``, or its position among
    the units where the result has no name: ``nn.matmul #0``."""
    kind: Kind
    elements: int
    flops: int
    batch: int | None
    """The smallest leading dimension of the rank-3+ operands (the seed's batch), if any."""
    traffic: float
    """Elements read and written per element of the unit (3 for ``a + b``, less where an
    operand broadcasts)."""
    steps: int
    """Scalar ops per element (a fused body's, constants aside; 1 for a plain op)."""
    transcendentals: int
    """How many of `steps` are transcendentals (exp, tanh, erf, ...): they cost more than
    arithmetic, and calibration measures them apart."""
    half: bool
    """An operand or result is an f16 array (`fusec.placement.cost_model.half_costs`)."""
    input_bytes: tuple[int, ...]
    """Bytes of each operand, in operand order."""
    output_bytes: tuple[int, ...]
    group: bool
    """A fused elementwise or reduction group."""
    view: bool
    """No kernel of its own (a reshape)."""


def num_elements(value: SSAValue) -> int:
    shape = tensor_shape(value)
    size = 1
    for d in shape:
        size *= d
    return size


def tensor_shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def is_f16(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and isinstance(t.element_type, Float16Type)


def nbytes(value: SSAValue) -> int:
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    width = getattr(t.element_type, "bitwidth", 32)
    return max(1, num_elements(value) * max(1, width // 8))


def units(function: func.FuncOp) -> list[Operation]:
    """The ops of `function` that are placed, in program order (constants left out)."""
    return [op for op in function.body.block.ops
            if not isinstance(op, func.ReturnOp) and op.name not in NOT_UNITS]


def measure(function: func.FuncOp) -> list[Work]:
    """The work of every unit of `function`, in program order."""
    return [work_of(i, op) for i, op in enumerate(units(function))]


def label(op: Operation, index: int) -> str:
    hint = op.results[0].name_hint if op.results and op.results[0].name_hint else None
    return f"{op.name} %{hint}" if hint else f"{op.name} #{index}"


def work_of(index: int, op: Operation) -> Work:
    values: Sequence[SSAValue] = [*op.operands, *op.results]
    elements = max((num_elements(v) for v in values), default=0)
    flops = 0
    if op.name in MATMUL_OPS:
        kind, flops = Kind.MATMUL, matmul_flops(op)
    elif op.name in ATTENTION_OPS:
        kind, flops = Kind.MATMUL, attention_flops(op)
    elif op.name in COLUMN_STATS_OPS:
        kind, flops = Kind.MATMUL, column_stats_flops(op)
    elif op.name in REDUCTION_OPS:
        kind = Kind.REDUCTION
    elif op.name in ELEMENTWISE_OPS:
        kind = Kind.ELEMENTWISE
    else:
        kind = Kind.UNARY
    batches = [tensor_shape(v)[0] for v in op.operands if len(tensor_shape(v)) >= 3]
    moved = sum(num_elements(v) for v in values)
    return Work(
        index=index,
        label=label(op, index),
        kind=kind,
        elements=elements,
        flops=flops,
        batch=min(batches) if batches else None,
        traffic=moved / elements if elements else 0.0,
        steps=step_count(op),
        transcendentals=transcendental_count(op),
        half=any(is_f16(v) for v in values),
        input_bytes=tuple(nbytes(v) for v in op.operands),
        output_bytes=tuple(nbytes(v) for v in op.results),
        group=op.name in GROUP_OPS,
        view=op.name in VIEW_OPS,
    )


def step_count(op: Operation) -> int:
    if isinstance(op, fused.ElementwiseOp):
        return max(1, scalar_ops.step_count(list(op.body.block.ops)))
    if isinstance(op, fused.ReduceOp):
        return 1 + scalar_ops.step_count(list(op.body.block.ops))
    if isinstance(op, fused.RowReduceOp | fused.MatmulEpilogueOp):
        return max(1, scalar_ops.step_count(list(op.body.block.ops)))
    return STEPS.get(op.name, 1)


def transcendental_count(op: Operation) -> int:
    if isinstance(op, fused.ElementwiseOp | fused.ReduceOp | fused.RowReduceOp
                  | fused.MatmulEpilogueOp):
        return sum(1 for o in op.body.block.ops
                   if o.name.startswith("math.") and o.name not in CHEAP_MATH)
    return 1 if op.name in TRANSCENDENTAL_OPS else 0


def matmul_flops(op: Operation) -> int:
    """``m*k*n`` over the batch: the result's elements times the reduced dimension."""
    lhs = tensor_shape(op.operands[0])
    return num_elements(op.results[0]) * (lhs[-1] if lhs else 1)


def column_stats_flops(op: Operation) -> int:
    """``m*k*n`` of the product inside a column-statistics op: the centered Gram of ``x: [n,
    d]`` is ``n*d*d``; the power step ``a @ q`` (``[m, k] @ [k, c]``) is ``m*k*c``; the explained
    variance ``diag(q^T g q)`` forms ``g @ q`` (``[d, d] @ [d, k]``), ``d*d*k``."""
    first = tensor_shape(op.operands[0])
    if op.name == "fused.centered_gram":
        return math.prod(first) * first[-1]
    second = tensor_shape(op.operands[1])
    return math.prod(first) * second[-1]


def attention_flops(op: Operation) -> int:
    """The two products of attention (``q k^T`` and ``p v``: ``2*B*S*S_k*E``) plus, for the
    fused blocks, every rank-2 weight's product with the tokens."""
    q = tensor_shape(op.operands[0])
    if len(q) != 3:
        return 0
    tokens = q[0] * q[1]
    if op.name == "nn.attention":
        keys = tensor_shape(op.operands[1])[1]
        return 2 * q[0] * q[1] * keys * q[2]
    mask = getattr(op, "mask", None)
    weights = [tensor_shape(v) for v in op.operands[1:]
               if len(tensor_shape(v)) == 2 and v is not mask]
    projections = sum(tokens * w[0] * w[1] for w in weights)
    return projections + 2 * q[0] * q[1] * q[1] * q[2]
