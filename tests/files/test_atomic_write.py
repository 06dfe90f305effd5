"""fusec.files: an output is the old file or the new one, never half of one, never an input."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fusec.files import OutputError, atomic_write, check_not_input


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_writes_text_bytes_and_writer(tmp_path: Path) -> None:
    atomic_write(tmp_path / "a.txt", "héllo\n")
    atomic_write(tmp_path / "b.bin", b"\x00\x01")
    atomic_write(tmp_path / "c.bin", lambda f: f.write(b"xyz"))
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "c.bin").read_bytes() == b"xyz"
    assert leftovers(tmp_path) == []


def test_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_text() == "new"


@pytest.mark.parametrize("failure", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_a_failing_writer_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, failure: BaseException
) -> None:
    target = tmp_path / "out"
    target.write_text("old")

    def writer(f: object) -> None:
        f.write(b"half of the ")  # type: ignore[attr-defined]
        raise failure

    with pytest.raises(type(failure)):
        atomic_write(target, writer)
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_follows_a_symlink_and_keeps_it(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write(link, "new")
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_dev_null_is_written_in_place() -> None:
    atomic_write("/dev/null", "nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        atomic_write(fifo, "through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_an_unwritable_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(OutputError) as e:
        atomic_write(tmp_path / "no" / "such" / "dir" / "out", "x")
    message = str(e.value)
    assert "\n" not in message
    assert message.endswith("error: cannot write output: No such file or directory")


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
def test_the_output_may_not_be_an_input(tmp_path: Path, how: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "model.mlir"
    source.write_text("program")
    output: str | Path = source
    if how == "relative":
        monkeypatch.chdir(tmp_path)
        output = "./model.mlir"
    elif how == "symlink":
        output = tmp_path / "alias.mlir"
        output.symlink_to(source)
    elif how == "hardlink":
        output = tmp_path / "hard.mlir"
        os.link(source, output)
    with pytest.raises(OutputError, match="the output is an input of this run"):
        check_not_input(output, [None, str(source)])


def test_other_outputs_are_fine(tmp_path: Path) -> None:
    source = tmp_path / "model.mlir"
    source.write_text("program")
    other = tmp_path / "other.mlir"
    other.write_text("x")
    check_not_input(other, [source])
    check_not_input(tmp_path / "new.mlir", [source])
    check_not_input("-", ["-"])
    check_not_input("/dev/null", ["/dev/null"])
    check_not_input(None, [source])
