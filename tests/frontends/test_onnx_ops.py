"""One ONNX node at a time through the importer, against ONNX Runtime on random inputs (and
the fused, unfused and reference runs of `check_model`): every converter in the op table, with
the attribute forms exporters use."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx_helpers import check_model, fusec_outputs, reference_outputs  # noqa: E402

from fusec.bench.export_models import GraphBuilder  # noqa: E402

I64 = np.int64


def ints(*values: int) -> np.ndarray:
    return np.array(values, I64)


def unary(op: str, **attrs: object) -> Callable[[GraphBuilder], tuple[str, list[int]]]:
    def build(g: GraphBuilder) -> tuple[str, list[int]]:
        return g.op(op, g.input("x", [3, 5, 7]), **attrs), [3, 5, 7]  # type: ignore[return-value]

    return build


def binary(op: str, rhs: list[int]) -> Callable[[GraphBuilder], tuple[str, list[int]]]:
    def build(g: GraphBuilder) -> tuple[str, list[int]]:
        y = g.op(op, g.input("a", [3, 5, 7]), g.input("b", rhs))
        return y, [3, 5, 7]  # type: ignore[return-value]

    return build


def with_consts(build: Callable[[GraphBuilder, str], str], shape_in: list[int],
                shape_out: list[int]) -> Callable[[GraphBuilder], tuple[str, list[int]]]:
    def make(g: GraphBuilder) -> tuple[str, list[int]]:
        return build(g, g.input("x", shape_in)), shape_out

    return make


CASES: dict[str, Callable[[GraphBuilder], tuple[str, list[int]]]] = {
    **{op: unary(op) for op in ("Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "Sin",
                                "Cos", "Identity")},
    "Gelu_tanh": lambda g: (g.op("Gelu", g.input("x", [4, 9]), approximate="tanh"), [4, 9]),
    "Softmax_axis1": unary("Softmax", axis=1),
    "Add_broadcast": binary("Add", [7]),
    "Sub_both": binary("Sub", [3, 1, 7]),
    "Mul": binary("Mul", [3, 5, 7]),
    "Div": binary("Div", [5, 1]),
    "Max": binary("Max", [7]),
    "Min": binary("Min", [1]),
    "Pow_square": with_consts(lambda g, x: g.op("Pow", x, g.const(np.float32(2.0))),
                              [4, 6], [4, 6]),
    "Sqrt_of_abs": with_consts(lambda g, x: g.op("Sqrt", g.op("Abs", x)), [4, 6], [4, 6]),
    "Reciprocal_log": with_consts(
        lambda g, x: g.op("Reciprocal", g.op("Log", g.op("Add", g.op("Abs", x),
                                                         g.const(np.float32(2.0))))),
        [4, 6], [4, 6]),
    "Clip": with_consts(lambda g, x: g.op("Clip", x, g.const(np.float32(-0.5)),
                                          g.const(np.float32(0.7))), [4, 6], [4, 6]),
    "MatMul_batched_broadcast": lambda g: (g.op("MatMul", g.input("a", [2, 3, 4, 5]),
                                                g.input("b", [3, 5, 6])), [2, 3, 4, 6]),
    "MatMul_vector": lambda g: (g.op("MatMul", g.input("a", [4, 5]), g.input("b", [5])), [4]),
    "Transpose": with_consts(lambda g, x: g.op("Transpose", x, perm=[2, 0, 1]),
                             [3, 4, 5], [5, 3, 4]),
    "Reshape_zero_minus_one": with_consts(
        lambda g, x: g.op("Reshape", x, g.const(ints(0, -1))), [3, 4, 5], [3, 20]),
    "Flatten": with_consts(lambda g, x: g.op("Flatten", x, axis=2), [3, 4, 5], [12, 5]),
    "Squeeze_Unsqueeze": with_consts(
        lambda g, x: g.op("Unsqueeze", g.op("Squeeze", x, g.const(ints(1))), g.const(ints(0))),
        [3, 1, 5], [1, 3, 5]),
    "Slice_negative": with_consts(
        lambda g, x: g.op("Slice", x, g.const(ints(1, -3)), g.const(ints(100, -1)),
                          g.const(ints(0, 2))), [4, 3, 6], [3, 3, 2]),
    "Split_outputs": lambda g: (g.op("Concat", *reversed(g.op(
        "Split", g.input("x", [2, 9]), g.const(ints(2, 3, 4)), axis=1, outputs=3)), axis=1),
        [2, 9]),
    "Concat": lambda g: (g.op("Concat", g.input("a", [2, 3]), g.input("b", [2, 4]), axis=-1),
                         [2, 7]),
    "Expand": with_consts(lambda g, x: g.op("Expand", x, g.const(ints(2, 3, 4))), [3, 1],
                          [2, 3, 4]),
    "Gather_axis1_scalar": with_consts(
        lambda g, x: g.op("Gather", x, g.const(I64(-2)), axis=1), [3, 4, 5], [3, 5]),
    "Gather_rows_by_input": lambda g: (g.op("Gather", g.weight("table", [100, 6], 1.0),
                                            g.input("ids", [2, 3], "int64")), [2, 3, 6]),
    "GatherND_rows_negative": with_consts(
        lambda g, x: g.op("GatherND", x, g.const(np.array(
            [[[0, -1], [2, 1]], [[1, 0], [-3, 3]]], I64))), [3, 4, 5], [2, 2, 5]),
    "GatherND_elements": with_consts(
        lambda g, x: g.op("GatherND", x, g.const(np.array([[0, 1, 2], [2, 3, -1]], I64))),
        [3, 4, 5], [2]),
    "LayerNormalization_no_bias": with_consts(
        lambda g, x: g.op("LayerNormalization", x, g.weight("scale", [8], 1.0), axis=-1,
                          epsilon=1e-5), [3, 8], [3, 8]),
    "ReduceSum_axes_input": with_consts(
        lambda g, x: g.op("ReduceSum", x, g.const(ints(0, 2)), keepdims=0), [3, 4, 5], [4]),
    "ReduceMax_keepdims": with_consts(
        lambda g, x: g.op("ReduceMax", x, g.const(ints(-1))), [3, 4, 5], [3, 4, 1]),
    "ReduceMin_all": with_consts(lambda g, x: g.op("ReduceMin", x, keepdims=0), [3, 4], []),
    "Where_Less_Or": lambda g: (g.op("Where", g.op("Or", g.op(
        "Less", g.input("a", [3, 4]), g.input("b", [4])), g.op(
        "GreaterOrEqual", g.input("c", [3, 1]), g.const(np.float32(1.0)))), g.input(
        "d", [3, 4]), g.const(np.float32(-7.0))), [3, 4]),
    "Xor_LessOrEqual_Greater": lambda g: (g.op("Cast", g.op("Xor", g.op(
        "LessOrEqual", g.input("a", [5]), g.const(np.float32(0.0))), g.op(
        "Greater", g.input("b", [5]), g.const(np.float32(0.5)))), to=1), [5]),
    "Cast_float_int_float": with_consts(
        lambda g, x: g.op("Cast", g.op("Cast", g.op("Mul", x, g.const(np.float32(3.0))), to=7),
                          to=1), [4, 5], [4, 5]),
    "CumSum_last_axis": with_consts(
        lambda g, x: g.op("CumSum", x, g.const(I64(-1))), [3, 6], [3, 6]),
    "CumSum_axis0_exclusive_reverse": with_consts(
        lambda g, x: g.op("CumSum", x, g.const(I64(0)), exclusive=1, reverse=1), [5, 4],
        [5, 4]),
    "CumSum_int_mask_positions": lambda g: (g.op("Cast", g.op("CumSum", g.op(
        "Cast", g.op("Greater", g.input("x", [2, 7]), g.const(np.float32(0.0))), to=7),
        g.const(I64(1))), to=1), [2, 7]),
    "GatherElements_axis1_computed_indices": with_consts(
        lambda g, x: g.op("GatherElements", g.weight("table", [3, 5], 1.0), g.op(
            "Sub", g.op("Cast", g.op("Greater", x, g.const(np.float32(0.0))), to=7),
            g.const(I64(2))), axis=1), [3, 4], [3, 4]),
    "GatherElements_axis0": lambda g: (g.op("GatherElements", g.input("x", [4, 3]), g.op(
        "Cast", g.op("Greater", g.input("z", [2, 3]), g.const(np.float32(0.0))), to=7),
        axis=0), [2, 3]),
    "Gemm_transA": lambda g: (g.op("Gemm", g.input("a", [6, 4]), g.weight("w", [6, 5]),
                                   transA=1), [4, 5]),
    "Range_ConstantOfShape_folded": with_consts(
        lambda g, x: g.op("Add", x, g.op("Cast", g.op("Range", g.const(I64(0)),
                                                      g.op("Gather", g.op("Shape", x),
                                                           g.const(I64(1))),
                                                      g.const(I64(1))), to=1)),
        [3, 6], [3, 6]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_op(case: str) -> None:
    g = GraphBuilder(sum(map(ord, case)))
    value, shape = CASES[case](g)
    g.result(value, "y", shape)
    model = g.model(opset=20 if case.startswith("Gelu") else 18)  # Gelu is an opset-20 op
    check_model(model)


def test_gathernd_with_computed_indices() -> None:
    """GatherND whose indices are a graph input: linearised with nn ops, negatives wrapped."""
    g = GraphBuilder(7)
    y = g.op("GatherND", g.input("x", [3, 4, 5]), g.input("idx", [2, 3, 2], "int64"))
    g.result(y, "y", [2, 3, 5])
    idx = np.array([[[0, 0], [2, 3], [-1, -4]], [[1, -1], [-3, 2], [2, 0]]], I64)
    x = np.random.default_rng(7).standard_normal((3, 4, 5)).astype(np.float32)
    check_model(g.model(), {"x": x, "idx": idx})


@pytest.mark.parametrize("bad", [[0, 4], [-4, 0], [3, 1]])
def test_gathernd_with_a_computed_index_out_of_range(bad: list[int]) -> None:
    """A tuple with one component out of range ([0, 4] of a 3x4 data's first two axes: its
    linear index 4 would be in range) is an error of the call at the tuple's position, in the
    kernel and the reference, not another element."""
    from fusec.errors import IndexOutOfRangeError

    g = GraphBuilder(7)
    y = g.op("GatherND", g.input("x", [3, 4, 5]), g.input("idx", [2, 2], "int64"))
    g.result(y, "y", [2, 5])
    model = g.model()
    feeds = {"x": np.ones((3, 4, 5), np.float32), "idx": np.array([[1, 1], bad], I64)}
    for run in (fusec_outputs, reference_outputs):
        with pytest.raises(IndexOutOfRangeError, match=r"index 12 at position \[1\] of the "
                           r"indices is out of range for axis 0 of size 12"):
            run(model, feeds)


def test_float16_model_computes_in_float16() -> None:
    """A float16 model: weights, activations and casts stay f16 (the IR has no f32 op), the
    outputs are float16 and match ONNX Runtime within f16's tolerance."""
    from onnx import TensorProto, helper, numpy_helper

    from fusec.compiler.onnx_driver import import_onnx

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array((rng.standard_normal((8, 6)) * 0.3).astype(np.float16), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Cast", ["h"], ["h32"], to=TensorProto.FLOAT),
             helper.make_node("Softmax", ["h32"], ["p32"], axis=-1),
             helper.make_node("Cast", ["p32"], ["p"], to=TensorProto.FLOAT16),
             helper.make_node("Mul", ["p", "h"], ["y"])]
    graph = helper.make_graph(
        nodes, "half", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4, 6])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    text = str(import_onnx(model).module)
    assert "f16" in text and "nn.matmul" in text
    assert "xf32> -> tensor<4x6xf16>" in text  # the softmax's cast back, in the model's type
    x = rng.standard_normal((4, 8)).astype(np.float16)
    fused = check_model(model, {"x": x}, atol=2e-2, rtol=2e-2)
    assert fused[0].dtype == np.float16


@pytest.mark.parametrize("bad", [4, -5, 7])
def test_gatherelements_with_a_computed_index_out_of_range(bad: int) -> None:
    """An index outside its axis (4 or -5 of an axis of 4: its linear index would land on the
    next or previous row's element) is an error of the call, in the kernel and the reference,
    not another element's value."""
    from fusec.errors import IndexOutOfRangeError

    g = GraphBuilder(7)
    y = g.op("GatherElements", g.input("x", [3, 4]), g.input("idx", [3, 2], "int64"), axis=1)
    g.result(y, "y", [3, 2])
    model = g.model()
    idx = np.array([[0, 3], [-1, 1], [2, -4]], I64)
    idx[1, 0] = bad
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(3, 4), "idx": idx}
    for run in (fusec_outputs, reference_outputs):
        with pytest.raises(IndexOutOfRangeError, match=r"index 12 at position \[1, 0\] of the "
                           r"indices is out of range for axis 0 of size 12"):
            run(model, feeds)


@pytest.mark.parametrize("axis", [1, -1])
def test_gatherelements_of_constants_folds_along_a_long_axis(axis: int) -> None:
    """GatherElements of constants along an axis longer than 64 (as the TorchScript export of
    Hugging Face BERT gathers its ``token_type_ids`` buffer at 128 tokens) is folded at import
    and gives ONNX Runtime's values; onnx's reference implementation fails above 64."""
    g = GraphBuilder(11)
    table = np.random.default_rng(11).standard_normal((2, 200)).astype(np.float32)
    index = np.random.default_rng(12).integers(-200, 200, (2, 128)).astype(I64)
    index[0, :3] = [0, 199, -200]
    gathered = g.op("GatherElements", g.const(table), g.const(index), axis=axis)
    g.result(g.op("Add", gathered, g.input("x", [2, 128])), "y", [2, 128])
    check_model(g.model())


def test_gatherelements_of_constants_out_of_range_is_an_import_error() -> None:
    from fusec.compiler.diagnostics import FusecError
    from fusec.compiler.onnx_driver import import_onnx

    g = GraphBuilder(11)
    gathered = g.op("GatherElements", g.const(np.zeros((1, 100), np.float32)),
                    g.const(np.array([[3, 100]], I64)), axis=1)
    g.result(g.op("Add", gathered, g.input("x", [1, 2])), "y", [1, 2])
    with pytest.raises(FusecError, match=r"\(GatherElements\): index 100 at position \[0, 1\] is "
                       r"out of range for axis 1 of \[1, 100\]$"):
        import_onnx(g.model())
