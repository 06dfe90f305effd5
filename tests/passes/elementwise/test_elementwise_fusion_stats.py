"""The fusion report's numbers, from the tensor types: element sizes (f16 2 bytes, i1 1 byte),
constants not counted as kernels, and the JSON written by ``fusec-opt --fusion-stats-json``."""

from __future__ import annotations

import json

from fusec.compiler.fusion_stats import Counts, FusionReport, count
from fusec.tools.fusec_opt import main

PROGRAM = """
func.func @f(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %k = nn.constant {value = dense<2.000000e+00> : tensor<f16>} : tensor<f16>
  %0 = nn.cmp %a, %b {predicate = "lt"} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xi1>
  %1 = nn.mul %a, %k : tensor<4x8xf16>, tensor<f16> -> tensor<4x8xf16>
  %2 = nn.where %0, %1, %b : tensor<4x8xi1>, tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  func.return %2 : tensor<4x8xf16>
}
"""


def test_counts_from_tensor_types(compile_ir):
    before = count(compile_ir(PROGRAM, ""))
    # cmp writes 32 x i1 (32 bytes), mul and where 32 x f16 (64 bytes each); the constant is data
    assert before == Counts(ops=4, regions=0, kernels=3, bytes_written=32 + 64 + 64)
    after = count(compile_ir(PROGRAM, "fuse-elementwise"))
    assert after == Counts(ops=1, regions=1, kernels=1, bytes_written=64)
    report = FusionReport("p", before, after)
    assert (report.launches_avoided, report.bytes_saved) == (2, 96)


def test_json_file(tmp_path, capsys):
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    out = tmp_path / "stats.json"
    assert main([str(src), "-p", "fuse-elementwise", "--fusion-stats-json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["total"]["launches_avoided"] == 2
    assert doc["total"]["bytes_saved"] == 96
    assert [c["after"]["regions"] for c in doc["chunks"]] == [1]
    captured = capsys.readouterr()
    assert "fusion stats" not in captured.out + captured.err  # JSON only: no text report


def test_text_on_stderr_only(tmp_path, capsys):
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    assert main([str(src), "-p", "fuse-elementwise", "--fusion-stats"]) == 0
    captured = capsys.readouterr()
    assert "fused.elementwise" in captured.out and "fusion stats" not in captured.out
    assert "(2 avoided)" in captured.err
    assert "(96 intermediate bytes no longer written)" in captured.err
