"""Smoke test of fusec-bench: one tiny workload, numpy as the only peer, JSON out."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from fusec.bench.graph import parse
from fusec.bench.harness import WRONG, Settings, check, run_workload
from fusec.bench.peers import NumpyPeer
from fusec.bench.workloads import tiny_workloads
from fusec.tools.fusec_bench import cli


def run_cli(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, [*args, "--json", "--quiet"])
    return result.exit_code, (json.loads(result.stdout) if result.stdout.strip() else {})


def test_json_shape_of_one_tiny_workload():
    code, doc = run_cli("-w", "tiny_elementwise", "--peers", "numpy", "--repeat", "2",
                        "--warmup", "0")
    assert code == 0, doc
    assert doc["device"] == "cpu" and doc["peers"] == ["numpy"]
    (row,) = doc["workloads"]
    assert row["name"] == "tiny_elementwise"
    assert row["bytes"] == 4 * 4096 * 4 and row["flops"] == 0
    numpy_result = row["results"]["numpy"]
    assert numpy_result["status"] == "ok"
    assert numpy_result["relative_error"] < 1e-6
    assert len(numpy_result["samples_ms"]) >= 2
    assert numpy_result["median_ms"] > 0
    fusec = row["results"]["fusec"]
    assert fusec["status"] in ("ok", "n/a")  # n/a only where fusec.compile cannot run
    if fusec["status"] == "ok":
        assert row["ratios"]["numpy"] == pytest.approx(
            fusec["median_ms"] / numpy_result["median_ms"])
        assert row["fusec_rate"]["unit"] == "GB/s"


def test_unknown_workload_is_a_usage_error():
    result = CliRunner().invoke(cli, ["-w", "no_such_workload"])
    assert result.exit_code == 2
    assert "unknown workload 'no_such_workload'" in result.output


def test_a_wrong_answer_is_caught_before_timing():
    """A peer whose outputs disagree with the reference is marked wrong and never timed."""

    class BrokenNumpy(NumpyPeer):
        name = "broken"

        def prepare(self, graph, inputs, device):  # type: ignore[no-untyped-def]
            prepared = super().prepare(graph, inputs, device)
            good = prepared.outputs
            prepared.outputs = lambda: [o + np.float32(1e-2) for o in good()]
            return prepared

    (workload,) = [w for w in tiny_workloads() if w.name == "tiny_elementwise"]
    result = run_workload(workload, [BrokenNumpy()], Settings(repeat=1, warmup=0),
                          with_fusec=False)
    (broken,) = result.runners
    assert broken.status == WRONG and broken.wall is None


def test_translations_agree_with_the_reference_on_a_bert_layer():
    (workload,) = [w for w in tiny_workloads() if w.name == "tiny_bert"]
    result = run_workload(workload, [NumpyPeer()], Settings(repeat=1, warmup=0),
                          with_fusec=False)
    (numpy_result,) = result.runners
    assert numpy_result.status == "ok", numpy_result.reason
    graph = parse(workload.text)
    assert graph.flops() > 0


def test_check_rejects_nan_and_shape_mismatch():
    ref = [np.ones((2, 3), np.float32)]
    assert check([np.ones((2, 3), np.float32)], ref) == 0.0
    assert check([np.full((2, 3), np.nan, np.float32)], ref) == float("inf")
    assert check([np.ones((3, 2), np.float32)], ref) == float("inf")


def test_fusec_with_device_arrays():
    """--fusec-arrays device: inputs made device arrays once, outputs checked after reading
    them back; the default on the CPU stays numpy."""
    code, doc = run_cli("-w", "tiny_elementwise", "--peers", "numpy", "--repeat", "2",
                        "--warmup", "0", "--fusec-arrays", "device")
    assert code == 0, doc
    assert doc["fusec_arrays"] == "device"
    fusec = doc["workloads"][0]["results"]["fusec"]
    assert fusec["status"] == "ok" and fusec["relative_error"] < 1e-6
    assert fusec["arrays"] == "device"
    code, doc = run_cli("-w", "tiny_elementwise", "--peers", "numpy", "--repeat", "1",
                        "--warmup", "0")
    assert doc["fusec_arrays"] == "numpy"
    assert "arrays" not in doc["workloads"][0]["results"]["fusec"]


def test_launch_chain_rows_run_one_launch_and_sixty_four():
    """The launch fusion rows: the same 64-op program with -p none, fused into one launch and
    unfused, both checked against the reference (the kernel counts come from the plans)."""
    code, doc = run_cli("-w", "launch_chain", "--peers", "numpy", "--repeat", "1",
                        "--warmup", "0")
    assert code == 0, doc
    rows = {w["name"]: w["results"]["fusec"] for w in doc["workloads"]}
    assert set(rows) == {"launch_chain64", "launch_chain64_unfused"}
    assert rows["launch_chain64"]["status"] == "ok"
    assert rows["launch_chain64_unfused"]["status"] == "ok"
    assert rows["launch_chain64"]["kernels"] == 1
    assert rows["launch_chain64_unfused"]["kernels"] == 64
