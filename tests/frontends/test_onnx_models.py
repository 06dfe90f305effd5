"""Whole models built with ``onnx.helper`` (the node sequences exporters write, see
``fusec.bench.export_models``) through the importer: fusec fused and unfused, and the numpy
reference of the imported IR, each match ONNX Runtime (f32: atol 1e-4, rtol 1e-3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import numpy_helper  # noqa: E402
from onnx_helpers import check_model, random_feeds  # noqa: E402

from fusec.bench.export_models import (  # noqa: E402
    FLOAT_MIN,
    GraphBuilder,
    bert_layer,
    bert_model,
    gpt2_block,
    llama_block,
)
from fusec.compiler.onnx_driver import import_onnx  # noqa: E402


def ops_in(model: object) -> list[str]:
    fn = next(iter(import_onnx(model).module.ops))
    return [op.name for op in fn.body.block.ops]  # type: ignore[attr-defined]


def test_mlp_gemm_relu() -> None:
    g = GraphBuilder(1)
    x = g.input("x", [5, 12])
    h = g.op("Gemm", x, g.weight("w1", [20, 12]), g.weight("b1", [20]), transB=1, alpha=0.5)
    h = g.op("Relu", h)
    y = g.op("Gemm", h, g.weight("w2", [20, 7]), g.weight("b2", [1, 7]), beta=2.0)
    g.result(y, "y", [5, 7])
    check_model(g.model())


def test_gelu_erf_is_recognised() -> None:
    g = GraphBuilder(2)
    x = g.input("x", [3, 40])
    g.result(g.gelu_erf(g.linear(x, "fc", 40, 24)), "y", [3, 24])
    model = g.model()
    ops = ops_in(model)
    assert "nn.gelu" in ops and "nn.erf" not in ops
    feeds = {"x": np.linspace(-6, 6, 120, dtype=np.float32).reshape(3, 40)}
    check_model(model, feeds)


def test_layer_norm_decomposed() -> None:
    """LayerNorm written as ReduceMean/Sub/Pow/Sqrt/Div (older exports), at opset 18 where
    ReduceMean takes its axes as an input."""
    g = GraphBuilder(3)
    x = g.input("x", [2, 6, 32])
    axes = g.const(np.array([-1], np.int64))
    mean = g.op("ReduceMean", x, axes)
    centred = g.op("Sub", x, mean)
    var = g.op("ReduceMean", g.op("Pow", centred, g.const(np.float32(2.0))), axes)
    std = g.op("Sqrt", g.op("Add", var, g.const(np.float32(1e-5))))
    y = g.op("Add", g.op("Mul", g.op("Div", centred, std), g.weight("gamma", [32], 1.0)),
             g.weight("beta", [32]))
    g.result(y, "y", [2, 6, 32])
    check_model(g.model(opset=18))


def test_attention_with_additive_mask() -> None:
    """Scores, the HF additive mask ((1 - mask) * finfo.min), softmax, context: masked keys
    (adversarially, most of them) get no weight."""
    g = GraphBuilder(4)
    x = g.input("x", [2, 8, 32])
    mask = g.extended_mask(g.input("mask", [2, 8], "int64"))
    g.result(g.self_attention(x, "attn", 32, 4, mask), "y", [2, 8, 32])
    model = g.model()
    ops = ops_in(model)
    assert "nn.attention" in ops and "nn.softmax" not in ops, ops
    feeds = random_feeds(model)
    feeds["mask"] = np.array([[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0]], np.int64)
    check_model(model, feeds)


@pytest.mark.parametrize(("name", "visible", "recognised"), [
    # the causal triangle (what a trace leaves of HF's eager mask without a padding mask)
    ("causal", np.tri(8, dtype=bool), True),
    # a band of it: each query sees itself and the 2 keys before (Mistral's sliding window)
    ("window", np.tri(8, dtype=bool) & ~np.tri(8, k=-3, dtype=bool), True),
    ("none hidden", np.ones((8, 8), bool), True),
    # adversarial: the triangle with its diagonal hidden too, and the upper triangle
    ("strictly below", np.tri(8, k=-1, dtype=bool) | np.eye(8, dtype=bool)[::-1], False),
    ("upper", np.tri(8, dtype=bool).T, False),
])
def test_attention_with_constant_additive_mask(name: str, visible: np.ndarray,
                                               recognised: bool) -> None:
    """A constant float mask of 0 (attended) and finfo.min (hidden) added to the scores is judged
    by its values: the causal triangle, a band of it or nothing hidden is one
    ``nn.attention``; any other pattern stays as written, and both compute the same numbers."""
    g = GraphBuilder(5)
    x = g.input("x", [2, 8, 32])
    mask = g.const(np.where(visible, 0.0, FLOAT_MIN).astype(np.float32).reshape(1, 1, 8, 8))
    g.result(g.self_attention(x, "attn", 32, 4, mask), "y", [2, 8, 32])
    model = g.model()
    ops = ops_in(model)
    assert ("nn.attention" in ops and "nn.softmax" not in ops) == recognised, (name, ops)
    check_model(model)


def test_attention_unrecognised_mask_stays_correct() -> None:
    """An additive mask that is not HF's (a float input added as is) is no key mask: the
    subgraph stays as written, and still computes the same numbers."""
    g = GraphBuilder(8)
    x = g.input("x", [1, 6, 16])
    bias = g.input("bias", [1, 1, 6, 6])
    g.result(g.self_attention(x, "attn", 16, 2, bias), "y", [1, 6, 16])
    model = g.model()
    ops = ops_in(model)
    assert "nn.attention" not in ops and "nn.softmax" in ops
    check_model(model)


def test_bert_layer() -> None:
    check_model(bert_layer(batch=2, seq=8, width=32, heads=4, ffn=64))


def test_bert_layer_fuses_as_the_example() -> None:
    """The default pipeline leaves the same fused ops in an imported BERT layer as in
    examples/bert_layer.mlir (written by hand): the issue's criterion."""
    from collections import Counter
    from pathlib import Path

    from fusec.compiler.context import make_context
    from fusec.compiler.driver import load
    from fusec.compiler.pipeline import run_pipeline

    def fused_ops(module: object) -> Counter[str]:
        run_pipeline(make_context(), module, "default", "<test>")  # type: ignore[arg-type]
        fn = next(iter(module.ops))  # type: ignore[attr-defined]
        return Counter(op.name for op in fn.body.block.ops if op.name != "func.return")

    example = Path(__file__).resolve().parents[2] / "examples" / "bert_layer.mlir"
    expected = fused_ops(load(example.read_text(), str(example)))
    imported = import_onnx(bert_layer(batch=1, seq=128, width=64, heads=4, ffn=256))
    assert fused_ops(imported.module) == expected


def test_bert_model_with_embeddings() -> None:
    """int64 token ids and mask in, embeddings by Gather, shape subgraphs folded."""
    model = bert_model(batch=1, seq=8, width=32, heads=2, ffn=64, layers=2, vocab=50)
    feeds = random_feeds(model, vocab=50)
    feeds["input_ids"][0, :3] = [0, 49, 7]  # both ends of the table
    check_model(model, feeds)


def test_gpt2_block() -> None:
    """Causal attention as a lower-triangular Where (recognised: ``causal``, the triangle
    weight dropped), the tanh GELU written out (with Pow)."""
    model = gpt2_block(batch=1, seq=8, width=32, heads=2)
    imported = import_onnx(model)
    fn = next(iter(imported.module.ops))
    attention = [op for op in fn.body.block.ops if op.name == "nn.attention"]  # type: ignore
    assert len(attention) == 1 and attention[0].causal.value.data  # type: ignore[attr-defined]
    assert all(p.dtype != np.bool_ for p in imported.params.values())
    check_model(model)


def test_not_quite_causal_stays_correct() -> None:
    """A Where whose constant is not the lower triangle is not causal attention."""
    g = GraphBuilder(9)
    x = g.input("x", [1, 6, 16])
    y = g.self_attention(x, "attn", 16, 2, None, causal_len=6)
    for init in g.initializers:
        if init.data_type == 9:  # the bool triangle: hide one more key
            tri = np.tril(np.ones((6, 6), bool))
            tri[5, 0] = False
            init.CopyFrom(numpy_helper.from_array(tri[None, None], init.name))
    g.result(y, "y", [1, 6, 16])
    model = g.model()
    assert "nn.attention" not in ops_in(model)
    check_model(model)


def test_int64_and_bool_outputs() -> None:
    """int64 arithmetic (computed in i32) and a bool output come back in their ONNX dtypes."""
    g = GraphBuilder(5)
    ids = g.input("ids", [3, 4], "int64")
    doubled = g.op("Add", g.op("Mul", ids, g.const(np.int64(2))), g.const(np.int64(-3)))
    flag = g.op("And", g.op("Greater", doubled, g.const(np.int64(0))),
                g.op("Not", g.op("Equal", ids, g.const(np.int64(4)))))
    g.result(doubled, "doubled", [3, 4])
    g.nodes[-1].output[0] = "doubled"
    g.outputs[-1].type.tensor_type.elem_type = 7
    g.result(flag, "flag", [3, 4])
    g.outputs[-1].type.tensor_type.elem_type = 9
    outputs = check_model(g.model())
    assert outputs[0].dtype == np.int64 and outputs[1].dtype == np.bool_


def test_where_isnan_masking() -> None:
    """The TorchScript exporter's mask spelling: Where(IsNaN(..)), GreaterOrEqual, Expand."""
    g = GraphBuilder(6)
    x = g.input("x", [2, 3, 5])
    clean = g.op("Where", g.op("IsNaN", x), g.const(np.float32(0.0)), x)
    ge = g.op("GreaterOrEqual", clean, g.const(np.float32(0.25)))
    big = g.op("Expand", g.const(np.float32(FLOAT_MIN)), g.const(np.array([2, 3, 5], np.int64)))
    y = g.op("Softmax", g.op("Where", ge, clean, big), axis=-1)
    g.result(y, "y", [2, 3, 5])
    model = g.model()
    feeds = random_feeds(model)
    feeds["x"][0, 1, 2] = np.nan
    feeds["x"][1, 2, :] = 1.0  # a row the comparison keeps whole
    check_model(model, feeds)


def test_rotary_sin_cos() -> None:
    """Rotary-embedding arithmetic: x * cos(t) + rotate_half(x) * sin(t) with Slice/Concat/Neg,
    positions from Range (folded)."""
    g = GraphBuilder(7)
    x = g.input("x", [1, 6, 8])
    positions = g.op("Range", g.const(np.float32(0.0)), g.const(np.float32(6.0)),
                     g.const(np.float32(1.0)))
    freqs = g.const((1.0 / (10000 ** (np.arange(0, 8, 2) / 8))).astype(np.float32))
    angles = g.op("Mul", g.op("Unsqueeze", positions, g.const(np.array([1], np.int64))), freqs)
    angles = g.op("Concat", angles, angles, axis=-1)
    phase = g.op("Add", angles, g.op("ReduceMean", x, g.const(np.array([2], np.int64)),
                                     keepdims=1))  # make it depend on the input
    half1 = g.op("Slice", x, g.const(np.array([0], np.int64)), g.const(np.array([4], np.int64)),
                 g.const(np.array([2], np.int64)))
    half2 = g.op("Slice", x, g.const(np.array([4], np.int64)),
                 g.const(np.array([math.floor(2**62)], np.int64)),
                 g.const(np.array([-1], np.int64)))
    rotated = g.op("Concat", g.op("Neg", half2), half1, axis=-1)
    y = g.op("Add", g.op("Mul", x, g.op("Cos", phase)), g.op("Mul", rotated, g.op("Sin", phase)))
    g.result(y, "y", [1, 6, 8])
    check_model(g.model(opset=18))


def test_llama_block_with_rotary() -> None:
    """RMSNorm written out -> nn.rms_norm, rotary on q and k heads-first (the attention takes
    them packed back), causal attention, gate * sigmoid(gate) -> nn.silu; the default pipeline
    then makes the SwiGLU of the gate and up projections."""
    from fusec.compiler.context import make_context
    from fusec.compiler.pipeline import run_pipeline

    model = llama_block(batch=1, seq=8, width=32, heads=2, ffn=48)
    ops = ops_in(model)
    for name in ("nn.rms_norm", "nn.attention", "nn.silu"):
        assert name in ops, (name, ops)
    for name in ("nn.softmax", "nn.sigmoid", "nn.sqrt", "nn.reduce_mean"):
        assert name not in ops, (name, ops)
    imported = import_onnx(model)
    run_pipeline(make_context(), imported.module, "default", "<test>")
    fused = str(imported.module)
    assert "fused.swiglu" in fused
    check_model(model)


def test_gpt2_tanh_gelu_is_recognised() -> None:
    ops = ops_in(gpt2_block(batch=1, seq=8, width=32, heads=2))
    assert "nn.gelu" in ops and "nn.tanh" not in ops and "nn.pow" not in ops


def padded_attention(hidden: float) -> object:
    """Self-attention with torch ``MultiheadAttention``'s padding mask: ``where(pad, hidden,
    0)`` for a boolean ``[B, S]`` padding mask (true = hidden key), unsqueezed and expanded
    over the heads, added to the scores."""
    g = GraphBuilder(5)
    x = g.input("x", [2, 8, 32])
    pad = g.input("pad", [2, 8], "bool")
    m = g.op("Where", pad, g.const(np.float32(hidden)), g.const(np.float32(0.0)))
    m = g.op("Unsqueeze", m, g.const(np.array([1, 2], np.int64)))
    m = g.op("Expand", m, g.const(np.array([2, 4, 1, 8], np.int64)))
    g.result(g.self_attention(x, "attn", 32, 4, m), "y", [2, 8, 32])
    return g.model()


def padding_feeds() -> dict[str, np.ndarray]:
    pad = np.zeros((2, 8), bool)
    pad[0, 1:] = True  # adversarial: one key left in the first row
    pad[1, -3:] = True
    x = np.random.default_rng(3).standard_normal((2, 8, 32)).astype(np.float32)
    return {"x": x, "pad": pad}


def test_attention_with_padding_mask_of_hidden_keys() -> None:
    """A padding mask is true where keys are hidden (the opposite of a key mask): recognised
    by its values, its polarity turned (one ``where`` for the key mask), and right."""
    model = padded_attention(float("-inf"))
    ops = ops_in(model)
    assert "nn.attention" in ops and "nn.softmax" not in ops, ops
    check_model(model, padding_feeds())


def test_attention_with_small_padding_penalty_stays() -> None:
    """``where(pad, -1, 0)`` only lowers the hidden keys' scores: no key mask, left as written
    and still right."""
    model = padded_attention(-1.0)
    ops = ops_in(model)
    assert "nn.attention" not in ops and "nn.softmax" in ops, ops
    check_model(model, padding_feeds())
