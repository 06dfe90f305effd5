"""``fusec-calibrate`` and the offload options of ``fusec-run``, as programs: the cache they
write and read (under ``XDG_CACHE_HOME``), the report as JSON and as a table, and their errors
(one line, the documented exit code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusec.placement.calibration import CALIBRATION_VERSION
from fusec.tools import fusec_calibrate, fusec_run

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.mlir")


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def run(capsys: pytest.CaptureFixture[str], main, *argv: str) -> tuple[int, str, str]:  # noqa: ANN001
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, fusec_calibrate.main, "--help")
    assert code == 0 and "--refresh" in out and "--quick" in out


def test_calibrate_writes_then_reuses_then_refreshes(
        capsys: pytest.CaptureFixture[str], cache_home: Path, tmp_path: Path) -> None:
    code, out, err = run(capsys, fusec_calibrate.main, "--quick", "--json",
                         str(tmp_path / "s.json"))
    assert code == 0, err
    (cache,) = (cache_home / "fusec" / "offload").glob("*.json")
    assert f"calibrated: {cache}" in out and "measuring host" in err
    assert "placement needs a CPU and a GPU device" in out
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["devices"]["host"]["base_source"] == "calibrated"
    stamp = json.loads(cache.read_text())["recorded_at"]

    code, out, err = run(capsys, fusec_calibrate.main, "--quick")
    assert code == 0 and f"loaded-from-cache: {cache}" in out and "measuring" not in err

    cache.write_text("{ corrupt")
    code, out, err = run(capsys, fusec_calibrate.main, "--quick")
    assert code == 0 and "warning:" in err and "corrupt calibration cache" in err
    assert "calibrated:" in out and json.loads(cache.read_text())["version"] == CALIBRATION_VERSION

    code, out, err = run(capsys, fusec_calibrate.main, "--quick", "--refresh")
    assert code == 0 and "calibrated:" in out
    assert json.loads(cache.read_text())["recorded_at"] >= stamp


def test_run_writes_the_report_as_json(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    report = tmp_path / "offload.json"
    code, out, err = run(capsys, fusec_run.main, MLP, "--check", "--offload-report",
                         str(report), "--offload-threshold", "small_batch_max_dim=4")
    assert code == 0, err
    data = json.loads(report.read_text())
    for key in ("thresholds", "base_source", "cache_path", "calibrate_duration_ms",
                "calibration", "decisions"):
        assert key in data
    assert data["base_source"] == "built-in-default" and data["cache_path"] is None
    assert data["thresholds"]["small_batch_max_dim"] == 4
    assert data["overrides"] == {"small_batch_max_dim": "4"}
    assert "one OpenCL device" in data["note"]
    assert [d["kernel"] for d in data["decisions"]] == [
        "fused.matmul_bias_act %act", "fused.matmul_bias_act %fc2",
        "fused.residual_layer_norm %y"]
    for d in data["decisions"]:
        assert d["decision"] == "cpu" and d["reason"] == "disabled"
        assert set(d) >= {"kernel", "elements", "flops", "batch", "decision", "reason",
                          "cpu_estimate_ms", "gpu_estimate_ms"}


def test_run_prints_the_report_as_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, fusec_run.main, MLP, "--offload-report", "-")
    assert code == 0 and "result0: float32[8, 64]" in out
    assert "offload: thresholds from built-in-default" in err
    assert "fused.residual_layer_norm %y" in err and "disabled" in err


@pytest.mark.parametrize("argv, message", [
    (["--offload-threshold", "nope=1"], "unknown offload threshold 'nope'"),
    (["--offload-threshold", "binary_min_elems=lots"], "must be an integer"),
    (["--offload-threshold", "binary_min_elems"], "is not NAME=VALUE"),
    (["--device", "cpu", "--offload-report", "-"], "need --device auto"),
])
def test_run_bad_offload_options(capsys: pytest.CaptureFixture[str], argv: list[str],
                                 message: str) -> None:
    code, out, err = run(capsys, fusec_run.main, MLP, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


def test_run_report_to_an_unwritable_place(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    target = tmp_path / "missing" / "r.json"
    code, _, err = run(capsys, fusec_run.main, MLP, "--offload-report", str(target))
    assert code == 1 and "r.json: error: cannot write output" in err
    assert not target.parent.exists()
