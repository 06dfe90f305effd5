"""`bench/import_matrix_gpu.py`, the real-width import check for the GPU machine, run here at the
test matrix's width on the test device: a file is exported once, imported, run and compared
with ONNX Runtime in a process of its own; one that runs out of time is its row and the others
go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusec.bench import import_matrix_gpu
from fusec.bench.import_matrix_gpu import exports, main


def test_the_files_are_three_kinds_by_both_exporters_and_one_f16() -> None:
    names = [spec.name for spec in exports()]
    assert len(names) == 7 and len(set(names)) == 7
    for kind in ("bert", "gpt2", "llama"):
        assert f"hf_{kind}_sdpa_torchscript_op17.onnx" in names
        assert f"hf_{kind}_sdpa_dynamo_op18.onnx" in names
    assert "hf_llama_sdpa_torchscript_op17_f16.onnx" in names


def test_a_file_out_of_time_is_its_row_and_the_rest_go_on(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    runs: list[str] = []
    real_run = import_matrix_gpu.subprocess.run

    def run(command, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(command[-1])
        return real_run(command, **kwargs)

    monkeypatch.setattr(import_matrix_gpu.subprocess, "run", run)
    status = main([str(tmp_path), "--device", "cpu", "--width", "tiny", "--timeout", "0.01",
                   "--only", "gpt2", "--only", "f16"])
    rows = capsys.readouterr().out.splitlines()
    assert status == 1
    assert runs == ["hf_gpt2_sdpa_torchscript_op17.onnx", "hf_gpt2_sdpa_dynamo_op18.onnx",
                    "hf_llama_sdpa_torchscript_op17_f16.onnx"]
    assert [row.split()[0] for row in rows] == runs
    assert all("timed out after 0 s" in row for row in rows)
    assert not list(tmp_path.glob("*.onnx"))  # nothing half-written under a file's name


def test_a_tiny_export_imports_runs_and_matches(tmp_path: Path, capsys) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("onnxruntime")
    status = main([str(tmp_path), "--device", "cpu", "--width", "tiny",
                   "--only", "gpt2_sdpa_torchscript"])
    (row,) = capsys.readouterr().out.splitlines()
    assert status == 0, row
    assert row.startswith("hf_gpt2_sdpa_torchscript_op17.onnx") and " ok " in row
    assert "softmax left 0" in row and "launches/layer  8.5" in row
    assert (tmp_path / "hf_gpt2_sdpa_torchscript_op17.onnx").exists()
