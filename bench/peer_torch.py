"""The PyTorch peers' op table: each ``nn`` op as a PyTorch user would write it.

The same table serves eager mode and ``torch.compile``, on the CPU and on CUDA: norms and
attention use ``torch.nn.functional`` (``layer_norm``, ``rms_norm``,
``scaled_dot_product_attention``), as a model written for PyTorch would. Imported only when
PyTorch is installed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from fusec.bench.graph import Node, Unsupported
from fusec.bench.interpret import OpTable

T = torch.Tensor


def last_axis(node: Node) -> int:
    """The normalised axis; only the last one is expressible with torch's norm functions."""
    axis = node.attrs.get("axis", -1)
    rank = len(node.output.shape)
    if axis % rank != rank - 1:
        raise Unsupported(f"nn.{node.kind} over axis {axis} (torch normalises trailing dims)")
    return node.output.shape[-1]


def layer_norm(node: Node) -> Callable[[T, T, T], T]:
    size, eps = last_axis(node), node.attrs.get("eps", 1e-5)
    return lambda x, gamma, beta: F.layer_norm(x, (size,), gamma, beta, eps)


def rms_norm(node: Node) -> Callable[[T, T], T]:
    size, eps = last_axis(node), node.attrs.get("eps", 1e-6)
    return lambda x, gamma: F.rms_norm(x, (size,), gamma, eps)


def attention(node: Node) -> Callable[..., T]:
    heads, dim = node.attrs["num_heads"], node.attrs["head_dim"]
    scale = node.attrs.get("scale", 1.0 / math.sqrt(dim))
    causal = node.attrs.get("causal", False)

    def split(x: T) -> T:
        return x.view(x.shape[0], x.shape[1], heads, dim).transpose(1, 2)

    def run(q: T, k: T, v: T, mask: T | None = None) -> T:
        keep = None
        if mask is not None:
            keep = (mask != 0)[:, None, None, :]
            if causal:
                seq, keys = q.shape[1], k.shape[1]
                keep = keep & torch.ones(seq, keys, dtype=torch.bool, device=q.device).tril()
        out = F.scaled_dot_product_attention(
            split(q), split(k), split(v), attn_mask=keep,
            is_causal=causal and keep is None, scale=scale)
        return out.transpose(1, 2).reshape(q.shape[0], q.shape[1], heads * dim)

    return run


def reduce(fn: Callable[..., T]) -> Callable[[Node], Callable[[T], T]]:
    def lower(node: Node) -> Callable[[T], T]:
        axes, keep = list(node.attrs["axes"]), node.attrs.get("keepdims", False)
        return lambda x: fn(x, dim=axes, keepdim=keep)

    return lower


CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
       "ge": torch.ge}

DTYPES = {"float32": torch.float32, "float16": torch.float16, "float64": torch.float64,
          "bool": torch.bool, "int32": torch.int32, "int64": torch.int64}


def same(fn: Callable[..., T]) -> Callable[[Node], Callable[..., T]]:
    """A lowering that ignores the node's properties."""
    return lambda node: fn


def constant(node: Node) -> Callable[[], T]:
    value = torch.from_numpy(node.attrs["value"])
    return lambda: value


def narrow(node: Node) -> Callable[[T], T]:
    axis, start, length = node.attrs["axis"], node.attrs["start"], node.attrs["length"]
    return lambda x: x.narrow(axis, start, length)


def gelu(node: Node) -> Callable[[T], T]:
    approximate = node.attrs.get("approximate", "none")
    return lambda x: F.gelu(x, approximate=approximate)


TORCH_OPS: OpTable = {
    "add": same(torch.add),
    "sub": same(torch.sub),
    "mul": same(torch.mul),
    "div": same(torch.div),
    "max": same(torch.maximum),
    "min": same(torch.minimum),
    "pow": same(torch.pow),
    "relu": same(torch.relu),
    "gelu": gelu,
    "silu": same(F.silu),
    "sigmoid": same(torch.sigmoid),
    "tanh": same(torch.tanh),
    "exp": same(torch.exp),
    "log": same(torch.log),
    "sqrt": same(torch.sqrt),
    "rsqrt": same(torch.rsqrt),
    "neg": same(torch.neg),
    "abs": same(torch.abs),
    "cast": lambda node: lambda x: x.to(DTYPES[node.output.dtype]),
    "cmp": lambda node: CMP[node.attrs["predicate"]],
    "where": same(torch.where),
    "constant": constant,
    "matmul": same(torch.matmul),
    "transpose": lambda node: lambda x: x.permute(*node.attrs["perm"]),
    "reshape": lambda node: lambda x: x.reshape(node.output.shape),
    "narrow": narrow,
    "concat": lambda node: lambda *xs: torch.cat(xs, dim=node.attrs["axis"]),
    "layer_norm": layer_norm,
    "rms_norm": rms_norm,
    "softmax": lambda node: lambda x: torch.softmax(x, dim=node.attrs.get("axis", -1)),
    "reduce_sum": reduce(torch.sum),
    "reduce_mean": reduce(torch.mean),
    "reduce_max": reduce(torch.amax),
    "reduce_min": reduce(torch.amin),
    "attention": attention,
}


def to_torch(arrays: list[Any], device: str) -> list[T]:
    return [torch.from_numpy(a).to(device) for a in arrays]
