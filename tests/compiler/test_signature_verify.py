"""`SignatureVerifier` verifies an op once per signature and still reports every invalid op as a
full verification does."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import (
    FusecError,
    LocatedParser,
    split_input,
    verify_module,
    verify_op,
)

ROOT = Path(__file__).resolve().parents[2]
INPUTS = sorted([*ROOT.glob("examples/**/*.mlir"), *ROOT.glob("lit_tests/**/*.mlir")], key=str)


def first_error(text: str, memo: bool) -> str:
    """The first verifier error of ``text`` (parsed without verification), or ``ok``."""
    try:
        module = LocatedParser(make_context(), text, "t.mlir").parse_module()
    except Exception:  # input that does not parse: verification is not reached
        return "does not parse"
    try:
        if memo:
            verify_module(module, "t.mlir")
        else:
            for op in module.walk(region_first=True):
                verify_op(op, "t.mlir")
    except FusecError as e:
        return str(e)
    return "ok"


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_errors_as_verifying_every_op(path: Path) -> None:
    for source in split_input(path.read_text(), path.name):
        assert first_error(source.text, True) == first_error(source.text, False)


T = "tensor<4x8xf32>"

def func(body: str, result: str = T) -> str:
    return f"func.func @f(%x: {T}, %s: f32) -> {result} {{\n{body}}}\n"


ROW_REDUCE = (
    f"  %y = fused.row_reduce %x : ({T}) -> {T} {{\n"
    "  ^bb0(%e: f32):\n"
    '    %m = fused.reduce_value %e {kind = "max"} : f32 -> f32\n'
    "    fused.yield %m : f32\n"
    "  }\n"
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # the same signature in a row_reduce body passes, at the function's top level it does not
        (
            func(
                ROW_REDUCE
                + '  %m2 = fused.reduce_value %s {kind = "max"} : f32 -> f32\n'
                + f"  func.return %y : {T}\n"
            ),
            "t.mlir:7:3: error: 'fused.reduce_value' must be in the body of a fused.row_reduce",
        ),
        # an op that passed in the middle of the block does not pass where it ends the block
        (
            func(
                f"  %a = nn.relu %x : {T} -> {T}\n"
                f"  %b = nn.relu %x : {T} -> {T}\n"
            ),
            "t.mlir:3:3: error: 'nn.relu' terminates block in single-block region but is not a "
            "terminator",
        ),
        # so are the properties: axis 1 and -1 pass, axis 2 does not
        (
            func(
                f"  %a = nn.softmax %x {{axis = 1 : i64}} : {T} -> {T}\n"
                f"  %b = nn.softmax %x {{axis = -1 : i64}} : {T} -> {T}\n"
                f"  %c = nn.softmax %x {{axis = 2 : i64}} : {T} -> {T}\n"
                f"  func.return %c : {T}\n"
            ),
            "t.mlir:4:3: error: 'nn.softmax' axis 2 is out of range for an operand of rank 2",
        ),
    ],
)
def test_context_is_part_of_the_signature(text: str, error: str) -> None:
    assert first_error(text, False) == error
    assert first_error(text, True) == error
