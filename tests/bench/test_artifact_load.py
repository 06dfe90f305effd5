"""``python -m fusec.bench.artifact_load`` on a 1-layer BERT-base: every fresh process (loads
and a compile-and-run) gives the first load's numbers, no load imports the compiler, and the
phase table has every row. Nothing is timed against a threshold."""

from __future__ import annotations

import pytest

from fusec.bench import artifact_load


def test_one_layer(capsys: pytest.CaptureFixture[str]) -> None:
    assert artifact_load.main(["--layers", "1", "--runs", "2", "--no-cold"]) == 0
    out = capsys.readouterr().out
    assert out.count("same numbers True") == 3 and "same numbers False" not in out
    assert out.count("compiler imported False") == 2
    assert "fusec modules that fusec.load imports (as an install does)" in out
    for _, label in artifact_load.PHASES:
        assert label in out
    assert "compile-and-run, warm kernel cache:" in out
