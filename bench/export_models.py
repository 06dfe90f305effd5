"""ONNX models for the importer's tests and benchmarks, written the way exporters write them.

Real exports of Hugging Face models come from `export_hf` (it needs torch and transformers);
the builders here write graphs of the same kinds at benchmark sizes with ``onnx.helper``
alone: the node sequences of the TorchScript exporter at opset 17, shape
subgraphs included (``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``), the additive
attention mask (``(1 - mask) * finfo.min``), the erf GELU written out, and ``LayerNormalization``.

    python -m fusec.bench.export_models OUT_DIR     # writes bert_layer.onnx, ...
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FLOAT_MIN = float(np.finfo(np.float32).min)


@dataclass
class GraphBuilder:
    """Appends nodes, initializers, inputs and outputs; `model` makes the ``ModelProto``."""

    seed: int = 0
    nodes: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    counter: int = 0

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def input(self, name: str, shape: list, elem: str = "float") -> str:
        from onnx import TensorProto, helper

        kinds = {"float": TensorProto.FLOAT, "int64": TensorProto.INT64, "bool": TensorProto.BOOL}
        self.inputs.append(helper.make_tensor_value_info(name, kinds[elem], shape))
        return name

    def output(self, name: str, shape: list, elem: str = "float") -> None:
        from onnx import TensorProto, helper

        kinds = {"float": TensorProto.FLOAT, "int64": TensorProto.INT64, "bool": TensorProto.BOOL}
        self.outputs.append(helper.make_tensor_value_info(name, kinds[elem], shape))

    def result(self, value: str, name: str, shape: list) -> None:
        """Graph output ``name`` (an ``Identity`` of ``value``, as exporters name outputs)."""
        from onnx import helper

        self.nodes.append(helper.make_node("Identity", [value], [name], name=f"/{name}"))
        self.output(name, shape)

    def const(self, value: object, name: str | None = None, dtype: object = None) -> str:
        from onnx import numpy_helper

        array = np.asarray(value, dtype=dtype)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        name = name or self.fresh("const")
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, shape: list, scale: float = 0.05) -> str:
        return self.const(self.rng.standard_normal(shape).astype(np.float32) * scale, name)

    def op(self, op_type: str, *inputs: str, outputs: int = 1, name: str | None = None,
           **attrs: object) -> str | list[str]:
        from onnx import helper

        name = name or self.fresh(f"/{op_type}")
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def model(self, opset: int = 17, name: str = "model") -> object:
        from onnx import checker, helper

        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="fusec.bench.export_models")
        checker.check_model(model)
        return model

    # --- pieces exporters write ---------------------------------------------------------------

    def linear(self, x: str, name: str, n_in: int, n_out: int) -> str:
        w = self.weight(f"{name}.weight", [n_in, n_out])
        b = self.weight(f"{name}.bias", [n_out], 0.02)
        return self.op("Add", self.op("MatMul", x, w), b)  # type: ignore[arg-type]

    def layer_norm(self, x: str, name: str, width: int, eps: float = 1e-12) -> str:
        gamma = self.const(1.0 + 0.1 * self.rng.standard_normal(width), f"{name}.weight",
                           np.float32)
        beta = self.weight(f"{name}.bias", [width], 0.1)
        return self.op("LayerNormalization", x, gamma, beta, axis=-1,  # type: ignore[return-value]
                       epsilon=eps)

    def gelu_erf(self, x: str) -> str:
        """``x * 0.5 * (1 + erf(x / sqrt 2))``, as torch exports ``F.gelu`` before opset 20."""
        e = self.op("Erf", self.op("Div", x, self.const(np.float32(math.sqrt(2.0)))))
        half = self.op("Mul", x, self.const(np.float32(0.5)))
        return self.op("Mul", half, self.op("Add", e, self.const(np.float32(1.0))))  # type: ignore

    def dim(self, x: str, index: int) -> str:
        """``Unsqueeze(Gather(Shape(x), index), 0)``: one dimension as a 1-D tensor."""
        g = self.op("Gather", self.op("Shape", x), self.const(np.int64(index)), axis=0)
        return self.op("Unsqueeze", g, self.const(np.array([0], np.int64)))  # type: ignore

    def split_heads(self, x: str, heads: int, head_dim: int, perm: list[int]) -> str:
        """``x.view(B, S, H, D).permute(perm)`` with the shape computed from ``Shape``."""
        shape = self.op("Concat", self.dim(x, 0), self.dim(x, 1),
                        self.const(np.array([heads], np.int64)),
                        self.const(np.array([head_dim], np.int64)), axis=0)
        return self.op("Transpose", self.op("Reshape", x, shape), perm=perm)  # type: ignore

    def merge_heads(self, x: str, width: int) -> str:
        t = self.op("Transpose", x, perm=[0, 2, 1, 3])
        shape = self.op("Concat", self.dim(t, 0), self.dim(t, 1),
                        self.const(np.array([width], np.int64)), axis=0)
        return self.op("Reshape", t, shape)  # type: ignore[return-value]

    def extended_mask(self, mask: str) -> str:
        """HF's ``(1.0 - mask[:, None, None, :]) * finfo.min``."""
        m = self.op("Unsqueeze", mask, self.const(np.array([1, 2], np.int64)))
        m = self.op("Cast", m, to=1)
        m = self.op("Sub", self.const(np.float32(1.0)), m)
        return self.op("Mul", m, self.const(np.float32(FLOAT_MIN)))  # type: ignore

    def rms_norm(self, x: str, name: str, width: int, eps: float = 1e-6) -> str:
        """HF's ``LlamaRMSNorm``: ``w * (x * (1 / sqrt(mean(x^2, -1) + eps)))``."""
        var = self.op("ReduceMean", self.op("Pow", x, self.const(np.float32(2.0))), axes=[-1],
                      keepdims=1)  # opset 17: axes an attribute
        inv = self.op("Reciprocal", self.op("Sqrt", self.op("Add", var,
                                                             self.const(np.float32(eps)))))
        gamma = self.const(1.0 + 0.1 * self.rng.standard_normal(width), f"{name}.weight",
                           np.float32)
        return self.op("Mul", gamma, self.op("Mul", x, inv))  # type: ignore[return-value]

    def rotary(self, x: str, seq: int, head_dim: int) -> str:
        """``x * cos + rotate_half(x) * sin`` on ``[B, H, S, D]``, cos and sin ``[1, 1, S, D]``
        from the positions (constants: the positions are)."""
        inv = 1.0 / (10000.0 ** (np.arange(0, head_dim, 2) / head_dim))
        angles = np.outer(np.arange(seq), inv)
        angles = np.concatenate([angles, angles], axis=-1)[None, None].astype(np.float32)
        half = head_dim // 2
        first = self.op("Slice", x, self.const(np.array([0], np.int64)),
                        self.const(np.array([half], np.int64)), self.const(np.array([3],
                                                                                   np.int64)))
        second = self.op("Slice", x, self.const(np.array([half], np.int64)),
                         self.const(np.array([2**62], np.int64)),
                         self.const(np.array([3], np.int64)))
        rotated = self.op("Concat", self.op("Neg", second), first, axis=-1)
        return self.op("Add", self.op("Mul", x, self.const(np.cos(angles))),  # type: ignore
                       self.op("Mul", rotated, self.const(np.sin(angles))))

    def self_attention(self, h: str, name: str, width: int, heads: int, mask: str | None,
                       causal_len: int = 0, rotary: bool = False) -> str:
        d = width // heads
        q = self.split_heads(self.linear(h, f"{name}.query", width, width), heads, d,
                             [0, 2, 1, 3])
        k = self.split_heads(self.linear(h, f"{name}.key", width, width), heads, d,
                             [0, 2, 3, 1])
        if rotary:  # HF Llama: rotary on q and k heads-first, then k transposed
            q = self.rotary(q, causal_len, d)
            k = self.op("Transpose", self.rotary(self.op("Transpose", k, perm=[0, 1, 3, 2]),
                                                 causal_len, d), perm=[0, 1, 3, 2])
        v = self.split_heads(self.linear(h, f"{name}.value", width, width), heads, d,
                             [0, 2, 1, 3])
        scores = self.op("Div", self.op("MatMul", q, k), self.const(np.float32(math.sqrt(d))))
        if causal_len:
            tri = np.tril(np.ones((causal_len, causal_len), bool))[None, None]
            scores = self.op("Where", self.const(tri), scores,
                             self.const(np.float32(FLOAT_MIN)))
        if mask is not None:
            scores = self.op("Add", scores, mask)
        probs = self.op("Softmax", scores, axis=-1)
        context = self.merge_heads(self.op("MatMul", probs, v), width)  # type: ignore
        return self.linear(context, f"{name}.output", width, width)


def bert_layer(batch: int = 1, seq: int = 16, width: int = 64, heads: int = 4,
               ffn: int = 256, seed: int = 0) -> object:
    """One post-LN BERT encoder layer, ``hidden`` and an int64 ``attention_mask`` in."""
    g = GraphBuilder(seed)
    h = g.input("hidden_states", [batch, seq, width])
    mask = g.extended_mask(g.input("attention_mask", [batch, seq], "int64"))
    attn = g.self_attention(h, "attention", width, heads, mask)
    h1 = g.layer_norm(g.op("Add", attn, h), "attention.LayerNorm", width)  # type: ignore
    inter = g.gelu_erf(g.linear(h1, "intermediate", width, ffn))
    out = g.layer_norm(g.op("Add", g.linear(inter, "output", ffn, width), h1),  # type: ignore
                       "output.LayerNorm", width)
    g.result(out, "last_hidden_state", [batch, seq, width])
    return g.model(name="bert_layer")


def bert_model(batch: int = 1, seq: int = 16, width: int = 64, heads: int = 4, ffn: int = 256,
               layers: int = 2, vocab: int = 100, seed: int = 0) -> object:
    """A small BERT: token, position and type embeddings from int64 ids, ``layers`` layers."""
    from onnx.helper import make_tensor

    g = GraphBuilder(seed)
    ids = g.input("input_ids", [batch, seq], "int64")
    mask_in = g.input("attention_mask", [batch, seq], "int64")
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight", [vocab, width], 1.0),
                 ids)
    positions = g.op("Slice", g.const(np.arange(512, dtype=np.int64)[None], "position_ids"),
                     g.const(np.array([0], np.int64)), g.dim(ids, 1),
                     g.const(np.array([1], np.int64)))
    pos = g.op("Gather", g.weight("embeddings.position_embeddings.weight", [512, width]),
               positions)
    types = g.op("ConstantOfShape", g.op("Shape", ids),
                 value=make_tensor("value", 7, [1], [0]))
    typ = g.op("Gather", g.weight("embeddings.token_type_embeddings.weight", [2, width]), types)
    h = g.layer_norm(g.op("Add", g.op("Add", words, pos), typ),  # type: ignore[arg-type]
                     "embeddings.LayerNorm", width)
    mask = g.extended_mask(mask_in)
    for i in range(layers):
        name = f"encoder.layer.{i}"
        attn = g.self_attention(h, f"{name}.attention", width, heads, mask)
        h1 = g.layer_norm(g.op("Add", attn, h), f"{name}.attention.LayerNorm",  # type: ignore
                          width)
        inter = g.gelu_erf(g.linear(h1, f"{name}.intermediate", width, ffn))
        h = g.layer_norm(g.op("Add", g.linear(inter, f"{name}.output", ffn, width), h1),  # type: ignore
                         f"{name}.output.LayerNorm", width)
    g.result(h, "last_hidden_state", [batch, seq, width])
    return g.model(name="bert_model")


def gpt2_block(batch: int = 1, seq: int = 16, width: int = 64, heads: int = 4,
               seed: int = 0) -> object:
    """One pre-LN GPT-2 block: causal attention (a lower-triangular ``Where``), the tanh GELU
    written out, residuals."""
    g = GraphBuilder(seed)
    x = g.input("hidden_states", [batch, seq, width])
    h = g.layer_norm(x, "ln_1", width, 1e-5)
    attn = g.self_attention(h, "attn", width, heads, None, causal_len=seq)
    r = g.op("Add", attn, x)
    h2 = g.layer_norm(r, "ln_2", width, 1e-5)  # type: ignore[arg-type]
    fc = g.linear(h2, "mlp.c_fc", width, 4 * width)
    cube = g.op("Pow", fc, g.const(np.float32(3.0)))
    inner = g.op("Add", fc, g.op("Mul", cube, g.const(np.float32(0.044715))))
    t = g.op("Tanh", g.op("Mul", inner, g.const(np.float32(math.sqrt(2.0 / math.pi)))))
    act = g.op("Mul", g.op("Mul", fc, g.const(np.float32(0.5))),
               g.op("Add", t, g.const(np.float32(1.0))))
    out = g.op("Add", g.linear(act, "mlp.c_proj", 4 * width, width), r)  # type: ignore
    g.result(out, "last_hidden_state", [batch, seq, width])
    return g.model(name="gpt2_block")


def llama_block(batch: int = 1, seq: int = 16, width: int = 64, heads: int = 4,
                ffn: int = 172, seed: int = 0) -> object:
    """One Llama decoder layer: RMSNorm written out, rotary embeddings on q and k, causal
    attention, SwiGLU written as ``gate * sigmoid(gate) * up``, residuals."""
    g = GraphBuilder(seed)
    x = g.input("hidden_states", [batch, seq, width])
    h = g.rms_norm(x, "input_layernorm", width)
    attn = g.self_attention(h, "self_attn", width, heads, None, causal_len=seq, rotary=True)
    r = g.op("Add", x, attn)
    h2 = g.rms_norm(r, "post_attention_layernorm", width)  # type: ignore[arg-type]
    gate = g.op("MatMul", h2, g.weight("mlp.gate_proj.weight", [width, ffn]))
    up = g.op("MatMul", h2, g.weight("mlp.up_proj.weight", [width, ffn]))
    act = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), up)
    down = g.op("MatMul", act, g.weight("mlp.down_proj.weight", [ffn, width]))
    g.result(g.op("Add", r, down), "last_hidden_state", [batch, seq, width])  # type: ignore
    return g.model(name="llama_block")


BUILDERS = {
    "bert_layer": lambda: bert_layer(1, 128, 768, 12, 3072),
    "bert_small": lambda: bert_model(),
    "gpt2_block": lambda: gpt2_block(1, 64, 256, 4),
    "llama_block": lambda: llama_block(1, 64, 256, 4, 688),
}


def main(argv: list[str]) -> int:
    import onnx

    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, build in BUILDERS.items():
        onnx.save(build(), str(out / f"{name}.onnx"))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
