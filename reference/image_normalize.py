"""numpy semantics of ``fused.image_normalize`` (``dialects/image_normalize.py``), in float64.

Per plane (the last two axes): subtract the mean, divide by ``sqrt(variance + eps)`` (the
variance as the op's ``variance`` property says), then the gain, the bias, the clamp and the
gamma in the op's order. NaN and infinities propagate as numpy's (``maximum``/``minimum`` keep
a NaN; a fractional power of a negative value is NaN).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from xdsl.ir import Operation

from fusec.dialects.common import bool_prop, float_prop, str_prop
from fusec.dialects.image_normalize import ImageNormalizeOp

Array = NDArray[np.generic]


def image_normalize(
    x: Array,
    gain: Array | None = None,
    bias: Array | None = None,
    eps: float = 1e-5,
    variance: str = "centered",
    clamp_min: float | None = None,
    clamp_max: float | None = None,
    gamma: float | None = None,
    gamma_first: bool = False,
) -> Array:
    x = np.asarray(x, dtype=np.float64)
    axes = (-2, -1)
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    if variance == "centered":
        var = (centred * centred).mean(axis=axes, keepdims=True)
    else:
        var = (x * x).mean(axis=axes, keepdims=True) - mean * mean
    y = centred / np.sqrt(var + eps)
    if gain is not None:
        y = y * np.asarray(gain, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)

    def clamp(y: Array) -> Array:
        if clamp_min is not None:
            y = np.maximum(y, clamp_min)
        if clamp_max is not None:
            y = np.minimum(y, clamp_max)
        return y

    def power(y: Array) -> Array:
        return y if gamma is None else np.power(y, gamma)

    return clamp(power(y)) if gamma_first else power(clamp(y))


def run_image_normalize(op: Operation, args: Sequence[Array]) -> Array:
    """The ``FUSED_IMPLS`` entry: ``args`` are x, then the gain and the bias where present."""
    assert isinstance(op, ImageNormalizeOp)
    rest = list(args[1:])
    gain = rest.pop(0) if op.gain is not None else None
    bias = rest.pop(0) if op.bias is not None else None
    with np.errstate(all="ignore"):
        return image_normalize(
            args[0], gain, bias, float_prop(op, "eps"), str_prop(op, "variance"),
            op.optional("clamp_min"), op.optional("clamp_max"), op.optional("gamma"),
            bool_prop(op, "gamma_first"))
