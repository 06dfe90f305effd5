"""fusec-import and fusec-run on ONNX models, as programs: files written (atomically, the
weights beside the IR and named by it), exit codes, one-line errors, nothing half-written."""

from __future__ import annotations

import os

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from fusec.bench.export_models import GraphBuilder, bert_layer  # noqa: E402
from fusec.tools.fusec_import import cli  # noqa: E402
from fusec.tools.fusec_import import main as import_main  # noqa: E402
from fusec.tools.fusec_run import main as run_main  # noqa: E402


def run(capsys: pytest.CaptureFixture[str], main, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_mlp(path: Path) -> Path:
    g = GraphBuilder(3)
    x = g.input("input.1", [2, 24])
    g.result(g.op("Relu", g.linear(x, "fc", 24, 24)), "out", [2, 24])
    onnx.save(g.model(), str(path))
    return path


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, import_main, "--help")
    assert code == 0
    for param in cli.params:
        for flag in getattr(param, "opts", []):
            if flag.startswith("-"):
                assert flag in out
    assert "Exit codes: 0 success, 1 bad input" in out


def test_import_writes_ir_and_weights(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    model = write_mlp(tmp_path / "mlp.onnx")
    out = tmp_path / "mlp.mlir"
    code, stdout, err = run(capsys, import_main, str(model), "-o", str(out))
    assert (code, stdout, err) == (0, "", "")
    text = out.read_text()
    assert 'fusec.params = "mlp.params.npz"' in text
    assert "func.func @main(%input1: tensor<2x24xf32>, %fc_weight: tensor<24x24xf32>" in text
    with np.load(tmp_path / "mlp.params.npz") as weights:
        assert sorted(weights.files) == ["fc_bias", "fc_weight"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.mlir", "mlp.onnx",
                                                          "mlp.params.npz"]
    # fusec-run binds the weights named by the IR, and checks against the reference
    code, stdout, err = run(capsys, run_main, str(out), "--device", "cpu", "--check")
    assert code == 0, err
    assert "result0: max abs error" in stdout and stdout.rstrip().endswith("ok")


def test_run_onnx_with_onnx_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ort = pytest.importorskip("onnxruntime")
    model = bert_layer(batch=1, seq=8, width=32, heads=2, ffn=64)
    path = tmp_path / "bert.onnx"
    onnx.save(model, str(path))
    rng = np.random.default_rng(0)
    feeds = {"hidden_states": rng.standard_normal((1, 8, 32)).astype(np.float32),
             "attention_mask": np.array([[1, 1, 1, 1, 1, 0, 0, 0]], np.int64)}
    np.savez(tmp_path / "in.npz", **feeds)
    code, _, err = run(capsys, run_main, str(path), "--inputs", str(tmp_path / "in.npz"),
                       "-o", str(tmp_path / "out.npz"), "--device", "cpu", "--check")
    assert code == 0, err
    expected = ort.InferenceSession(str(path)).run(None, feeds)[0]
    with np.load(tmp_path / "out.npz") as out:
        assert out.files == ["last_hidden_state"]
        np.testing.assert_allclose(out["last_hidden_state"], expected, atol=1e-4, rtol=1e-3)


def test_stdout_needs_inline_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write_mlp(tmp_path / "mlp.onnx")
    code, out, err = run(capsys, import_main, str(model))
    assert code == 1 and out == ""
    assert err == (f"{model}: error: the model has 2 weights to write beside the IR; give -o "
                   "OUT.mlir (or --inline-weights)\n")
    code, out, err = run(capsys, import_main, str(model), "--inline-weights")
    assert code == 0 and err == "" and "fusec.params" not in out and "nn.matmul" in out


def test_never_overwrites_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write_mlp(tmp_path / "mlp.onnx")
    before = model.read_bytes()
    code, _, err = run(capsys, import_main, str(model), "-o", str(model))
    assert code == 1 and "the output is an input of this run" in err and err.count("\n") == 1
    assert model.read_bytes() == before
    hard = tmp_path / "hard.mlir"
    os.link(model, hard)  # the same file under another name
    code, _, err = run(capsys, import_main, str(model), "-o", str(hard))
    assert code == 1 and "the output is an input of this run" in err
    assert model.read_bytes() == before


def test_unsupported_op_leaves_no_output(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    g = GraphBuilder()
    x = g.input("x", [4])
    g.result(g.op("Round", g.op("Relu", x), name="/head/Round"), "y", [4])
    path = tmp_path / "m.onnx"
    onnx.save(g.model(), str(path))
    out = tmp_path / "m.mlir"
    out.write_text("previous contents\n")
    code, stdout, err = run(capsys, import_main, str(path), "-o", str(out))
    assert code == 1 and stdout == ""
    assert err == f"{path}: error: node '/head/Round' (Round): not supported\n"
    assert out.read_text() == "previous contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlir", "m.onnx"]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--shape", "x"], 2, "Invalid value for --shape: 'x' is not NAME=DIMS"),
        (["--shape", "x=2x24", "--shape", "x=2x24"], 2, "'x' is given twice"),
        (["--shape", "input.1=3x24"], 1, "dimension 3 differs from the model's fixed 2"),
        (["--bogus"], 2, "No such option '--bogus'"),
    ],
)
def test_command_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             argv: list[str], code: int, message: str) -> None:
    model = write_mlp(tmp_path / "mlp.onnx")
    got, out, err = run(capsys, import_main, str(model), *argv)
    assert got == code and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_corrupt_model_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"not a protobuf at all \xff\xfe")
    for main in (import_main, run_main):
        code, out, err = run(capsys, main, str(path))
        assert code == 1 and out == ""
        assert err.startswith(f"{path}: error: ") and err.count("\n") == 1


def test_dot_beside_the_ir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pydot = pytest.importorskip("pydot")
    model = write_mlp(tmp_path / "mlp.onnx")
    dot = tmp_path / "mlp.dot"
    code, stdout, err = run(capsys, import_main, str(model), "-o", str(tmp_path / "mlp.mlir"),
                            "--dot", str(dot))
    assert (code, stdout, err) == (0, "", "")
    (graph,) = pydot.graph_from_dot_data(dot.read_text())
    ops = [n.get_label().strip('"').split("\\n")[0] for n in graph.get_nodes() if n.get_label()]
    assert ops == ["%input1", "%fc_weight", "%fc_bias", "nn.matmul", "nn.add", "nn.relu",
                   "return"]
    # never the model itself; /dev/null stays a device
    code, _, err = run(capsys, import_main, str(model), "--inline-weights", "--dot", str(model))
    assert code == 1 and "the output is an input" in err
    code, _, err = run(capsys, import_main, str(model), "--inline-weights", "--dot", os.devnull)
    assert code == 0, err
    assert not Path(os.devnull).is_file()


def test_outputs_to_dev_null_stay_devices(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    model = write_mlp(tmp_path / "mlp.onnx")
    code, _, err = run(capsys, import_main, str(model), "--inline-weights", "-o", os.devnull)
    assert code == 0, err
    assert not Path(os.devnull).is_file()
