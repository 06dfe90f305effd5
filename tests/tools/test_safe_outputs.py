"""The tools never lose a user's file: ``-o`` onto an input is refused, an interrupted run
(SIGINT, SIGTERM) ends with one line and exit 130/143 and leaves every output as it was, and a
program too large for the machine is a one-line resource error, exit 1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import numpy as np
import pytest

from fusec.files import atomic_write
from fusec.tools import fusec_opt, fusec_run
from fusec.tools.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.mlir").read_text()


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "mlp.mlir"
    path.write_text(MLP)
    return path


@pytest.mark.parametrize("option", ["-o", "--fusion-stats-json"])
def test_fusec_opt_refuses_to_write_onto_its_input(
    program: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = fusec_opt.main([str(program), "-p", "default", option, str(program)])
    line = one_line(capsys.readouterr().err)
    assert code == 1
    assert line == (f"{program}: error: the output is an input of this run ({program}); "
                    "it would be overwritten")
    assert program.read_text() == MLP


def test_fusec_run_refuses_to_write_onto_its_program(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = fusec_run.main([str(program), "-o", str(program)])
    assert code == 1
    assert "the output is an input of this run" in one_line(capsys.readouterr().err)
    assert program.read_text() == MLP


def test_fusec_run_refuses_to_write_onto_its_inputs(
    program: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.ones(3))
    before = inputs.read_bytes()
    link = tmp_path / "out.npz"
    link.symlink_to(inputs)
    code = fusec_run.main([str(program), "--inputs", str(inputs), "-o", str(link)])
    assert code == 1
    assert "the output is an input of this run" in one_line(capsys.readouterr().err)
    assert inputs.read_bytes() == before


@pytest.mark.parametrize("signum, code, word", [
    (signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_while_writing_leaves_the_old_output(
    tmp_path: Path, signum: int, code: int, word: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out.npz"
    target.write_bytes(b"the user's previous results")

    def writer(f: object) -> None:
        f.write(b"half")  # type: ignore[attr-defined]
        os.kill(os.getpid(), signum)  # the handler raises here, mid-write

    @click.command()
    def command() -> None:
        atomic_write(target, writer)

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    if before[signum] is signal.SIG_IGN:  # the tests run as a background job
        pytest.skip(f"signal {signum} is ignored in this process (see the next test)")
    assert run_cli(command, "fusec-run", []) == code
    assert one_line(capsys.readouterr().err) == f"fusec-run: {word}"
    assert target.read_bytes() == b"the user's previous results"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npz"]
    # the old handlers are back (SIG_IGN for SIGINT where the tests run in the background)
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_signal_ignored_on_entry_stays_ignored(tmp_path: Path) -> None:
    """As for a tool a shell started in the background (SIGINT ignored): the signal does not
    interrupt the write, and the handler is still SIG_IGN afterwards."""
    target = tmp_path / "out.npz"

    def writer(f: object) -> None:
        f.write(b"half")  # type: ignore[attr-defined]
        os.kill(os.getpid(), signal.SIGINT)
        f.write(b" and the rest")  # type: ignore[attr-defined]

    @click.command()
    def command() -> None:
        atomic_write(target, writer)

    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert run_cli(command, "fusec-run", []) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)
    assert target.read_bytes() == b"half and the rest"


WAITING_TOOL = textwrap.dedent("""
    import sys, time, click
    from fusec.tools.cli import run_cli

    @click.command()
    def command():
        print("ready", flush=True)
        time.sleep(60)

    sys.exit(run_cli(command, "fusec-x", []))
""")


@pytest.mark.parametrize("signum, code, word", [
    (signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signalled_process_exits_with_one_line(signum: int, code: int, word: str) -> None:
    # the child's SIGINT as at a terminal, also where these tests run as a background job
    # (which a shell starts with SIGINT ignored, and a tool keeps it so)
    child = subprocess.Popen([sys.executable, "-c", WAITING_TOOL], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n"
    child.send_signal(signum)
    _, err = child.communicate(timeout=30)
    assert child.returncode == code
    assert one_line(err) == f"fusec-x: {word}"


def test_a_program_larger_than_the_machine_is_a_resource_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = "tensor<1000000x1000000xf32>"
    program = tmp_path / "big.mlir"
    program.write_text(f"func.func @big(%x: {big}) -> {big} {{\n"
                       f"  %y = nn.relu %x : {big} -> {big}\n"
                       f"  return %y : {big}\n}}\n")
    code = fusec_run.main([str(program), "--device", "cpu"])
    line = one_line(capsys.readouterr().err)
    assert code == 1
    assert line.startswith("fusec-run: error: inputs need 3.6 TiB; the device '")
    assert " has " in line
