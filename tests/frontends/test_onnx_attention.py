"""Opset 23's Attention and RotaryEmbedding: each model (small random shapes) computed by fusec
fused, unfused and in the numpy reference agrees with ONNX Runtime; the forms that
``nn.attention`` computes become one, the others are written out; what fusec refuses is one
line naming the node."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from fusec.compiler.diagnostics import FusecError  # noqa: E402
from fusec.compiler.onnx_driver import import_onnx  # noqa: E402

from .onnx_helpers import assert_close, check_model, fusec_outputs, reference_outputs  # noqa: E402

F32, BOOL, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def model(op: str, inputs: list[tuple[str, int, list[int]] | None],
          outputs: list[tuple[str, int, list[int]]], **attrs: object) -> object:
    """One ``op`` node (opset 23) over graph inputs; None is an omitted optional input."""
    node = helper.make_node(op, [i[0] if i else "" for i in inputs], [o[0] for o in outputs],
                            name=f"the_{op.lower()}", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(*i) for i in inputs if i],
        [helper.make_tensor_value_info(*o) for o in outputs if o[0]])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def feeds_of(m: object, seed: int = 0) -> dict[str, np.ndarray]:
    """Normal floats; bool masks with the first key always attended."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for v in m.graph.input:  # type: ignore[attr-defined]
        shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if v.type.tensor_type.elem_type == BOOL:
            array = rng.integers(0, 2, shape).astype(bool)
            array[..., 0] = True
        elif v.type.tensor_type.elem_type == I64:
            array = rng.integers(0, 16, shape).astype(np.int64)
        else:
            array = rng.standard_normal(shape).astype(np.float32)
        feeds[v.name] = array
    return feeds


def ops_of(m: object) -> list[str]:
    fn = next(iter(import_onnx(m).module.ops))
    return [op.name for op in fn.body.block.ops]  # type: ignore[attr-defined]


B, S, T, D = 2, 5, 5, 8

ATTENTION = {
    # q heads 4, kv heads 2, packed [B, S, hidden], causal: one nn.attention
    "3d_gqa_causal": (model("Attention", [("q", F32, [B, S, 32]), ("k", F32, [B, T, 16]),
                                          ("v", F32, [B, T, 16])], [("y", F32, [B, S, 32])],
                            q_num_heads=4, kv_num_heads=2, is_causal=1), True),
    "4d_key_mask_scaled": (model("Attention", [
        ("q", F32, [B, 2, S, D]), ("k", F32, [B, 2, T, D]), ("v", F32, [B, 2, T, D]),
        ("mask", BOOL, [B, 1, 1, T])], [("y", F32, [B, 2, S, D])], scale=0.3), True),
    "4d_past_causal": (model("Attention", [
        ("q", F32, [B, 2, 3, D]), ("k", F32, [B, 2, 3, D]), ("v", F32, [B, 2, 3, D]), None,
        ("pk", F32, [B, 2, 4, D]), ("pv", F32, [B, 2, 4, D])],
        [("y", F32, [B, 2, 3, D]), ("present_k", F32, [B, 2, 7, D]),
         ("present_v", F32, [B, 2, 7, D])], is_causal=1), False),
    "4d_past_decode": (model("Attention", [
        ("q", F32, [B, 4, 1, D]), ("k", F32, [B, 2, 1, D]), ("v", F32, [B, 2, 1, D]),
        ("mask", BOOL, [B, 1, 1, 6]), ("pk", F32, [B, 2, 5, D]), ("pv", F32, [B, 2, 5, D])],
        [("y", F32, [B, 4, 1, D]), ("present_k", F32, [B, 2, 6, D]),
         ("present_v", F32, [B, 2, 6, D])], is_causal=1), True),
    "4d_float_mask_softcap_scores": (model("Attention", [
        ("q", F32, [B, 2, S, D]), ("k", F32, [B, 2, T, D]), ("v", F32, [B, 2, T, 4]),
        ("mask", F32, [S, T])],
        [("y", F32, [B, 2, S, 4]), ("", F32, []), ("", F32, []),
         ("scores", F32, [B, 2, S, T])], softcap=2.0, qk_matmul_output_mode=2), False),
    "3d_bool_mask_per_query": (model("Attention", [
        ("q", F32, [B, S, 16]), ("k", F32, [B, T, 16]), ("v", F32, [B, T, 16]),
        ("mask", BOOL, [S, T])], [("y", F32, [B, S, 16])],
        q_num_heads=2, kv_num_heads=2), False),
}


def check_against_onnx_reference(m: object, feeds: dict[str, np.ndarray]) -> None:
    """As `check_model`, against ONNX's reference evaluator: ONNX Runtime 1.32 refuses a
    mask that broadcasts over the queries ([B, 1, 1, T]), which the spec allows."""
    from onnx.reference import ReferenceEvaluator

    expected = ReferenceEvaluator(m).run(None, feeds)
    for pipeline in ("default", "none"):
        assert_close(fusec_outputs(m, feeds, pipeline), expected, f"fusec ({pipeline})")
    assert_close(reference_outputs(m, feeds), expected, "reference")

BROADCAST_QUERY_MASKS = {"4d_key_mask_scaled"}


@pytest.mark.parametrize("case", sorted(ATTENTION))
def test_attention_matches_onnxruntime(case: str) -> None:
    m, one_op = ATTENTION[case]
    for seed in (0, 1):
        if case in BROADCAST_QUERY_MASKS:
            check_against_onnx_reference(m, feeds_of(m, seed))
        else:
            check_model(m, feeds_of(m, seed))
    ops = ops_of(m)
    assert ("nn.attention" in ops and "nn.softmax" not in ops) == one_op, ops


def test_attention_with_large_scores_matches_onnxruntime() -> None:
    """Scores far from zero (inputs scaled by 30): the softmax's max subtraction matters."""
    m, _ = ATTENTION["4d_past_causal"]
    feeds = {k: v * 30 for k, v in feeds_of(m).items()}
    check_model(m, feeds, atol=1e-3)


ROTARY = {
    "4d_positions": (model("RotaryEmbedding", [
        ("x", F32, [B, 2, S, D]), ("cos", F32, [16, D // 2]), ("sin", F32, [16, D // 2]),
        ("pos", I64, [B, S])], [("y", F32, [B, 2, S, D])])),
    "3d_interleaved_partial": (model("RotaryEmbedding", [
        ("x", F32, [B, S, 24]), ("cos", F32, [16, 2]), ("sin", F32, [16, 2]),
        ("pos", I64, [B, S])], [("y", F32, [B, S, 24])], num_heads=2, interleaved=1,
        rotary_embedding_dim=4)),
    "4d_caches_per_position": (model("RotaryEmbedding", [
        ("x", F32, [B, 2, S, D]), ("cos", F32, [B, S, 2]), ("sin", F32, [B, S, 2])],
        [("y", F32, [B, 2, S, D])], rotary_embedding_dim=4)),
}


@pytest.mark.parametrize("case", sorted(ROTARY))
def test_rotary_embedding_matches_onnxruntime(case: str) -> None:
    m = ROTARY[case]
    check_model(m, feeds_of(m))
    assert "nn.gather" in ops_of(m) or case == "4d_caches_per_position"


@pytest.mark.parametrize(("m", "message"), [
    (model("Attention", [("q", F32, [B, S, 32]), ("k", F32, [B, T, 16]),
                         ("v", F32, [B, T, 16])], [("y", F32, [B, S, 32])]),
     "node 'the_attention' (Attention): 3-D q, k and v need the q_num_heads and kv_num_heads "
     "attributes"),
    (model("RotaryEmbedding", [("x", F32, [B, 2, S, D]), ("cos", F32, [16, 2]),
                               ("sin", F32, [16, 2]), ("pos", I64, [B, S])],
           [("y", F32, [B, 2, S, D])], rotary_embedding_dim=5),
     "node 'the_rotaryembedding' (RotaryEmbedding): rotary_embedding_dim 5 must be even and at "
     "most the head size 8"),
])
def test_refused_forms_are_one_line(m: object, message: str) -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(m)
    assert str(e.value).endswith(message) and "\n" not in str(e.value)
