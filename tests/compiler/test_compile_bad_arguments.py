"""`fusec.compile` given what it cannot compile: a source of the wrong type is a TypeError that
says what it takes (was ``object of type 'NoneType' has no len()`` from the parser), and a function
declaration (no body) is a located `FusecError` (was xDSL's ValueError about single-block
regions from inside lower-to-kernels: exit 70 in fusec-opt and fusec-run)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

import fusec
from fusec.compiler.diagnostics import FusecError
from fusec.tools import fusec_opt

DECLARATION = "func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32>\n"
CALLS_A_DECLARATION = """func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


@pytest.mark.parametrize("source", [None, 3, b"func.func @f() {}", Path("model.mlir")],
                         ids=["None", "int", "bytes", "Path"])
def test_a_source_of_the_wrong_type_says_what_compile_takes(source: object) -> None:
    with pytest.raises(TypeError, match=r"^fusec.compile takes IR text \(a str\), a ModuleOp, an "
                                        r"onnx.ModelProto or the path of a .onnx file; got "):
        fusec.compile(source, device="cpu")


@pytest.mark.parametrize(("source", "name"), [(DECLARATION, "f"), (CALLS_A_DECLARATION, "g")])
def test_a_declaration_is_a_located_error(source: str, name: str) -> None:
    with pytest.raises(FusecError) as raised:
        fusec.compile(source, function="f", device="cpu", filename="decl.mlir")
    assert str(raised.value) == (f"decl.mlir:1:1: error: lower-to-kernels: cannot lower @{name}: "
                                 "it is a declaration (no body)")


def test_fusec_opt_lowering_a_declaration_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "decl.mlir"
    path.write_text(DECLARATION)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = fusec_opt.main([str(path), "-t", "opencl"])
    assert code == 1
    assert err.getvalue().splitlines() == [
        f"{path}:1:1: error: lower-to-kernels: cannot lower @f: it is a declaration (no body)"]


def test_bisecting_a_declaration_exits_1(tmp_path: Path) -> None:
    """``fusec-run --bisect`` draws its inputs from the reference, which read the body's
    arguments first: xDSL's ValueError, exit 70."""
    from fusec.tools import fusec_run

    path = tmp_path / "decl.mlir"
    path.write_text(DECLARATION)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = fusec_run.main([str(path), "--device", "cpu", "--bisect"])
    assert code == 1
    assert err.getvalue().splitlines() == [
        "fusec-run: error: @f is a declaration (no body): nothing to run"]
