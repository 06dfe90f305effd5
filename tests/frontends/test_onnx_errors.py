"""Bad models and bad calls: each is one line naming what is wrong (the node and op type, the
input, the file), raised as `FusecError` (import) or `InputError` (call); never a traceback."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from fusec.bench.export_models import GraphBuilder  # noqa: E402
from fusec.compiler.diagnostics import FusecError  # noqa: E402
from fusec.compiler.onnx_driver import import_onnx  # noqa: E402
from fusec.errors import InputError  # noqa: E402


def one_line(e: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def relu_model(shape: list[object] | None = None, opset: int = 17) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape or [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape or [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="/act/Relu")],
                              "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_unsupported_op_names_node_and_type() -> None:
    x = helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4])
    s = helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4])
    y = helper.make_tensor_value_info("sel", TensorProto.INT64, [4, 3])
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"],
                            name="/encoder/Foo")
    model = helper.make_model(helper.make_graph([node], "g", [x, s], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(FusecError) as e:
        import_onnx(model, filename="model.onnx")
    assert one_line(e) == ("model.onnx: error: node '/encoder/Foo' (NonMaxSuppression): "
                           "not supported")


def test_unsupported_form_names_node() -> None:
    g = GraphBuilder()
    x = g.input("x", [4, 6])
    y = g.op("Dropout", x, g.const(np.float32(0.5)), g.const(np.bool_(True)), name="/drop")
    g.result(y, "y", [4, 6])
    with pytest.raises(FusecError) as e:
        import_onnx(g.model(), filename="m.onnx")
    assert one_line(e) == "m.onnx: error: node '/drop' (Dropout): Dropout in training mode is " \
                          "not supported (it is random) unless its ratio is 0"


def test_layer_norm_scale_that_does_not_broadcast() -> None:
    g = GraphBuilder()
    x = g.input("x", [2, 3, 4])
    y = g.op("LayerNormalization", x, g.const(np.ones(3, np.float32)), axis=1, name="/ln")
    g.result(y, "y", [2, 3, 4])
    with pytest.raises(FusecError) as e:
        import_onnx(g.model(), filename="m.onnx")
    assert one_line(e) == ("m.onnx: error: node '/ln' (LayerNormalization): scale of shape [3] "
                           "does not broadcast to the normalised shape [3, 4]")


def test_corrupt_file(tmp_path) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07garbage\xff\xff\xff\xff")
    with pytest.raises(FusecError) as e:
        import_onnx(str(path))
    assert one_line(e).startswith(f"{path}: error: not an ONNX model")


def test_truncated_file(tmp_path) -> None:
    data = relu_model().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(FusecError) as e:
        import_onnx(str(path))
    assert one_line(e).startswith(f"{path}: error: ")


def test_nodes_out_of_order_name_the_node(tmp_path) -> None:
    """The checker's message, which prints the node over several lines, is one line (found
    by ``fusec-fuzz --models``: the error ended at "of node:")."""
    model = relu_model()
    x = model.graph.node[0]
    model.graph.node.append(helper.make_node("Relu", ["h"], ["y"], name="/second"))
    x.output[0] = "h"
    model.graph.node[0].CopyFrom(model.graph.node[1])
    model.graph.node[1].CopyFrom(helper.make_node("Relu", ["x"], ["h"], name="/first"))
    path = tmp_path / "unsorted.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(FusecError) as e:
        import_onnx(str(path))
    assert one_line(e) == (f"{path}: error: invalid ONNX model: Nodes in a graph must be "
                           "topologically sorted, however input 'h' of node: name: /second "
                           "OpType: Relu is not output of any previous nodes.")


def test_missing_file(tmp_path) -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(str(tmp_path / "none.onnx"))
    assert "cannot read model: No such file or directory" in one_line(e)


def test_opset_beyond_the_installed_onnx() -> None:
    opset = onnx.defs.onnx_opset_version() + 1
    with pytest.raises(FusecError) as e:
        import_onnx(relu_model(opset=opset), filename="m.onnx")
    assert one_line(e) == (f"m.onnx: error: opset {opset} is not supported (the installed onnx "
                           f"package knows opsets 1 to {opset - 1})")


@pytest.mark.parametrize("opset", [9, onnx.defs.onnx_opset_version()])
def test_op_unchanged_at_another_opset_is_converted(opset: int) -> None:
    """Relu-6 (opset 9) and Relu-14 (opset 28) differ from Relu-13 in element types only."""
    imported = import_onnx(relu_model(opset=opset), filename="m.onnx")
    assert "nn.relu" in str(imported.module)


def test_op_changed_at_an_older_opset_is_refused() -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(relu_model(opset=5), filename="m.onnx")
    assert one_line(e) == ("m.onnx: error: node '/act/Relu' (Relu): Relu-1 (opset 5) is not "
                           "supported: fusec converts Relu-13 (opsets 13 to 25), which differs "
                           "from it")


def reshape_by_input() -> onnx.ModelProto:
    g = GraphBuilder(0)
    x = g.input("x", [2, 6])
    shape = g.input("shape", [2], "int64")
    g.result(g.op("Reshape", x, shape, name="/Reshape"), "y", [3, 4])
    return g.model()


def test_shape_input_without_value_names_the_input() -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(reshape_by_input(), filename="m.onnx")
    assert one_line(e) == ("m.onnx: error: node '/Reshape' (Reshape): shape is graph input "
                           "'shape', whose value decides the result's shape: give it at import "
                           "(input_values={'shape': ...}, fusec-run's --inputs)")


def test_shape_input_value_of_wrong_type() -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(reshape_by_input(), filename="m.onnx",
                    input_values={"shape": np.array([3, 4], np.int32)})
    assert one_line(e) == ("m.onnx: error: the value given for input 'shape' is int32 of "
                           "shape [2]; the input is int64 of shape [2]")


def test_call_with_another_shape_value_is_refused() -> None:
    """The model computes for the value it was imported with; another is an `InputError`."""
    import fusec

    shape = np.array([3, 4], np.int64)
    exe = fusec.compile(reshape_by_input(), device="cpu", input_values={"shape": shape})
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    (y,) = exe(x=x, shape=shape)
    np.testing.assert_array_equal(y, x.reshape(3, 4))
    with pytest.raises(InputError) as e:
        exe(x=x, shape=np.array([4, 3], np.int64))
    assert one_line(e) == ("input 'shape' differs from the value the model was imported with "
                           "([3, 4]), which decides shapes: import the model again with this "
                           "value")


def test_missing_external_data(tmp_path) -> None:
    g = GraphBuilder()
    x = g.input("x", [2, 64])
    g.result(g.op("MatMul", x, g.weight("w", [64, 64])), "y", [2, 64])
    model = g.model()
    path = tmp_path / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(FusecError) as e:
        import_onnx(str(path))
    message = one_line(e)
    assert message.startswith(f"{path}: error: ") and "weights.bin" in message


def test_external_data_present(tmp_path) -> None:
    g = GraphBuilder()
    x = g.input("x", [2, 64])
    g.result(g.op("MatMul", x, g.weight("w", [64, 64])), "y", [2, 64])
    path = tmp_path / "ext.onnx"
    onnx.save_model(g.model(), str(path), save_as_external_data=True, location="w.bin",
                    size_threshold=0)
    imported = import_onnx(str(path))
    assert imported.params["w"].shape == (64, 64)


def test_dynamic_dimension_needs_shape() -> None:
    model = relu_model(["batch", 3])
    with pytest.raises(FusecError) as e:
        import_onnx(model, filename="m.onnx")
    assert one_line(e) == ("m.onnx: error: graph input 'x' has dynamic dimension 'batch'; fix "
                           "it with --shape x=Nx3")
    imported = import_onnx(model, shapes={"x": [5, 3]})
    assert imported.inputs[0].shape == (5, 3)


def test_shape_of_unknown_input() -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(relu_model(), shapes={"y": [1]}, filename="m.onnx")
    assert one_line(e) == ("m.onnx: error: --shape names 'y', which is not a graph input "
                           "(inputs: x)")


def unary_model(op: str, elem: int, opset: int = 17) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", elem, [2])
    y = helper.make_tensor_value_info("y", elem, [2])
    return helper.make_model(helper.make_graph([helper.make_node(op, ["x", "x"][:1 + (op == "Add")],
                                                                 ["y"])], "g", [x], [y]),
                             opset_imports=[helper.make_opsetid("", opset)])


def test_unsupported_input_type() -> None:
    with pytest.raises(FusecError) as e:
        import_onnx(unary_model("Relu", TensorProto.FLOAT8E4M3FN, 21), filename="m.onnx")
    assert one_line(e).startswith("m.onnx: error: graph input 'x' is element type 17, which is "
                                  "not supported (float32, float16, int32, int64, bool, ")


def test_float64_model_is_computed_in_float32_with_a_warning() -> None:
    import fusec

    with pytest.warns(UserWarning, match=r"^<model>: graph values computed in less precision "
                                         r"than the model's type: 'x' \(float64 in float32\), "
                                         r"'y' \(float64 in float32\)$"):
        exe = fusec.compile(unary_model("Relu", TensorProto.DOUBLE), device="cpu")
    (y,) = exe(x=np.array([-1.5, 2.25]))
    assert y.dtype == np.float64 and y.tolist() == [0.0, 2.25]
    with pytest.raises(InputError) as e:
        exe(x=np.array([1.0, 1e300]))
    assert one_line(e) == ("input 'x' holds values outside the float32 range fusec computes "
                           "float64 in")


def test_bfloat16_inputs_and_outputs_are_ml_dtypes_arrays() -> None:
    """bf16 in and out as ml_dtypes' bfloat16 (the dtype onnx's numpy_helper gives)."""
    import ml_dtypes

    import fusec

    exe = fusec.compile(unary_model("Relu", TensorProto.BFLOAT16), device="cpu")
    (y,) = exe(x=np.array([-1.5, 3.140625], ml_dtypes.bfloat16))
    assert y.dtype == ml_dtypes.bfloat16 and y.astype(np.float32).tolist() == [0.0, 3.140625]


def test_unsigned_input_is_computed_in_int32() -> None:
    """uint8 wraps at the output as ONNX's does; a uint32 above 2**31 - 1 is refused."""
    import fusec

    exe = fusec.compile(unary_model("Add", TensorProto.UINT8), device="cpu")
    (y,) = exe(x=np.array([200, 3], np.uint8))
    assert y.dtype == np.uint8 and y.tolist() == [144, 6]
    exe = fusec.compile(unary_model("Add", TensorProto.UINT32), device="cpu")
    with pytest.raises(InputError) as e:
        exe(x=np.array([2**31, 3], np.uint32))
    assert one_line(e) == ("input 'x' holds values outside the 32-bit range fusec computes "
                           "integers in")


def test_call_errors() -> None:
    import fusec

    exe = fusec.compile(relu_model(), device="cpu")
    with pytest.raises(InputError) as e:
        exe()
    assert one_line(e) == "the model is missing input 'x'"
    with pytest.raises(InputError) as e:
        exe(x=np.zeros((2, 3), np.float32), z=np.zeros(1))
    assert one_line(e) == "the model has no input 'z' (inputs: x)"
    with pytest.raises(InputError) as e:
        exe(x=np.zeros((2, 3), np.float64))
    assert one_line(e) == "input 'x' must be float32, got float64"
    out = exe.run({"x": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)})
    np.testing.assert_array_equal(out["y"], [[0, 2, 0], [4, 0, 6]])


def test_int64_input_out_of_range() -> None:
    import fusec

    g = GraphBuilder()
    ids = g.input("ids", [3], "int64")
    g.result(g.op("Add", ids, g.const(np.int64(1))), "y", [3])
    g.outputs[-1].type.tensor_type.elem_type = TensorProto.INT64
    exe = fusec.compile(g.model(), device="cpu")
    (y,) = exe(ids=np.array([1, -2, 2**31 - 2], np.int64))
    assert y.dtype == np.int64 and y.tolist() == [2, -1, 2**31 - 1]
    with pytest.raises(InputError) as e:
        exe(ids=np.array([0, 2**40, 1], np.int64))
    assert one_line(e) == ("input 'ids' holds values outside the 32-bit range fusec computes "
                           "integers in")


def test_large_int64_constant() -> None:
    g = GraphBuilder()
    x = g.input("x", [3], "int64")
    g.result(g.op("Add", x, g.const(np.array([1, 2**40, 3], np.int64))), "y", [3])
    with pytest.raises(FusecError) as e:
        import_onnx(g.model(), filename="m.onnx")
    assert "integer constant 1099511627776 does not fit in 32 bits" in one_line(e)


def test_initializer_as_weight_argument() -> None:
    """Large initializers are weight arguments (values in `params`), small ones inline."""
    g = GraphBuilder()
    x = g.input("x", [2, 30])
    h = g.op("Add", g.op("MatMul", x, g.weight("big", [30, 30])), g.weight("small", [30]))
    g.result(g.op("Mul", h, g.const(np.float32(3.0))), "y", [2, 30])
    imported = import_onnx(g.model())
    assert sorted(imported.params) == ["big", "small"]
    np.testing.assert_array_equal(imported.params["big"],
                                  numpy_helper.to_array(g.initializers[0]))


def test_compile_path_with_dynamic_shape(tmp_path) -> None:
    """``fusec.compile("model.onnx", shapes=...)``: a path, a dynamic batch fixed, ONNX names."""
    import fusec

    path = tmp_path / "relu.onnx"
    onnx.save(relu_model(["batch", 3]), str(path))
    with pytest.raises(FusecError) as e:
        fusec.compile(str(path), device="cpu")
    assert "has dynamic dimension 'batch'" in one_line(e)
    exe = fusec.compile(str(path), device="cpu", shapes={"x": [4, 3]})
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(exe.run({"x": x})["y"], np.maximum(x, 0))


def test_a_huge_mask_dimension_is_not_traced() -> None:
    """A mask input of 2^40 x 8 (``fusec-fuzz --models`` seed 2030): the attention-mask
    recogniser evaluated the chain's values on identities and ran out of memory (exit 70);
    now it leaves values that large alone, and the model's inputs are refused at the call
    ("inputs need 32.0 TiB")."""
    from pathlib import Path

    path = Path(__file__).parent / "models" / "hf_llama_eager_torchscript_op17.onnx"
    model = onnx.load(str(path))
    mask = next(v for v in model.graph.input if v.name == "attention_mask")
    mask.type.tensor_type.shape.dim[0].dim_value = 2**40
    imported = import_onnx(model, filename="llama.onnx")
    assert [v.shape for v in imported.inputs if v.onnx_name == "attention_mask"] == [
        (2**40, 8)]


@pytest.mark.parametrize("declared,name", [(TensorProto.INT64, "int64"),
                                           (TensorProto.UINT8, "uint8"),
                                           (TensorProto.BOOL, "bool")])
def test_an_output_declared_of_another_type(declared: int, name: str) -> None:
    """A float output declared int64 was returned cast to int64 with exit 0, where ONNX
    Runtime refuses the file (``fusec-fuzz --models`` seeds 2006, 2342, ...)."""
    model = relu_model()
    model.graph.output[0].type.tensor_type.elem_type = declared
    with pytest.raises(FusecError) as e:
        import_onnx(model, filename="m.onnx")
    assert one_line(e) == (f"m.onnx: error: graph output 'y' is declared {name}, but the graph "
                           "computes float32 for it")


def test_a_token_id_out_of_range_names_the_onnx_input() -> None:
    """An id outside the embedding table is an IndexOutOfRangeError of the call (never a
    clamped row), naming the input by its ONNX name (``input.ids:0``, whose IR argument is
    ``input_ids0``), the position and the value; a negative id in range counts from the end."""
    import fusec
    from fusec.errors import IndexOutOfRangeError

    g = GraphBuilder(0)
    ids = g.input("input.ids:0", [1, 3], "int64")
    g.result(g.op("Gather", g.weight("wte", [10, 4]), ids), "emb", [1, 3, 4])
    model = g.model()
    exe = fusec.compile(model)
    table = numpy_helper.to_array(model.graph.initializer[0])
    (emb,) = exe(np.array([[1, -10, 9]], np.int64))
    np.testing.assert_array_equal(emb[0], table[[1, 0, 9]])
    with pytest.raises(IndexOutOfRangeError) as e:
        exe(np.array([[1, 2, 10]], np.int64))
    assert one_line(e) == ("index 10 at position [0, 2] of input 'input.ids:0' is out of range "
                           "for axis 0 of size 10 (valid: -10 to 9)")


def test_gather_with_float_constant_indices() -> None:
    """A Gather whose indices are a float constant was read with the index truncated (exit 0,
    where ONNX Runtime refuses the file; ``fusec-fuzz --models`` seed 5954, a Mul made a
    Gather)."""
    g = GraphBuilder()
    x = g.input("x", [4, 3])
    g.result(g.op("Gather", x, g.const(np.float32(1.5)), name="/g"), "y", [3])
    with pytest.raises(FusecError) as e:
        import_onnx(g.model(), filename="m.onnx")
    assert one_line(e) == "m.onnx: error: node '/g' (Gather): indices must be integers"
