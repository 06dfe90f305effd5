"""The malformed-input corpus (``malformed/``): every file through every tool that reads it
(``fusec-opt -p default``, ``fusec-opt -t opencl``, ``fusec-run`` for IR; ``fusec-import``,
``fusec-run`` for ONNX models) ends in exit 1 and one line on stderr that names the file and
says what is wrong (the substring below), never a traceback, an internal error or a hang."""

from __future__ import annotations

import contextlib
import io
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from fusec.tools import fusec_import, fusec_opt, fusec_run

CORPUS = Path(__file__).parent / "malformed"

EXPECTED = {
    "truncated.mlir": "is not registered",
    "wrong-element-type.mlir": "'nn.add' rhs (tensor<4xi32>) must have the element type of lhs",
    "huge-dims.mlir": "has 1e+22 elements; fusec indexes at most 2^48",
    "dim-overflow.mlir": "fusec indexes at most 2^48",
    "negative-dim.mlir": "Expected shape type",
    "dynamic-dim.mlir": "fusec needs static shapes",
    "deep-dense.mlir": "input nested too deeply to parse",
    "deep-regions.mlir": "input nested too deeply to parse",
    "deep-types.mlir": "input nested too deeply to parse",
    "use-before-def.mlir": "'nn.relu' operand #0 (%a) is used before it is defined",
    "unknown-op.mlir": "unknown operation 'nn.frobnicate'",
    "huge-axis.mlir": "out of range for type i64",
    "wrong-return.mlir": "Expected arguments to have the same types as the function output",
    "unterminated-string.mlir": "closing string literal",
    "non-utf8.mlir": "is not UTF-8 text",
    "nul-bytes.mlir": "Unexpected character: \\x00",
    "real-for-complex-dense.mlir": "2:68: error: malformed input here",  # fuzz mutant 1457
    "hex-literal-overflow.mlir": "error: a number here is out of range for its type",
    # fuzz mutant 96: xDSL built its values' bounds as 2^32-bit integers, for seconds
    "huge-integer-width.mlir": "2:50: error: integer type i4294967296 is wider than 16777215 bits",
    # fuzz mutant 102535: xDSL divided by the element size of an array<i0: ...>
    "zero-width-integer.mlir": "2:39: error: integer type i0 has no bits",
    # fuzz mutant 505064: xDSL's ValueError for an integer outside its type
    "int-literal-out-of-range.mlir": "2:68: error: a number before here is out of range for "
                                     "its type (Integer value 99999999999 is out of range",
    # fuzz mutant 339001: xDSL has no struct format to pack i632 values with
    "odd-width-constant.mlir": "2:54: error: a constant before here has values fusec cannot "
                               "store (Format not implemented for i632)",
    # fuzz mutant 100311: xDSL spelled the splat out element by element, out of memory
    "huge-splat.mlir": "2:42: error: a dense constant of 4499999999955 elements; fusec reads "
                       "at most 268435456",
    "empty.onnx": "not an ONNX model",
    "random-bytes.onnx": "not an ONNX model",
    "text.onnx": "not an ONNX model",
    "truncated.onnx": "not an ONNX model",
    "cycle.onnx": "topologically sorted",
    "undefined-input.onnx": "topologically sorted",
    "unknown-op.onnx": "No Op registered for Frobnicate",
    "huge-dims.onnx": "fusec indexes at most 2^48",
}

Tool = Callable[[list[str]], int]
TOOLS: dict[str, list[tuple[str, Tool, tuple[str, ...]]]] = {
    ".mlir": [("fusec-opt -p default", fusec_opt.main, ("-p", "default")),
              ("fusec-opt -t opencl", fusec_opt.main, ("-t", "opencl")),
              ("fusec-run", fusec_run.main, ("--device", "cpu"))],
    ".onnx": [("fusec-import", fusec_import.main, ()),
              ("fusec-run", fusec_run.main, ("--device", "cpu"))],
}


class Hang(BaseException):
    pass


def run(tool: Tool, argv: list[str], seconds: int = 60) -> tuple[int, str]:
    def alarm(signum: int, frame: object) -> None:
        raise Hang

    err = io.StringIO()
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = tool(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


def test_every_file_has_an_expectation() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_tool_gives_one_line(name: str) -> None:
    path = CORPUS / name
    for label, tool, args in TOOLS[path.suffix]:
        code, err = run(tool, [str(path), *args])
        lines = err.strip().splitlines()
        assert code == 1, f"{label}: exit {code}: {err}"
        assert len(lines) == 1, f"{label}: {err}"
        assert "Traceback" not in err and "internal error" not in err, f"{label}: {err}"
        assert str(path) in lines[0] and EXPECTED[name] in lines[0], f"{label}: {lines[0]}"
