"""A fuzzing run: seeds of random programs through the oracle, mangled texts through fusec-opt.

`run` tries ``count`` programs (seeds ``seed`` to ``seed + count - 1``; one seed in four runs on
plain random inputs, the others with edge values mixed in) and ``mutations`` mangled texts.
Each failing program is minimized and, with an output folder, written there as a regression
case: ``program-<seed>.mlir`` (the finding in its leading comments) and ``program-<seed>.npz``
(its inputs by argument name), the form ``tests/fuzz/cases`` keeps; each failing mangled text
as ``mutant-<seed>.mlir`` with ``mutant-<seed>.txt`` saying what went wrong.

With ``isolate`` the programs run in a child process (`isolation.ChildOracle`, as
``fusec-fuzz`` does): a program that kills its process is a ``crash`` for its seed and the
campaign goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fusec.files import atomic_write

from .generator import generate
from .inputs import make_inputs
from .isolation import ChildOracle
from .minimize import minimize
from .mutate import TOOL_RUNS, ToolMain, judge, mutate, run_tool
from .oracle import Finding, check
from .program import Program

Oracle = Callable[[Program, bool], list[Finding]]
"""``oracle(program, specials) -> findings``: `check` on the program's inputs (with edge values
when ``specials``), in this process or in a child."""

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass
class Failure:
    seed: int
    what: str
    """``program`` or ``mutant``."""
    message: str
    saved: list[Path] = field(default_factory=list)

    def __str__(self) -> str:
        where = f" -> {', '.join(str(p) for p in self.saved)}" if self.saved else ""
        return f"{self.what} seed {self.seed}: {self.message}{where}"


@dataclass
class Report:
    programs: int = 0
    mutations: int = 0
    failures: list[Failure] = field(default_factory=list)
    inconclusive: list[str] = field(default_factory=list)
    unsupported: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.programs} programs, {self.mutations} mangled texts in "
                f"{self.seconds:.1f} s: {len(self.failures)} failed, "
                f"{len(self.inconclusive)} inconclusive, {self.unsupported} unsupported")


def specials_for(seed: int) -> bool:
    """Whether the program of ``seed`` runs with edge values (three seeds in four)."""
    return seed % 4 != 0


def run(
    seed: int = 0,
    count: int = 100,
    mutations: int = 0,
    out: Path | None = None,
    device: str = "cpu",
    max_ops: int = 10,
    minimize_budget: int = 40,
    progress: Callable[[str], None] | None = None,
    opt_main: ToolMain | None = None,
    isolate: bool = False,
    child: ChildOracle | None = None,
) -> Report:
    """See the module docstring; ``opt_main`` is ``fusec-opt``'s entry point, which the
    mangled texts go through (needed when ``mutations`` is not 0). With ``isolate`` (or a
    ``child``) the programs run in ``child``, by default a new `ChildOracle` on ``device``."""
    if mutations and opt_main is None:
        raise ValueError("mangled texts need fusec-opt's entry point (opt_main)")
    report = Report()
    started = time.perf_counter()
    if isolate and child is None:
        child = ChildOracle(device)
    oracle: Oracle = (child if child is not None else
                      lambda p, specials: check(p, make_inputs(p, specials), device))
    try:
        run_programs(report, seed, count, out, max_ops, minimize_budget, progress, oracle)
    finally:
        if child is not None:
            child.close()
    run_mutations(report, seed, mutations, max_ops, progress, out, opt_main)
    report.seconds = time.perf_counter() - started
    return report


def run_programs(report: Report, seed: int, count: int, out: Path | None, max_ops: int,
                 minimize_budget: int, progress: Callable[[str], None] | None,
                 oracle: Oracle) -> None:
    for s in range(seed, seed + count):
        program = generate(s, max_ops)
        specials = specials_for(s)
        findings = oracle(program, specials)
        report.programs += 1
        report.unsupported += any(f.kind == "unsupported" for f in findings)
        report.inconclusive += [f"seed {s}: {f}" for f in findings if f.kind == "inconclusive"]
        failed = [f for f in findings if f.failed]
        if failed:
            failure = program_failure(program, failed[0], specials, oracle, out,
                                      minimize_budget)
            report.failures.append(failure)
            if progress:
                progress(str(failure))


def run_mutations(report: Report, seed: int, mutations: int, max_ops: int,
                  progress: Callable[[str], None] | None, out: Path | None,
                  opt_main: ToolMain | None) -> None:
    examples = sorted(EXAMPLES.glob("*.mlir"))
    for s in range(seed, seed + mutations):
        rng = np.random.default_rng([s, 1])
        base = (examples[s % len(examples)].read_bytes() if examples and s % 4 == 0
                else generate(s, max_ops, half=True).text().encode())
        data = mutate(rng, base)
        report.mutations += 1
        for args in TOOL_RUNS:
            assert opt_main is not None
            problem = judge(run_tool(opt_main, data, args))
            if problem is not None:
                failure = Failure(s, "mutant", problem)
                if out is not None:
                    failure.saved = [save(out / f"mutant-{s}.mlir", data),
                                     save(out / f"mutant-{s}.txt", problem + "\n")]
                report.failures.append(failure)
                if progress:
                    progress(str(failure))
                break


def program_failure(program: Program, finding: Finding, specials: bool, oracle: Oracle,
                    out: Path | None, budget: int) -> Failure:
    """Minimizes a failing program and writes it out (with ``out``)."""
    small = minimize(program, finding, lambda p: oracle(p, specials), budget)
    failure = Failure(program.seed, "program", str(finding))
    if out is not None:
        final = oracle(small, specials)
        shown = next((f for f in final if f.signature == finding.signature), finding)
        small.note = [f"found by: fusec-fuzz --seed {program.seed} --count 1",
                      f"edge-value inputs: {'yes' if specials else 'no'}",
                      f"{shown}"[:400]]
        arrays = dict(zip((a.name for a in small.args), make_inputs(small, specials),
                          strict=True))
        failure.saved = [save(out / f"program-{program.seed}.mlir", small.text()),
                         save(out / f"program-{program.seed}.npz",
                              lambda f: np.savez(f, **arrays))]
    return failure


def save(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, content)  # type: ignore[arg-type]
    return path
