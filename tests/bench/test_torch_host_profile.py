"""``python -m fusec.bench.torch_host_profile`` on the CPU, the model made small: it profiles the
fusec backend's calls and prints the wall time a call and the profiler's tables."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from fusec.bench import torch_host_profile  # noqa: E402


def test_the_profile_of_a_small_model_on_the_cpu(capsys):
    torch_host_profile.main(["--model", "bert", "--device", "cpu", "--dtype", "f32",
                             "--layers", "1", "--seq", "16", "--calls", "3", "--lines", "40"])
    out = capsys.readouterr().out
    assert out.startswith("== BERT-base, 1 layers, B=1 S=16")
    assert "fusec: " in out and " ms a call under the profiler" in out
    assert "Ordered by: internal time" in out and "Ordered by: cumulative time" in out
    assert "torch_partition.py" in out  # fusec's partition is among the calls profiled
    assert "reduce-overhead" not in out  # CUDA graphs only on CUDA


def test_the_steps_of_a_small_model_on_the_cpu(capsys):
    """`--steps`: each of fusec's steps clocked; on the CPU the CUDA ones take no time, the
    partition's call and the bound weights' check some, and the classes are put back."""
    from fusec.compiler.torch_partition import BoundTensors, FusecPartition

    calls = (FusecPartition.__call__, BoundTensors.changed)
    torch_host_profile.main(["--model", "bert", "--device", "cpu", "--dtype", "f32",
                             "--layers", "1", "--seq", "16", "--calls", "3", "--steps"])
    out = capsys.readouterr().out
    rows = {line[:26].strip(): float(line.split()[-4]) for line in out.splitlines()
            if line.startswith("  ") and line.endswith(" ms a call")}
    assert {name for *_, name in torch_host_profile.STEPS} <= set(rows)
    assert rows["partition"] > 0 and rows["bound weights' check"] > 0
    assert rows["replay"] == 0 and rows["graph's bounds' wait"] == 0
    assert rows["partition"] <= rows["wall, steps clocked"]
    assert (FusecPartition.__call__, BoundTensors.changed) == calls
