"""A short fuzzing run with fixed seeds (the CI share of ``fusec-fuzz``), the minimizer, and
the command line: failures are minimized, written as regression cases, and set the exit code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fusec.compiler.driver import load
from fusec.fuzz import campaign
from fusec.fuzz.generator import generate
from fusec.fuzz.inputs import make_inputs
from fusec.fuzz.minimize import minimize
from fusec.fuzz.oracle import Finding, check, float32_range
from fusec.fuzz.program import Op, Program, Value
from fusec.reference.executor import run_function
from fusec.reference.ops import computing_in
from fusec.tools import fusec_fuzz, fusec_opt

SEEDS = 40
MUTATIONS = 150


def test_fixed_seeds_pass() -> None:
    """Random programs agree with the reference fused and unfused; mangled text is always a
    one-line error. (``fusec-fuzz --seed 0 --count 40 --mutations 150``.)"""
    report = campaign.run(seed=0, count=SEEDS, mutations=MUTATIONS, opt_main=fusec_opt.main)
    assert report.programs == SEEDS and report.mutations == MUTATIONS
    assert not report.failures, "\n".join(map(str, report.failures))


def has_softmax(program: Program) -> list[Finding]:
    if any(op.name == "nn.softmax" for op in program.ops):
        return [Finding("mismatch", "default vs reference", "softmax differs")]
    return []


def softmax_seed() -> Program:
    for seed in range(200):
        p = generate(seed)
        if len(p.ops) >= 4 and has_softmax(p):
            return p
    raise AssertionError("no program with a softmax and 4 ops")


def test_minimize_keeps_only_what_fails() -> None:
    program = softmax_seed()
    finding = has_softmax(program)[0]
    small = minimize(program, finding, has_softmax)
    assert [op.name for op in small.ops] == ["nn.softmax"]
    assert len(small.outputs) == 1 and len(small.args) == 1


def test_a_failure_is_minimized_written_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(campaign, "check", lambda p, inputs, device="cpu": has_softmax(p))
    seed = softmax_seed().seed
    code = fusec_fuzz.main(["--seed", str(seed), "--count", "1", "--mutations", "0",
                            "--out", str(tmp_path), "--in-process"])  # the patched check
    out = capsys.readouterr().out
    assert code == 1
    assert f"FAIL program seed {seed}: mismatch (default vs reference): softmax differs" in out
    assert out.splitlines()[-1].startswith("1 programs, 0 mangled texts in ")
    case = (tmp_path / f"program-{seed}.mlir").read_text()
    assert case.startswith(f"// found by: fusec-fuzz --seed {seed} --count 1\n")
    assert case.count(" = nn.") == 1 and "nn.softmax" in case
    with np.load(tmp_path / f"program-{seed}.npz") as data:
        assert len(data.files) == 1


def test_the_command_line_runs_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert fusec_fuzz.main(["--seed", "3", "--count", "2", "--mutations", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("2 programs, 3 mangled texts in ")
    assert fusec_fuzz.main(["--count", "-1"]) == 2


@pytest.mark.parametrize("seed, reason", [
    (270, "float32 squares and sums overflow"),
    (1263, "ill-conditioned"),
    (1743, "ill-conditioned"),
    (1431, "evaluated in float32"),
    (3425, "ill-conditioned there"),
    (4055, "evaluated in float32 gives the kernel's value"),
])
def test_float32_limits_are_inconclusive_not_failures(seed: int, reason: str) -> None:
    """Seed 270: a layer_norm over 4.9e19 (its float32 variance overflows); seeds 1263 and
    1743: a layer_norm whose row of +-1e15 cancels, times an infinite gamma (the sign of a
    result within rounding of 0 decides +-inf; 1743 was a failure while `ill_conditioned`
    tried 3 perturbations, none of which flipped it); seed 1431: an rms_norm whose ``x / rms``
    underflows to 0 in float32 (x = 1e-40 in a row holding 1e15), times an infinite gamma: NaN,
    where float64 gives -inf; seed 3425: a row sum of +-1e15 and small terms, right within
    tolerance, scaled by 0.18 and through tanh (the first op to differ, tanh, is right on its
    operands, but 4-ulp moves of the program's inputs move the result as far); seed 4055: the
    kernel's rms_norm is -0 where ``x * rstd`` underflows (x = 1e-40 in a row holding 1e15), the
    reference's -5.7e-40, and rsqrt makes them -inf and NaN. The reference computes in
    float64."""
    program = generate(seed)
    findings = check(program, make_inputs(program, campaign.specials_for(seed)))
    assert findings and all(f.kind == "inconclusive" for f in findings)
    assert reason in findings[0].message


CRASHING_CHECK = '''
import os
import signal


def check(program, inputs, device):
    """Kills its own process on seed 3, passes every other program."""
    if program.seed == 3:
        os.kill(os.getpid(), signal.SIGFPE)
    return []
'''


def test_a_program_that_kills_its_process_fails_only_its_seed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``isolate`` each program runs in a child process: one that dies (as fuzz seed 1839
    did, SIGFPE in the OpenCL runtime) is a crash for its seed and the campaign goes on in a
    fresh child."""
    import importlib
    import sys

    from fusec.fuzz.isolation import WHERE, ChildOracle

    (tmp_path / "crashing_check_for_fuzz.py").write_text(CRASHING_CHECK)
    monkeypatch.syspath_prepend(str(tmp_path))  # the spawned child takes sys.path along
    module = importlib.import_module("crashing_check_for_fuzz")
    try:
        report = campaign.run(seed=2, count=3, minimize_budget=1,
                              child=ChildOracle("cpu", module.check))
    finally:
        sys.modules.pop("crashing_check_for_fuzz", None)
    assert report.programs == 3
    assert [f.seed for f in report.failures] == [3]
    assert f"crash ({WHERE}): killed by SIGFPE" in report.failures[0].message


def test_float32_range_excuses_only_the_float32_result() -> None:
    """`float32_range` excuses a kernel whose result is the reference's formula in float32
    (seed 1431's rms_norm: NaN where float64 gives -inf), not one that differs from it."""
    x = np.array([[1e-40, 1e15, -1.0, 0.5]], np.float32)
    gamma = np.array([-np.inf, 1.0, 2.0, 3.0], np.float32)
    xv, gv = Value("x", "f32", (1, 4)), Value("g", "f32", (4,))
    op = Op("nn.rms_norm", Value("y", "f32", (1, 4)), (xv, gv))
    program = Program([xv, gv], [op], [op.result])
    with np.errstate(all="ignore"):
        (want,) = run_function(load(program.text()), [x, gamma])
        with computing_in(np.float32):
            (narrow,) = run_function(load(program.text()), [x, gamma])
    assert np.isneginf(want[0, 0]) and np.isnan(narrow[0, 0])
    ref = {"x": x, "g": gamma, "y": want}
    assert float32_range(op, ref, {**ref, "y": narrow})
    wrong = narrow.copy()
    wrong[0, 1] = -wrong[0, 1]  # a sign error elsewhere in the row
    assert not float32_range(op, ref, {**ref, "y": wrong})
    assert not float32_range(op, ref, {**ref, "y": np.full_like(narrow, np.nan)})


def test_a_planted_signed_zero_bug_is_still_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """With fuzz seed 1878's fix undone in the emitter (``max`` as ``fmax`` with only the NaN
    case selected: ``relu(-0)`` is -0), the oracle reports its saved case as a failure: no
    excuse (float32 evaluation, ill-conditioning) hides it."""
    from fusec.codegen import emitter

    def old_nan_propagating(self, op) -> None:  # type: ignore[no-untyped-def]
        lhs, rhs = (self.ref(v) for v in op.operands)
        call = f"{emitter.NAN_PROPAGATING[type(op)]}({lhs}, {rhs})"
        self.define(op, f"select({call}, {lhs} + {rhs}, isnan({lhs}) | isnan({rhs}))")

    monkeypatch.setattr(emitter.CEmitter, "nan_propagating", old_nan_propagating)
    case = Path(__file__).parent / "cases" / "program-1878.mlir"
    with np.load(case.with_suffix(".npz")) as data:
        inputs = [data["a3"], data["a7"]]
    findings = check(case.read_text(), inputs)
    assert any(f.failed and f.kind == "mismatch" for f in findings), findings
    program = generate(1878)
    findings = check(program, make_inputs(program, campaign.specials_for(1878)))
    assert any(f.failed and f.kind == "mismatch" for f in findings), findings
