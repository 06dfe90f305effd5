"""The ONNX Runtime peer: a workload's `Graph` as an ONNX model, built in memory.

Ops are spelled the way ``torch.onnx.export`` spells them at opset 17 (``LayerNormalization``;
GELU, RMSNorm, SiLU and attention decomposed into primitives), so that ONNX Runtime's graph
optimiser gets the patterns its fusions (Gelu, SimplifiedLayerNormalization, MatMul+Add) are
written for. Imported only when ``onnx`` and ``onnxruntime`` are installed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from fusec.bench.graph import Graph, Node, Unsupported

OPSET = 17

ELEMENT_TYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
                 "float64": TensorProto.DOUBLE, "bool": TensorProto.BOOL,
                 "int32": TensorProto.INT32, "int64": TensorProto.INT64}


class OnnxWriter:
    """Collects nodes and initializers; every helper returns the name of the value it made."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def op(self, op_type: str, *inputs: str, **attrs: object) -> str:
        out = f"t{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def const(self, value: np.ndarray | float | list[int]) -> str:
        if isinstance(value, float):
            array = np.array(value, dtype=np.float32)
        elif isinstance(value, list):
            array = np.array(value, dtype=np.int64)
        else:
            array = value
        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(array, name))
        return name


Emit = Callable[[OnnxWriter, Node, list[str]], str]


def simple(op_type: str) -> Emit:
    return lambda w, node, xs: w.op(op_type, *xs)


def gelu(w: OnnxWriter, node: Node, xs: list[str]) -> str:
    (x,) = xs
    if node.attrs.get("approximate", "none") == "tanh":
        cube = w.op("Mul", w.const(0.044715), w.op("Pow", x, w.const(3.0)))
        inner = w.op("Mul", w.const(math.sqrt(2.0 / math.pi)), w.op("Add", x, cube))
        half = w.op("Add", w.const(1.0), w.op("Tanh", inner))
    else:
        half = w.op("Add", w.op("Erf", w.op("Div", x, w.const(math.sqrt(2.0)))), w.const(1.0))
    return w.op("Mul", w.op("Mul", x, half), w.const(0.5))


def rms_norm(w: OnnxWriter, node: Node, xs: list[str]) -> str:
    x, gamma = xs
    axis, eps = node.attrs.get("axis", -1), node.attrs.get("eps", 1e-6)
    mean_sq = w.op("ReduceMean", w.op("Pow", x, w.const(2.0)), axes=[axis], keepdims=1)
    scaled = w.op("Div", x, w.op("Sqrt", w.op("Add", mean_sq, w.const(float(eps)))))
    return w.op("Mul", scaled, gamma)


def attention(w: OnnxWriter, node: Node, xs: list[str]) -> str:
    heads, dim = node.attrs["num_heads"], node.attrs["head_dim"]
    scale = node.attrs.get("scale", 1.0 / math.sqrt(dim))
    batch, seq, width = node.output.shape
    split_shape = w.const([0, 0, heads, dim])

    def split(x: str, perm: list[int]) -> str:
        return w.op("Transpose", w.op("Reshape", x, split_shape), perm=perm)

    q, k, v = split(xs[0], [0, 2, 1, 3]), split(xs[1], [0, 2, 3, 1]), split(xs[2], [0, 2, 1, 3])
    scores = w.op("Mul", w.op("MatMul", q, k), w.const(float(scale)))
    if len(xs) > 3:
        # (mask - 1) * 1e9: 0 where a key attends, -1e9 where it is masked; [B, 1, 1, S_k].
        bias = w.op("Mul", w.op("Sub", xs[3], w.const(1.0)), w.const(1e9))
        scores = w.op("Add", scores, w.op("Unsqueeze", bias, w.const([1, 2])))
    if node.attrs.get("causal", False):
        # Self-attention: as many keys as queries (a cross-attention would fail to load).
        hidden = np.triu(np.full((seq, seq), -1e9, dtype=np.float32), k=1)
        scores = w.op("Add", scores, w.const(hidden))
    context = w.op("MatMul", w.op("Softmax", scores, axis=-1), v)
    merged = w.op("Transpose", context, perm=[0, 2, 1, 3])
    return w.op("Reshape", merged, w.const([batch, seq, width]))


def narrow(w: OnnxWriter, node: Node, xs: list[str]) -> str:
    axis, start, length = node.attrs["axis"], node.attrs["start"], node.attrs["length"]
    return w.op("Slice", xs[0], w.const([start]), w.const([start + length]), w.const([axis]))


def reduce(op_type: str) -> Emit:
    def emit(w: OnnxWriter, node: Node, xs: list[str]) -> str:
        axes, keep = list(node.attrs["axes"]), int(node.attrs.get("keepdims", False))
        if op_type == "ReduceSum":  # axes became an input at opset 13, the others at 18
            return w.op(op_type, xs[0], w.const(axes), keepdims=keep)
        return w.op(op_type, xs[0], axes=axes, keepdims=keep)

    return emit


CMP = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
       "ge": "GreaterOrEqual"}


def cmp(w: OnnxWriter, node: Node, xs: list[str]) -> str:
    predicate = node.attrs["predicate"]
    if predicate == "ne":
        return w.op("Not", w.op("Equal", *xs))
    return w.op(CMP[predicate], *xs)


ONNX_OPS: dict[str, Emit] = {
    "add": simple("Add"),
    "sub": simple("Sub"),
    "mul": simple("Mul"),
    "div": simple("Div"),
    "max": simple("Max"),
    "min": simple("Min"),
    "pow": simple("Pow"),
    "relu": simple("Relu"),
    "gelu": gelu,
    "silu": lambda w, node, xs: w.op("Mul", xs[0], w.op("Sigmoid", xs[0])),
    "sigmoid": simple("Sigmoid"),
    "tanh": simple("Tanh"),
    "exp": simple("Exp"),
    "log": simple("Log"),
    "sqrt": simple("Sqrt"),
    "rsqrt": lambda w, node, xs: w.op("Reciprocal", w.op("Sqrt", xs[0])),
    "neg": simple("Neg"),
    "abs": simple("Abs"),
    "cast": lambda w, node, xs: w.op("Cast", xs[0], to=ELEMENT_TYPES[node.output.dtype]),
    "cmp": cmp,
    "where": simple("Where"),
    "constant": lambda w, node, xs: w.const(node.attrs["value"]),
    "matmul": simple("MatMul"),
    "transpose": lambda w, node, xs: w.op("Transpose", xs[0], perm=list(node.attrs["perm"])),
    "reshape": lambda w, node, xs: w.op("Reshape", xs[0], w.const(list(node.output.shape))),
    "narrow": narrow,
    "concat": lambda w, node, xs: w.op("Concat", *xs, axis=node.attrs["axis"]),
    "layer_norm": lambda w, node, xs: w.op(
        "LayerNormalization", *xs, axis=node.attrs.get("axis", -1),
        epsilon=node.attrs.get("eps", 1e-5)),
    "rms_norm": rms_norm,
    "softmax": lambda w, node, xs: w.op("Softmax", xs[0], axis=node.attrs.get("axis", -1)),
    "reduce_sum": reduce("ReduceSum"),
    "reduce_mean": reduce("ReduceMean"),
    "reduce_max": reduce("ReduceMax"),
    "reduce_min": reduce("ReduceMin"),
    "attention": attention,
}


def to_onnx(graph: Graph, initializers: dict[str, np.ndarray] | None = None
            ) -> onnx.ModelProto:
    """The model of `graph`; the inputs named in `initializers` become constants of the model
    (initializers, as an exported model holds its weights) instead of graph inputs."""
    fixed = initializers or {}
    w = OnnxWriter()
    w.initializers.extend(numpy_helper.from_array(a, name) for name, a in fixed.items())
    names = {t.name: t.name for t in graph.inputs}
    for node in graph.nodes:
        emit = ONNX_OPS.get(node.kind)
        if emit is None:
            raise Unsupported(f"no ONNX translation of nn.{node.kind}")
        names[node.output.name] = emit(w, node, [names[x] for x in node.inputs])
    outputs = []
    for i, name in enumerate(graph.outputs):
        final = f"out{i}"
        w.nodes.append(helper.make_node("Identity", [names[name]], [final]))
        t = graph.shapes[name]
        outputs.append(helper.make_tensor_value_info(final, ELEMENT_TYPES[t.dtype], t.shape))
    inputs = [helper.make_tensor_value_info(t.name, ELEMENT_TYPES[t.dtype], t.shape)
              for t in graph.inputs if t.name not in fixed]
    body = helper.make_graph(w.nodes, graph.name, inputs, outputs, w.initializers)
    model = helper.make_model(body, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = min(model.ir_version, 10)
    onnx.checker.check_model(model)
    return model


def session_options(threads: int | None = None) -> ort.SessionOptions:
    """The options of every ONNX Runtime session fusec-bench makes: every graph optimisation,
    warnings off, the intra-op pool not spinning between runs."""
    options = ort.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # ONNX Runtime's pool spins after each run by default, and on a machine of few cores the
    # spinning threads take the cores that the next runner in the interleaved timing runs on
    # (gemm_epilogue on 2 cores: fusec 6.5 ms wall for 3.1 ms of kernels; an imported BERT
    # layer: fusec 75 ms interleaved, 52 ms alone, and ONNX Runtime itself no slower without
    # spinning, 35 vs 48 ms). Without spinning every runner times as it does alone.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def session(graph: Graph, threads: int | None = None,
            initializers: dict[str, np.ndarray] | None = None) -> ort.InferenceSession:
    """An ONNX Runtime CPU session with `session_options`; see `to_onnx` for
    `initializers`."""
    return ort.InferenceSession(
        to_onnx(graph, initializers).SerializeToString(), session_options(threads),
        providers=["CPUExecutionProvider"])
