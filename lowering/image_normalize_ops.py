"""``lower-to-kernels``: ``fused.image_normalize`` becomes one ``row_reduce`` template launch.

Each plane (the last two axes, ``H * W`` elements, contiguous) is a row of the template:
``x: [..., H, W]`` is viewed as ``[..., H * W]`` (no copy), a gain or bias of one value per
plane as ``[..., 1]`` (the template reads it once per row), and the result is written as
``[..., H * W]`` and viewed back. The row body is built here from the op's properties::

    %m = fused.reduce_value %x {kind = "mean"}
    %d = arith.subf %x, %m
    %v = fused.reduce_value (%d * %d) {kind = "mean"}        (variance = "centered")
       | fused.reduce_value (%x * %x) {kind = "mean"} - %m * %m      ("moments")
    %y = %d * math.rsqrt(%v + eps), then * gain, + bias, max/min with the bounds, math.powf

so the template visits each plane three times (the mean, the variance, the store), a plane at
a time per work-item on a CPU and per work-group on a GPU (``codegen/kernels/row_reduce.py``).
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FloatAttr, MemRefType, TensorType, f32
from xdsl.ir import Block, Operation, SSAValue

from fusec.dialects import fused, kernel
from fusec.dialects.common import bool_prop, float_prop, shape_of, str_prop
from fusec.lowering.lower_to_kernels import FunctionLowering, buffer_type
from fusec.lowering.template_ops import params


class BodyOps:
    """Appends scalar f32 ops to a block."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self.add(arith.ConstantOp(FloatAttr(value, f32)))

    def mean(self, value: SSAValue) -> SSAValue:
        return self.add(fused.ReduceValueOp(value, "mean"))


def plane_body(op: fused.ImageNormalizeOp) -> Block:
    """The row body computing one element of ``op`` (arguments: x, gain, bias as present)."""
    extras = [v for v in (op.gain, op.bias) if v is not None]
    block = Block(arg_types=[f32] * (1 + len(extras)))
    b = BodyOps(block)
    x = block.args[0]
    args = iter(block.args[1:])
    mean = b.mean(x)
    centred = b.add(arith.SubfOp(x, mean))
    if str_prop(op, "variance") == "centered":
        var = b.mean(b.add(arith.MulfOp(centred, centred)))
    else:
        mean_square = b.mean(b.add(arith.MulfOp(x, x)))
        var = b.add(arith.SubfOp(mean_square, b.add(arith.MulfOp(mean, mean))))
    var_eps = b.add(arith.AddfOp(var, b.const(float_prop(op, "eps"))))
    y = b.add(arith.MulfOp(centred, b.add(mathd.RsqrtOp(var_eps))))
    if op.gain is not None:
        y = b.add(arith.MulfOp(y, next(args)))
    if op.bias is not None:
        y = b.add(arith.AddfOp(y, next(args)))

    def clamp(y: SSAValue) -> SSAValue:
        low, high = op.optional("clamp_min"), op.optional("clamp_max")
        if low is not None:
            y = b.add(arith.MaximumfOp(y, b.const(low)))
        if high is not None:
            y = b.add(arith.MinimumfOp(y, b.const(high)))
        return y

    def gamma(y: SSAValue) -> SSAValue:
        value = op.optional("gamma")
        return y if value is None else b.add(mathd.PowFOp(y, b.const(value)))

    y = clamp(gamma(y)) if bool_prop(op, "gamma_first") else gamma(clamp(y))
    block.add_op(kernel.YieldOp(y))
    return block


def plane_view(lo: FunctionLowering, value: SSAValue, rank: int) -> SSAValue:
    """``value`` (x, or a parameter of one value per plane), its last two dimensions merged
    into one, left-padded to ``rank - 1`` dimensions."""
    shape = (1,) * (rank - len(shape_of(value))) + shape_of(value)
    merged = [*shape[:-2], shape[-2] * shape[-1]]
    return lo.add(kernel.ViewOp(lo.buffer(value), MemRefType(f32, merged))).results[0]


def lower_image_normalize(lo: FunctionLowering, op: Operation) -> list[SSAValue]:
    assert isinstance(op, fused.ImageNormalizeOp)
    shape = shape_of(op.result)
    rank = len(shape)
    plane = shape[-2] * shape[-1]
    planes = math.prod(shape[:-2])
    out = lo.alloc(TensorType(f32, [*shape[:-2], plane]))
    if planes and plane:
        inputs = [plane_view(lo, v, rank) for v in (op.x, op.gain, op.bias) if v is not None]
        lo.template("row_reduce", params(rows=planes, cols=plane), inputs, [out],
                    epilogue=plane_body(op))
    return [lo.add(kernel.ViewOp(out, buffer_type(op.result.type))).results[0]]


IMAGE_NORMALIZE_LOWERINGS = {fused.ImageNormalizeOp: lower_image_normalize}
