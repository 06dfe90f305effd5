"""The imported-model rows of fusec-bench: checked against ONNX Runtime before timing, and a
wrong answer is reported as such (no speed is asserted here)."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from fusec.bench import imported  # noqa: E402
from fusec.bench.export_models import bert_layer  # noqa: E402
from fusec.bench.harness import Settings  # noqa: E402
from fusec.bench.suite import plan  # noqa: E402

SMALL = Settings(device="cpu", repeat=1, warmup=0)


def test_small_bert_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(imported.MODELS, "onnx_bert_b1",
                        ("small", lambda: bert_layer(1, 8, 32, 2, 64)))
    summary = imported.run_imported("onnx_bert_b1", SMALL)
    assert summary["status"] == "ok", summary
    assert summary["fusec_ms"] > 0 and summary["onnxruntime_ms"] > 0
    assert summary["ratio"] == summary["fusec_ms"] / summary["onnxruntime_ms"]
    (line,) = imported.imported_lines(summary)
    assert line.startswith("onnx_bert_b1: small: fusec ") and "fusec/onnxruntime" in line


def test_wrong_answer_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(imported.MODELS, "onnx_bert_b1",
                        ("small", lambda: bert_layer(1, 8, 32, 2, 64)))
    monkeypatch.setattr(imported, "ATOL", -1.0)  # nothing can be that close
    summary = imported.run_imported("onnx_bert_b1", SMALL)
    assert summary["status"] == "wrong" and "differs from onnxruntime" in summary["reason"]


def test_imported_rows_only_when_named() -> None:
    assert "onnx_bert_b1" not in plan([], "cpu").specials
    assert plan(["onnx_bert_b1"], "cpu").specials == ["onnx_bert_b1"]
