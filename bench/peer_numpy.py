"""The numpy peer's op table: each ``nn`` op as a numpy user would write it.

Also used in float64 as the fallback reference when ``fusec.reference.executor`` is absent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fusec.bench.graph import Node
from fusec.bench.interpret import OpTable

Array = np.ndarray


def erf(x: Array) -> Array:
    """scipy's erf when scipy is installed, else Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)."""
    try:
        from scipy.special import erf as scipy_erf  # type: ignore[import-not-found]
    except ImportError:
        a1, a2, a3, a4, a5, p = (0.254829592, -0.284496736, 1.421413741, -1.453152027,
                                 1.061405429, 0.3275911)
        ax = np.abs(x)
        t = 1.0 / (1.0 + p * ax)
        y = 1.0 - ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t * np.exp(-ax * ax)
        return np.copysign(y, x).astype(x.dtype)
    return scipy_erf(x).astype(x.dtype)


def gelu(node: Node) -> Callable[[Array], Array]:
    if node.attrs.get("approximate", "none") == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return lambda x: 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x * x * x)))
    return lambda x: 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def layer_norm(node: Node) -> Callable[[Array, Array, Array], Array]:
    axis, eps = node.attrs.get("axis", -1), node.attrs.get("eps", 1e-5)

    def run(x: Array, gamma: Array, beta: Array) -> Array:
        centered = x - x.mean(axis=axis, keepdims=True)
        var = (centered * centered).mean(axis=axis, keepdims=True)
        return centered / np.sqrt(var + eps) * gamma + beta

    return run


def rms_norm(node: Node) -> Callable[[Array, Array], Array]:
    axis, eps = node.attrs.get("axis", -1), node.attrs.get("eps", 1e-6)
    return lambda x, gamma: x / np.sqrt((x * x).mean(axis=axis, keepdims=True) + eps) * gamma


def softmax_of(x: Array, axis: int) -> Array:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention(node: Node) -> Callable[..., Array]:
    heads, dim = node.attrs["num_heads"], node.attrs["head_dim"]
    scale = node.attrs.get("scale", 1.0 / math.sqrt(dim))
    causal = node.attrs.get("causal", False)

    def split(x: Array) -> Array:
        return x.reshape(x.shape[0], x.shape[1], heads, dim).transpose(0, 2, 1, 3)

    def run(q: Array, k: Array, v: Array, mask: Array | None = None) -> Array:
        scores = (split(q) @ split(k).transpose(0, 1, 3, 2)) * scale
        keep = np.ones(scores.shape[-2:], dtype=bool)
        if causal:
            keep = np.tril(keep)
        if mask is not None:
            keep = keep & (mask[:, None, None, :] != 0)
        scores = np.where(keep, scores, -np.inf)
        out = softmax_of(scores, -1) @ split(v)
        batch, _, seq, _ = out.shape
        return out.transpose(0, 2, 1, 3).reshape(batch, seq, heads * dim)

    return run


def narrow(node: Node) -> Callable[[Array], Array]:
    axis, start, length = node.attrs["axis"], node.attrs["start"], node.attrs["length"]

    def run(x: Array) -> Array:
        index: list[Any] = [slice(None)] * x.ndim
        index[axis] = slice(start, start + length)
        return x[tuple(index)]

    return run


def reduce(fn: Callable[..., Array]) -> Callable[[Node], Callable[[Array], Array]]:
    def lower(node: Node) -> Callable[[Array], Array]:
        axes, keep = node.attrs["axes"], node.attrs.get("keepdims", False)
        return lambda x: np.asarray(fn(x, axis=axes, keepdims=keep))

    return lower


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}


def same(fn: Callable[..., Array]) -> Callable[[Node], Callable[..., Array]]:
    """A lowering that ignores the node's properties."""
    return lambda node: fn


NUMPY_OPS: OpTable = {
    "add": same(np.add),
    "sub": same(np.subtract),
    "mul": same(np.multiply),
    "div": same(np.divide),
    "max": same(np.maximum),
    "min": same(np.minimum),
    "pow": same(np.power),
    "relu": same(lambda x: np.maximum(x, 0)),
    "gelu": gelu,
    "silu": same(lambda x: x / (1.0 + np.exp(-x))),
    "sigmoid": same(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "tanh": same(np.tanh),
    "exp": same(np.exp),
    "log": same(np.log),
    "sqrt": same(np.sqrt),
    "rsqrt": same(lambda x: 1.0 / np.sqrt(x)),
    "neg": same(np.negative),
    "abs": same(np.abs),
    "cast": lambda node: lambda x: x.astype(node.output.dtype),
    "cmp": lambda node: CMP[node.attrs["predicate"]],
    "where": same(np.where),
    "constant": lambda node: lambda: node.attrs["value"],
    "matmul": same(np.matmul),
    "transpose": lambda node: lambda x: np.transpose(x, node.attrs["perm"]),
    "reshape": lambda node: lambda x: x.reshape(node.output.shape),
    "narrow": narrow,
    "concat": lambda node: lambda *xs: np.concatenate(xs, axis=node.attrs["axis"]),
    "layer_norm": layer_norm,
    "rms_norm": rms_norm,
    "softmax": lambda node: lambda x: softmax_of(x, node.attrs.get("axis", -1)),
    "reduce_sum": reduce(np.sum),
    "reduce_mean": reduce(np.mean),
    "reduce_max": reduce(np.max),
    "reduce_min": reduce(np.min),
    "attention": attention,
}
