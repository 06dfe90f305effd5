"""Writes the small ONNX models the lit tests of this folder import: make_models.py OUT_DIR."""

import sys
from pathlib import Path

import numpy as np
import onnx

from fusec.bench.export_models import GraphBuilder


def mlp_gelu() -> onnx.ModelProto:
    """MatMul + Add + erf GELU + MatMul, the shape of x taken by Shape/Gather/Concat/Reshape."""
    g = GraphBuilder(0)
    x = g.input("input", [2, 3, 8])
    h = g.gelu_erf(g.linear(x, "fc1", 8, 32))
    flat = g.op("Reshape", h, g.op("Concat", g.dim(x, 0), g.const(np.array([-1], np.int64)),
                                   axis=0))
    g.result(g.op("MatMul", flat, g.weight("fc2.weight", [96, 4])), "logits", [2, 4])
    return g.model()


def unsupported() -> onnx.ModelProto:
    g = GraphBuilder(0)
    x = g.input("x", [4])
    g.result(g.op("Round", x, name="/encoder/Round"), "y", [4])
    return g.model()


def embedding() -> onnx.ModelProto:
    """int64 ids -> Gather from a table; a bool mask from Equal."""
    g = GraphBuilder(0)
    ids = g.input("input_ids", [1, 5], "int64")
    emb = g.op("Gather", g.weight("wte", [10, 4]), ids)
    g.result(emb, "embeddings", [1, 5, 4])
    keep = g.op("Not", g.op("Equal", ids, g.const(np.int64(0))))
    g.result(keep, "keep", [1, 5])
    g.outputs[-1].type.tensor_type.elem_type = onnx.TensorProto.BOOL
    return g.model()


def constant_gather() -> onnx.ModelProto:
    """Gather on constant indices [1, 9] into a table of 4 rows: 9 is out of range."""
    g = GraphBuilder(0)
    x = g.input("x", [4, 3])
    g.result(g.op("Gather", x, g.const(np.array([1, 9], np.int64))), "rows", [2, 3])
    return g.model()


def constant_gather_elements() -> onnx.ModelProto:
    """GatherElements of constants along an axis of 100 (folded at import): index 100 is out
    of range."""
    g = GraphBuilder(0)
    table = g.const(np.zeros((1, 100), np.float32))
    gathered = g.op("GatherElements", table, g.const(np.array([[3, 100]], np.int64)), axis=1)
    g.result(g.op("Add", gathered, g.input("x", [1, 2])), "y", [1, 2])
    return g.model()


def shape_input() -> onnx.ModelProto:
    """Reshape whose shape is the graph input ``shape`` (int64 [2])."""
    g = GraphBuilder(0)
    x = g.input("x", [2, 6])
    shape = g.input("shape", [2], "int64")
    g.result(g.op("Reshape", x, shape, name="/Reshape"), "y", [3, 4])
    return g.model()


def attention(heads: bool = True) -> onnx.ModelProto:
    """Opset 23's Attention on [B, S, hidden] q, k, v: 4 query heads, 2 key/value heads, causal
    (without the head counts: refused)."""
    g = GraphBuilder(0)
    q, k, v = g.input("q", [1, 4, 32]), g.input("k", [1, 4, 16]), g.input("v", [1, 4, 16])
    attrs = {"q_num_heads": 4, "kv_num_heads": 2} if heads else {}
    g.result(g.op("Attention", q, k, v, name="/attn/Attention", is_causal=1, **attrs), "y",
             [1, 4, 32])
    return g.model(opset=23)


def rotary(rotated: int = 4) -> onnx.ModelProto:
    """Opset 23's RotaryEmbedding on [B, H, S, D] at position_ids, the first ``rotated`` of 8
    features turned."""
    g = GraphBuilder(0)
    x = g.input("x", [1, 2, 3, 8])
    ids = g.input("position_ids", [1, 3], "int64")
    cos, sin = g.weight("cos", [16, 2]), g.weight("sin", [16, 2])
    g.result(g.op("RotaryEmbedding", x, cos, sin, ids, name="/rope/RotaryEmbedding",
                  rotary_embedding_dim=rotated), "y", [1, 2, 3, 8])
    return g.model(opset=23)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, build in (("mlp_gelu", mlp_gelu), ("unsupported", unsupported),
                        ("embedding", embedding), ("constant_gather", constant_gather),
                        ("constant_gather_elements", constant_gather_elements),
                        ("shape_input", shape_input), ("attention", attention),
                        ("attention_no_heads", lambda: attention(heads=False)),
                        ("rotary", rotary), ("rotary_odd", lambda: rotary(rotated=5))):
        onnx.save(build(), str(out / f"{name}.onnx"))
