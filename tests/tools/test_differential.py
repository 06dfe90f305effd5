"""``fusec-run --verify-fusion`` and ``--bisect`` find a planted miscompile.

The planted pass (tests/tools/planted/drop_negation.py) drops an ``nn.neg``, a wrong rewrite
counted like a fusion. In a pipeline of three rewrites (a correct bias fusion #0, the planted
#1, a correct residual norm #2), bisection must name #1 at the neg's location; verification
must report that fused and unfused outputs differ; the same pipeline without it is clean.
"""

# ruff: noqa: E501 - IR text is written one op per line

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fusec.compiler import pipeline as pipeline_module
from fusec.tools.fusec_run import main

PLANTED = Path(__file__).parent / "planted" / "drop_negation.py"

PROGRAM = """\
func.func @f(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %g: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %h = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %n = nn.neg %h : tensor<4x16xf32> -> tensor<4x16xf32>
  %r = nn.add %n, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.layer_norm %r, %g, %beta : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
"""

WRONG = "fuse-matmul-bias-act,planted-drop-negation,fuse-residual-layer-norm"
RIGHT = "fuse-matmul-bias-act,fuse-residual-layer-norm"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("planted_drop_negation", PLANTED)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    known = pipeline_module.get_all_passes

    def with_planted():  # type: ignore[no-untyped-def]
        return {**known(), "planted-drop-negation": lambda: module.DropNegationPass}

    monkeypatch.setattr(pipeline_module, "get_all_passes", with_planted)


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "model.mlir"
    path.write_text(PROGRAM)
    return str(path)


def test_bisect_names_the_planted_rewrite(planted, program, capsys) -> None:
    code = main([program, "--bisect", "--device", "cpu", "-p", WRONG])
    out = capsys.readouterr().out
    assert code == 5, out
    assert out.startswith(f"{program}:4:3: error: bisect: the outputs differ from the reference "
                          "after rewrite #1 of 3 ([planted-drop-negation] nn.neg dropped"), out


def test_bisect_without_the_planted_pass_finds_nothing(planted, program, capsys) -> None:
    assert main([program, "--bisect", "--device", "cpu", "-p", RIGHT]) == 0
    out = capsys.readouterr().out
    assert out == "bisect: none of the 2 fusion rewrites changes the outputs beyond tolerance\n"


def test_verify_fusion_reports_the_difference(planted, program, capsys) -> None:
    code = main([program, "--verify-fusion", "--device", "cpu", "-p", WRONG])
    captured = capsys.readouterr()
    assert code == 5
    lines = captured.out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "random", "large", "ties", "signed-zeros", "subnormals"
    ]
    assert all(line.endswith(": DIFFERS") for line in lines), lines
    assert "--verify-fusion: fused and unfused outputs differ" in captured.err


def test_verify_fusion_passes_a_correct_pipeline(program, capsys) -> None:
    assert main([program, "--verify-fusion", "--device", "cpu", "-p", "default"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and all(line.endswith(": ok") for line in lines), lines


def test_bisect_rejects_inputs_file(program, capsys) -> None:
    assert main([program, "--bisect", "--inputs", "x.npz"]) == 2
    assert "--verify-fusion and --bisect take an .mlir file" in capsys.readouterr().err
