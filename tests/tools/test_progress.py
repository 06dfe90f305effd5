"""Progress on stderr: on a terminal, one line rewritten in place once the compile has run
about a second (a long step shown by the timer while it runs) and erased at the end; nothing
when stderr is not a terminal; a line per step with --progress. fusec-run and fusec-import
report their steps as fusec-opt does."""

from __future__ import annotations

import io
import re
import time

import pytest

from fusec.compiler import progress
from fusec.compiler.progress import Progress
from fusec.tools import fusec_run

ERASE = "\r\x1b[K"

PROGRAM = """func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %r = nn.relu %mm : tensor<8x64xf32> -> tensor<8x64xf32>
  func.return %r : tensor<8x64xf32>
}
"""


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_not_a_terminal_is_quiet_unless_forced() -> None:
    assert Progress.for_stream(io.StringIO(), "p", forced=False) is None
    live = Progress.for_stream(Terminal(), "p", forced=False)
    assert live is not None and live.live
    live.done()
    plain = Progress.for_stream(io.StringIO(), "p", forced=True)
    assert plain is not None and not plain.live and plain.delay == 0.0


def test_a_short_compile_on_a_terminal_writes_nothing() -> None:
    stream = Terminal()
    p = Progress(stream, "p", live=True, delay=30.0)
    p.step("parsing")
    p.step("pass 1/1: cse")
    p.done()
    assert stream.getvalue() == ""


def test_a_long_step_is_shown_while_it_runs_then_erased() -> None:
    stream = Terminal()
    p = Progress(stream, "p", live=True, delay=0.05)
    p.step("building the OpenCL program")  # before the delay: not shown yet
    assert stream.getvalue() == ""
    deadline = time.monotonic() + 5
    while not stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)  # the step is still "running": the timer shows it
    shown = stream.getvalue()
    assert shown.startswith(ERASE + "p: [0.") and shown.endswith("] building the OpenCL program")
    p.step("running")
    assert stream.getvalue().endswith("] running") and "\n" not in stream.getvalue()
    p.done()
    assert stream.getvalue().endswith(ERASE)


def test_steps_outside_a_tool_go_nowhere() -> None:
    assert progress.current() is None
    progress.step("nothing listens")  # no error, nothing written


@pytest.fixture
def source(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "model.mlir"
    path.write_text(PROGRAM)
    return str(path)


def run_on_terminal(monkeypatch, capsys, argv: list[str], delay: float,  # type: ignore[no-untyped-def]
                    main=fusec_run.main) -> str:  # type: ignore[no-untyped-def]
    """What the tool wrote to a terminal that is both its stdout and stderr."""
    terminal = Terminal()
    monkeypatch.setattr(progress, "SHOW_AFTER_S", delay)
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr("sys.stdout", terminal)
    assert main(argv) == 0
    return terminal.getvalue()


def test_fusec_run_on_a_terminal_shows_its_steps_and_erases_them(
        monkeypatch, capsys, source) -> None:  # type: ignore[no-untyped-def]
    written = run_on_terminal(monkeypatch, capsys, [source, "--device", "cpu"], delay=0.0)
    # The progress line is erased before the outputs are printed, and nothing is left after.
    assert written.endswith(ERASE + "result0: float32[8, 64]\n"), written[-200:]
    written = written.removesuffix("result0: float32[8, 64]\n")
    steps = [s for s in written.split(ERASE) if s]
    whats = [s.split("] ", 1)[1] for s in steps]
    assert whats[0] == f"parsing {source}"
    assert any(re.fullmatch(r"pass \d+/\d+: fuse-matmul-bias-act", w) for w in whats)
    assert any(w.endswith(": lower-to-kernels") for w in whats)
    assert "building the OpenCL program of @f (1 kernel)" in whats
    assert whats[-1] == "running"
    assert written.endswith(ERASE) and "\n" not in written


def test_fusec_run_on_a_terminal_is_quiet_when_the_compile_is_short(
        monkeypatch, capsys, source) -> None:  # type: ignore[no-untyped-def]
    written = run_on_terminal(monkeypatch, capsys, [source, "--device", "cpu"], delay=60.0)
    assert written == "result0: float32[8, 64]\n"


def test_fusec_import_on_a_terminal_shows_its_steps(monkeypatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from fusec.tools import fusec_import

    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    out = tmp_path / "relu.mlir"
    written = run_on_terminal(monkeypatch, capsys, [str(model), "-o", str(out)], delay=0.0,
                              main=fusec_import.main)
    whats = [s.split("] ", 1)[1] for s in written.split(ERASE) if s]
    assert whats == [f"reading {model}", f"importing {model}", "verifying the imported IR",
                     "printing the IR", f"writing {out}"]
    assert written.endswith(ERASE) and out.exists()
