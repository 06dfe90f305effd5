"""``python -m fusec.bench.probe_half_moves`` on the CPU device: every kernel moves the keys
and values where they belong (each word but a NaN's bit for bit; the raw moves keep NaNs too),
one line a kernel and the copy's. Nothing is timed against a threshold."""

from __future__ import annotations

import sys

import pytest

from fusec.bench import probe_half_moves


def test_every_move_lands(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                          ) -> None:
    monkeypatch.setattr(sys, "argv", ["probe_half_moves", "--device", "cpu", "--repeat", "1",
                                      "--batch", "1"])
    probe_half_moves.main()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and lines[-1].startswith("clEnqueueCopyBuffer")
    assert all("others' bits equal True" in line for line in lines[:-1])
    raw = [line for line in lines if line.startswith("raw")]
    assert len(raw) == 2 and all("NaNs changed 0" in line for line in raw)


def test_no_such_device_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from fusec.runtime.errors import DeviceError

    def missing(kind: str) -> None:
        raise DeviceError(f"no working OpenCL device of kind '{kind}'")

    monkeypatch.setattr(probe_half_moves, "select_device", missing)
    monkeypatch.setattr(sys, "argv", ["probe_half_moves", "--device", "gpu"])
    with pytest.raises(SystemExit) as exit_:
        probe_half_moves.main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err == "probe_half_moves: no working OpenCL device of kind 'gpu'\n"
