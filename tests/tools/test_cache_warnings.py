"""fusec-run over a damaged program cache: the run succeeds; ``--verbose`` shows one warning
line per damaged entry, which is rebuilt; without it, stderr stays empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusec.runtime.device import select_device
from fusec.runtime.program_cache import clear_program_cache
from fusec.tools import fusec_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("verbose", [True, False])
def test_damaged_entries_are_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], verbose: bool) -> None:
    select_device("cpu")  # its probe is built once per process, before the cache moves
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    program = str(ROOT / "examples" / "mlp.mlir")
    clear_program_cache()
    assert fusec_run.main([program, "--device", "cpu"]) == 0
    entries = list((tmp_path / "fusec" / "opencl").glob("*.bin"))
    assert entries
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:100])  # truncated, as by a full disk or a crash
    capsys.readouterr()
    clear_program_cache()
    assert fusec_run.main([program, "--device", "cpu", "--check",
                           *(["--verbose"] if verbose else [])]) == 0
    out, err = capsys.readouterr()
    assert "result0: max abs error" in out
    if verbose:
        lines = err.splitlines()
        assert lines and all(line.startswith("fusec-run: warning: ") for line in lines)
        assert all("damaged program cache entry (truncated" in line for line in lines)
    else:
        assert err == ""
    for entry in entries:
        assert len(entry.read_bytes()) > 100  # rebuilt whole
