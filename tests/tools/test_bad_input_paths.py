"""Bad input that once ended in a wrong exit code, a second line or an internal error: an empty
or ``.npy`` inputs file, an ``EOFError`` deep in a tool (click took it for Ctrl-D: "interrupted",
exit 130), negative seeds, an unknown pass given to ``fusec-run``, an unwritable ``fusec-bench
--json-out`` (a traceback: fusec-bench had no `run_cli` around it), an unwritable ``fusec-import
-o`` (named by its temporary file). Each now ends in one line and exit 1 or 2."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np
import pytest

from fusec.tools import fusec_bench, fusec_fuzz, fusec_import, fusec_opt, fusec_run
from fusec.tools.cli import INTERNAL_ERROR, run_cli

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"


def run(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as e:  # fusec-bench's main exits
            code = int(e.code or 0)
    return code, err.getvalue()


def one_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(("content", "says"), [
    (b"", "cannot read inputs: the file is empty"),
    (None, "cannot read inputs: not an .npz archive"),
])
def test_inputs_that_are_no_npz_archive(tmp_path: Path, content: bytes | None, says: str) -> None:
    path = tmp_path / "in.npz"
    if content is None:
        np.save(tmp_path / "in.npy", np.ones((8, 64), np.float32))
        path = tmp_path / "in.npy"
    else:
        path.write_bytes(content)
    code, err = run(fusec_run.main, [str(MLP), "--device", "cpu", "--inputs", str(path)])
    line = one_line(err)
    assert code == 1, err
    assert line.startswith(f"{path}: error: ") and says in line


def test_an_eof_error_in_a_command_is_no_interruption(capsys: pytest.CaptureFixture[str]) -> None:
    @click.command()
    def reads_too_far() -> None:
        raise EOFError("No data left in file")

    code = run_cli(reads_too_far, "tool", [])
    err = capsys.readouterr().err
    assert code == INTERNAL_ERROR
    assert one_line(err) == "tool: internal error: UnexpectedEOF: EOFError: No data left in file"
    assert reads_too_far.callback is not None and reads_too_far.callback.__name__ == "reads_too_far"


@pytest.mark.parametrize(("main", "argv"), [
    (fusec_run.main, [str(MLP), "--device", "cpu", "--random", "-1"]),
    (fusec_fuzz.main, ["--seed", "-1", "--count", "0"]),
    (fusec_bench.main, ["--seed", "-1", "-w", "tiny_elementwise"]),
], ids=["fusec-run --random", "fusec-fuzz --seed", "fusec-bench --seed"])
def test_a_negative_seed_is_a_usage_error(main: Callable[[list[str]], int],
                                          argv: list[str]) -> None:
    code, err = run(main, argv)
    assert code == 2, err
    assert "-1 is not in the range x>=0" in one_line(err)


def test_fusec_run_unknown_pass_names_the_tool() -> None:
    code, err = run(fusec_run.main, [str(MLP), "--device", "cpu", "-p", "no-such-pass"])
    assert code == 2
    assert one_line(err).startswith("fusec-run: error: unknown pass 'no-such-pass' (known: ")


def test_fusec_bench_unwritable_json_out(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "r.json"
    code, err = run(fusec_bench.main, ["-w", "tiny_elementwise", "--peers", "numpy", "--repeat",
                                       "1", "--warmup", "0", "-q", "--json-out", str(out)])
    assert code == 1, err
    assert one_line(err) == f"{out}: error: cannot write output: No such file or directory"


def test_fusec_import_unwritable_output_names_it(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    out = tmp_path / "missing" / "relu.mlir"
    code, err = run(fusec_import.main, [str(model), "-o", str(out)])
    assert code == 1
    assert one_line(err) == f"{out}: error: cannot write output: No such file or directory"


@pytest.mark.parametrize("content", [b"", None], ids=["empty", "npy"])
def test_an_empty_or_npy_weights_file_is_an_input_error(tmp_path: Path,
                                                          content: bytes | None) -> None:
    weights = tmp_path / "relu.params.npz"
    if content is None:
        with open(weights, "wb") as f:
            np.save(f, np.ones(4, np.float32))
    else:
        weights.write_bytes(content)
    program = tmp_path / "relu.mlir"
    program.write_text('builtin.module attributes {fusec.params = "relu.params.npz"} {\n'
                       "  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                       "    %y = nn.relu %x : tensor<4xf32> -> tensor<4xf32>\n"
                       "    func.return %y : tensor<4xf32>\n  }\n}\n")
    code, err = run(fusec_run.main, [str(program), "--device", "cpu"])
    assert code == 1, err
    reason = "the file is empty" if content == b"" else "not an .npz archive"
    assert one_line(err) == (f"{program}: error: cannot read the weights file {weights} named "
                             f"by fusec.params: {reason}")


@pytest.mark.parametrize("option", ["--atol", "--rtol"])
@pytest.mark.parametrize("value", ["-1", "nan"])
def test_a_negative_or_nan_tolerance_is_a_usage_error(option: str, value: str) -> None:
    """It failed every comparison: exit 5, "outputs differ from the reference", as if the
    compiled program were wrong."""
    code, err = run(fusec_run.main, [str(MLP), "--device", "cpu", "--check", option, value])
    assert code == 2, err
    assert f"Invalid value for '{option}': {float(value)} is not a non-negative number" in \
        one_line(err)


def test_fusec_run_writes_its_npz_to_dev_null() -> None:
    """A zip archive is written with seeks; numpy's savez into /dev/null was an internal error
    ("argument out of range", exit 70)."""
    code, err = run(fusec_run.main, [str(MLP), "--device", "cpu", "-o", "/dev/null"])
    assert (code, err) == (0, "")


@pytest.mark.parametrize(("main", "argv", "first", "second"), [
    (fusec_run.main, ["--device", "cpu", "-o", "{out}", "--dot", "{out}"], "-o", "--dot"),
    (fusec_opt.main, ["-o", "{out}", "--fusion-stats-json", "{out}"], "-o",
     "--fusion-stats-json"),
], ids=["fusec-run -o --dot", "fusec-opt -o --fusion-stats-json"])
def test_two_outputs_naming_one_file_are_refused(
        tmp_path: Path, main: Callable[[list[str]], int], argv: list[str], first: str,
        second: str) -> None:
    """Both were written, the second over the first (the outputs lost), exit 0."""
    out = tmp_path / "out"
    code, err = run(main, [str(MLP), *(a.format(out=out) for a in argv)])
    assert code == 1
    assert one_line(err) == (f"{out}: error: {first} and {second} name the same file; one "
                             "output would overwrite the other")
    assert not out.exists()


def test_fusec_import_dot_onto_the_weights_is_refused(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    model = tmp_path / "mm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    weights = tmp_path / "mm.params.npz"
    code, err = run(fusec_import.main, [str(model), "-o", str(tmp_path / "mm.mlir"), "--dot",
                                        str(weights)])
    assert code == 1
    assert one_line(err) == (f"{weights}: error: -o's weights and --dot name the same file; one "
                             "output would overwrite the other")
    assert not weights.exists()


def test_fusec_bench_checks_the_plot_format_before_running(tmp_path: Path) -> None:
    """It was checked after the whole benchmark had run (exit 1, the results lost unless
    --json-out was given)."""
    out = tmp_path / "r.json"
    code, err = run(fusec_bench.main, ["-w", "tiny_elementwise", "--peers", "numpy", "-q",
                                       "--json-out", str(out), "--plot", "chart.jpg"])
    assert code == 2
    assert one_line(err) == ("fusec-bench: error: chart.jpg: --plot writes .svg or .png, not "
                             "'.jpg' (see 'fusec-bench --help')")
    assert not out.exists()  # nothing ran


@pytest.mark.parametrize(("tool", "argv", "stage"), [
    ("fusec_run", [str(MLP), "--device", "cpu", "-o", "{missing}"],
     "fusec.runtime.device.select_device"),
    ("fusec_bench", ["-w", "tiny_elementwise", "--peers", "numpy", "-q", "--json-out",
                     "{missing}"], "fusec.tools.fusec_bench.run_suite"),
    ("fusec_calibrate", ["--quick", "--json", "{missing}"],
     "fusec.tools.fusec_calibrate.calibrate"),
], ids=["fusec-run -o", "fusec-bench --json-out", "fusec-calibrate --json"])
def test_an_unwritable_output_fails_before_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, argv: list[str],
        stage: str) -> None:
    """The output was written only after the run (a benchmark or a calibration: minutes), then
    failed; now it is checked first: the run's first stage is never reached."""
    import importlib

    def reached(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"{stage} was reached")

    monkeypatch.setattr(stage, reached)
    missing = tmp_path / "missing" / "out"
    main = importlib.import_module(f"fusec.tools.{tool}").main
    code, err = run(main, [a.format(missing=missing) for a in argv])
    assert code == 1, err
    assert one_line(err) == f"{missing}: error: cannot write output: No such file or directory"


@pytest.mark.parametrize(("element", "name"), [(17, "element type 17"), (8, "string")])
def test_fusec_import_names_an_unsupported_element_type(tmp_path: Path, element: int,
                                                        name: str) -> None:
    """It said 'element type 16'."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    x = helper.make_tensor_value_info("x", element, [2])
    y = helper.make_tensor_value_info("y", element, [2])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    code, err = run(fusec_import.main, [str(model)])
    assert code == 1
    assert one_line(err) == (f"{model}: error: graph input 'x' is {name}, which is not "
                             "supported (float32, float16, int32, int64, bool, int8, int16, "
                             "uint8, uint16, uint32, uint64, float64, bfloat16 are)")


def test_an_output_that_is_a_folder_fails_before_the_run(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`check_writable`'s other refusal: a folder where the output file would go."""
    def reached(*args: object, **kwargs: object) -> None:
        raise AssertionError("select_device was reached")

    monkeypatch.setattr("fusec.runtime.device.select_device", reached)
    code, err = run(fusec_run.main, [str(MLP), "--device", "cpu", "-o", str(tmp_path)])
    assert code == 1, err
    assert one_line(err) == f"{tmp_path}: error: cannot write output: Is a directory"
