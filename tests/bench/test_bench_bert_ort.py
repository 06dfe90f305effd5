"""`python -m fusec.bench.bert_ort` on a tiny BERT on the CPU: every runner is made, checked
against eager and timed, the JSON says so (no timing is asserted); without its peers it skips
with one line and exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusec.bench import bert_ort


def test_skips_without_its_peers(monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bert_ort, "missing_modules", lambda: ["onnxruntime"])
    assert bert_ort.main([]) == 0
    assert capsys.readouterr().out == ("bert_ort: skipped: onnxruntime not installed "
                                       "(pip install -e '.[bench]')\n")


def test_tiny_bert_every_runner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in bert_ort.NEEDS:
        pytest.importorskip(name)
    out = tmp_path / "bert.json"
    assert bert_ort.main(["--size", "tiny", "--layers", "2", "--seq", "16", "--repeat", "2",
                          "--warmup", "1", "--knob-off", "attention_cpu_vectors", "--profile",
                          "--json-out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "fusec_onnx/onnxruntime" in text and "load average" in text
    result = json.loads(out.read_text())
    assert result["failed"] == {} and result["wrong"] == {}
    (round_,) = result["rounds"]
    assert set(round_["medians_ms"]) == {"fusec_onnx", "fusec_torch", "onnxruntime", "eager",
                                         "fusec_onnx-attention_cpu_vectors"}
    assert all(d <= 1e-4 for d in result["max_difference"].values())
    kernels = {k["kernel"] for k in result["kernels"]}
    assert any("attention" in k for k in kernels) and any("gemm" in k for k in kernels)


def test_an_unknown_runner_is_one_line() -> None:
    for name in bert_ort.NEEDS:
        pytest.importorskip(name)
    with pytest.raises(SystemExit, match=r"^bert_ort: unknown runner\(s\) nope \(known: "):
        bert_ort.main(["--size", "tiny", "--layers", "1", "--runners", "nope"])
