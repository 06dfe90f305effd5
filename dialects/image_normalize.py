"""``fused.image_normalize``: per-plane normalization of images, with its decomposition.

For ``x: [..., H, W]`` (NCHW: one plane per image and channel), over each plane ``P``::

    m   = mean(x over P)
    v   = mean((x - m)^2 over P)                 variance = "centered" (default)
        | mean(x^2 over P) - m^2                 variance = "moments"
    y   = (x - m) / sqrt(v + eps)
    y   = y * gain                               if gain is given
    y   = y + bias                               if bias is given
    y   = min(max(y, clamp_min), clamp_max)      each bound if given
    y   = y ^ gamma                              if gamma is given (before the clamp when
                                                 gamma_first)

``gain`` and ``bias`` hold one value per plane: they broadcast to ``x`` without changing its
shape and are 1 in the last two dimensions (``[C, 1, 1]``, ``[1, C, 1, 1]``, ``[N, C, 1, 1]``,
a scalar). ``x`` is f32 (the kernel computes in float32) of rank >= 2.

    %y = fused.image_normalize %x gain %g bias %b {clamp_min = 0.0 : f32}
           : tensor<2x3x16x16xf32> gain tensor<3x1x1xf32> bias tensor<3x1x1xf32> -> tensor<2x3x16x16xf32>

``decompose`` gives the ``nn`` ops of the definition above (``nn.reduce_mean`` over the last two
axes with ``keepdims``, ``1 / sqrt`` as ``nn.rsqrt`` and a product, scalars as rank-0
``nn.constant``); the numpy reference (``reference/image_normalize.py``) computes the same in
float64.
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fusec.dialects import nn
from fusec.dialects.common import (
    bool_attr,
    bool_prop,
    broadcast_shapes,
    check_choice,
    f32_attr,
    float_prop,
    str_prop,
    tensor_type,
    type_name,
)
from fusec.dialects.decompositions import Decomposition, OpSequence
from fusec.dialects.op_kinds import OpKind

F32Attr = FloatAttr[Float32Type]

VARIANCES = ("centered", "moments")
"""How the variance is computed: the mean of squares of the centred plane, or the mean of
squares minus the square of the mean (what the program wrote; the kernel computes the same)."""


def per_plane(shape: tuple[int, ...], x_shape: tuple[int, ...]) -> bool:
    """A parameter of ``shape`` holds one value per plane of ``x_shape``: it broadcasts to
    ``x_shape`` (leaving it unchanged) and is 1 in the last two dimensions."""
    if broadcast_shapes(shape, x_shape) != x_shape:
        return False
    padded = (1,) * (len(x_shape) - len(shape)) + shape
    return padded[-2:] == (1, 1)


@irdl_op_definition
class ImageNormalizeOp(IRDLOperation):
    """See the module docstring."""

    name = "fused.image_normalize"
    FUSION_KIND: ClassVar[OpKind] = OpKind.REDUCTION
    x = operand_def()
    gain = opt_operand_def()
    bias = opt_operand_def()
    result = result_def()
    eps = prop_def(F32Attr, default_value=f32_attr(1e-5))
    variance = prop_def(StringAttr, default_value=StringAttr("centered"))
    clamp_min = opt_prop_def(F32Attr)
    clamp_max = opt_prop_def(F32Attr)
    gamma = opt_prop_def(F32Attr)
    gamma_first = prop_def(BoolAttr, default_value=bool_attr(False))
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$x (`gain` $gain^)? (`bias` $bias^)? attr-dict `:` type($x) (`gain` type($gain)^)? "
        "(`bias` type($bias)^)? `->` type($result)"
    )

    def __init__(
        self,
        x: SSAValue,
        gain: SSAValue | None = None,
        bias: SSAValue | None = None,
        eps: float = 1e-5,
        variance: str = "centered",
        clamp_min: float | None = None,
        clamp_max: float | None = None,
        gamma: float | None = None,
        gamma_first: bool = False,
    ):
        props: dict[str, Attribute] = {"eps": f32_attr(eps), "variance": StringAttr(variance)}
        for name, value in (("clamp_min", clamp_min), ("clamp_max", clamp_max),
                            ("gamma", gamma)):
            if value is not None:
                props[name] = f32_attr(value)
        props["gamma_first"] = bool_attr(gamma_first)
        super().__init__(
            operands=[x, gain, bias], result_types=[x.type], properties=props
        )

    def optional(self, name: str) -> float | None:
        """The value of the optional float property ``name`` (None when absent)."""
        attr = self.properties.get(name)
        return attr.value.data if isinstance(attr, FloatAttr) else None

    def verify_(self) -> None:
        x = tensor_type(self, "x", self.x)
        res = tensor_type(self, "result", self.result)
        if x.element_type != f32:
            raise VerifyException(f"'{self.name}' x ({type_name(x)}) must be f32")
        if x.get_num_dims() < 2:
            raise VerifyException(
                f"'{self.name}' x ({type_name(x)}) must have rank >= 2 (planes of [H, W])"
            )
        if res != x:
            raise VerifyException(
                f"'{self.name}' result type {type_name(res)} must equal the x type "
                f"{type_name(x)}"
            )
        shape = tuple(x.get_shape())
        for name in ("gain", "bias"):
            value = getattr(self, name)
            if value is None:
                continue
            t = tensor_type(self, name, value)
            if t.element_type != f32:
                raise VerifyException(f"'{self.name}' {name} ({type_name(t)}) must be f32")
            if not per_plane(tuple(t.get_shape()), shape):
                raise VerifyException(
                    f"'{self.name}' {name} ({type_name(t)}) must hold one value per plane of "
                    f"x ({type_name(x)}): broadcast to it, with 1 in the last two dimensions"
                )
        eps = float_prop(self, "eps")
        if not (math.isfinite(eps) and eps >= 0):
            raise VerifyException(f"'{self.name}' eps must be finite and >= 0, got {eps}")
        check_choice(self, "variance", str_prop(self, "variance"), VARIANCES)
        low, high = self.optional("clamp_min"), self.optional("clamp_max")
        gamma = self.optional("gamma")
        for name, value in (("clamp_min", low), ("clamp_max", high), ("gamma", gamma)):
            if value is not None and math.isnan(value):
                raise VerifyException(f"'{self.name}' {name} must not be NaN")
        if low is not None and high is not None and low > high:
            raise VerifyException(
                f"'{self.name}' clamp_min ({low}) must not exceed clamp_max ({high})"
            )

    def decompose(self) -> Decomposition:
        return decompose_image_normalize(self)


def scalar_constant(seq: OpSequence, value: float, name: str) -> SSAValue:
    t = TensorType(f32, [])
    return seq.add(nn.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])), name)


def decompose_image_normalize(op: ImageNormalizeOp) -> Decomposition:
    seq = OpSequence(op)
    x = op.x
    t = x.type
    assert isinstance(t, TensorType)
    rank = t.get_num_dims()
    stat = TensorType(f32, [*t.get_shape()[:-2], 1, 1])
    axes = [rank - 2, rank - 1]

    def plane_mean(v: SSAValue, name: str) -> SSAValue:
        return seq.add(nn.ReduceMeanOp(v, axes, stat, keepdims=True), name)

    mean = plane_mean(x, "mean")
    centred = seq.add(nn.SubOp(x, mean, t), "centred")
    if str_prop(op, "variance") == "centered":
        square = seq.add(nn.MulOp(centred, centred, t), "square")
        var = plane_mean(square, "var")
    else:
        square = seq.add(nn.MulOp(x, x, t), "square")
        mean_square = plane_mean(square, "mean_square")
        mean_2 = seq.add(nn.MulOp(mean, mean, stat), "mean_2")
        var = seq.add(nn.SubOp(mean_square, mean_2, stat), "var")
    eps = scalar_constant(seq, float_prop(op, "eps"), "eps")
    var_eps = seq.add(nn.AddOp(var, eps, stat), "var_eps")
    inv_std = seq.add(nn.RsqrtOp(var_eps), "inv_std")
    y = seq.add(nn.MulOp(centred, inv_std, t), "normalized")
    if op.gain is not None:
        y = seq.add(nn.MulOp(y, op.gain, t), "gained")
    if op.bias is not None:
        y = seq.add(nn.AddOp(y, op.bias, t), "biased")

    def clamp(y: SSAValue) -> SSAValue:
        low, high = op.optional("clamp_min"), op.optional("clamp_max")
        if low is not None:
            y = seq.add(nn.MaxOp(y, scalar_constant(seq, low, "clamp_min"), t), "clamped_low")
        if high is not None:
            y = seq.add(nn.MinOp(y, scalar_constant(seq, high, "clamp_max"), t), "clamped")
        return y

    def gamma(y: SSAValue) -> SSAValue:
        value = op.optional("gamma")
        if value is None:
            return y
        return seq.add(nn.PowOp(y, scalar_constant(seq, value, "gamma"), t), "gamma_corrected")

    y = clamp(gamma(y)) if bool_prop(op, "gamma_first") else gamma(clamp(y))
    return seq.done(y)


__all__ = ["VARIANCES", "ImageNormalizeOp", "decompose_image_normalize", "per_plane"]
