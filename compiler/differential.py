"""Miscompile hunting: ``fusec-run --verify-fusion`` and ``fusec-run --bisect``.

`verify_fusion` runs the program fused (the pipeline) and unfused (no fusion pass) on the same
inputs, random ones and adversarial ones (`input_sets`: large magnitudes, ties, signed zeros,
subnormals), and compares both with each other and with the numpy reference, reporting the
largest difference per output.

`bisect` finds the first fusion rewrite after which the outputs differ from the reference
beyond tolerance, as LLVM's ``-opt-bisect-limit`` is searched: it compiles with
``--rewrite-limit=k`` (`fusec.passes.remarks`: only rewrites ``#0 .. #k-1`` happen, in the
same order as in the full pipeline), runs, and halves the range. It names the rewrite by its
number, pass and the location of the op it rewrote, or says that no rewrite changes the numbers
(or that the program differs already without any, which is not a fusion bug).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import Comparison, compare
from fusec.compiler.driver import lower
from fusec.passes.remarks import Remark, RemarkLog, collecting
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.executable import Executable

Arrays = list[np.ndarray]

ADVERSARIAL = ("large", "ties", "signed-zeros", "subnormals")


def adversarial(kind: str, base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``base`` (a float32 array of standard normals) made hard in one way."""
    if kind == "large":
        return (base * 1e3).astype(base.dtype)
    if kind == "ties":  # few distinct values: equal maxima, zeros for relu/abs/max
        return (np.round(base * 2) / 2).astype(base.dtype)
    out = base.copy()
    pick = rng.random(base.shape) < 0.25
    if kind == "signed-zeros":
        out[pick] = np.where(rng.random(int(pick.sum())) < 0.5, -0.0, 0.0)
    elif kind == "subnormals":
        tiny = np.float32(1e-40) * rng.integers(1, 100, int(pick.sum())).astype(np.float32)
        out[pick] = np.where(rng.random(int(pick.sum())) < 0.5, -tiny, tiny)
    return out


def input_sets(module: ModuleOp, function: str, seed: int) -> list[tuple[str, Arrays]]:
    """``random`` inputs, then each adversarial variant of their float32 arguments (masks and
    integer arguments stay as drawn)."""
    fn = find_function(module, function)
    base = random_inputs(fn, seed)
    names = [arg.name_hint or "" for arg in fn.body.block.args]
    sets = [("random", base)]
    rng = np.random.default_rng(seed + 1)
    for kind in ADVERSARIAL:
        varied = [
            adversarial(kind, a, rng) if a.dtype == np.float32 and "mask" not in n else a
            for a, n in zip(base, names, strict=True)
        ]
        sets.append((kind, varied))
    return sets


@dataclass
class Runner:
    """Compiles ``module`` under a rewrite limit and runs it; one program per limit."""

    module: ModuleOp
    function: str
    pipeline: str
    device: object
    """A `fusec.runtime.device.Device` (``select_device``'s result)."""
    filename: str = "<input>"

    def compile(
        self, limit: int | None, pipeline: str | None = None
    ) -> tuple[Executable, RemarkLog]:
        log = RemarkLog(limit, filename=self.filename)
        info = DeviceInfo.from_device(self.device.device)  # type: ignore[attr-defined]
        with collecting(log):
            compiled = lower(
                self.module.clone(), self.function, pipeline or self.pipeline, info, self.filename
            )
        return Executable(compiled.plan, self.device), log  # type: ignore[arg-type]

    def run(self, limit: int | None, args: Arrays, pipeline: str | None = None) -> Arrays:
        exe, _ = self.compile(limit, pipeline)
        return list(exe(*exe.spared(args)))


@dataclass(frozen=True)
class SetReport:
    """One input set's comparisons, per output."""

    label: str
    fused_vs_unfused: list[Comparison]
    fused_vs_reference: list[Comparison]
    unfused_vs_reference: list[Comparison]

    @property
    def ok(self) -> bool:
        every = self.fused_vs_unfused + self.fused_vs_reference + self.unfused_vs_reference
        return all(c.ok for c in every)

    def lines(self) -> list[str]:
        out = []
        for i, (fu, fr, ur) in enumerate(
            zip(
                self.fused_vs_unfused,
                self.fused_vs_reference,
                self.unfused_vs_reference,
                strict=True,
            )
        ):
            verdict = "ok" if fu.ok and fr.ok and ur.ok else "DIFFERS"
            out.append(
                f"{self.label}: result{i}: max |fused - unfused| {fu.max_abs:.3g}, "
                f"max |fused - reference| {fr.max_abs:.3g}, "
                f"max |unfused - reference| {ur.max_abs:.3g}: {verdict}"
            )
        return out


def verify_fusion(
    runner: Runner, seed: int, atol: float | None = None, rtol: float | None = None
) -> list[SetReport]:
    """Fused, unfused and reference outputs on every input set, compared (normwise)."""
    fused, _ = runner.compile(None)
    unfused, _ = runner.compile(None, pipeline="none")
    reports = []
    for label, args in input_sets(runner.module, runner.function, seed):
        reference = run_function(runner.module, args, runner.function)
        f, u = list(fused(*args)), list(unfused(*args))
        reports.append(
            SetReport(
                label,
                compare(f, u, atol, rtol, normwise=True),
                compare(f, reference, atol, rtol, normwise=True),
                compare(u, reference, atol, rtol, normwise=True),
            )
        )
    return reports


@dataclass(frozen=True)
class BisectResult:
    rewrites: int
    """How many fusion rewrites the full pipeline makes."""
    first_bad: int | None
    """The number of the first rewrite after which the outputs differ; None when none does."""
    culprit: Remark | None
    """The applied remark of that rewrite (pass, location)."""
    unfused_differs: bool
    """The program differs from the reference with no rewrite at all (not a fusion bug)."""
    input_set: str | None = None
    """The input set on which it differs."""

    def describe(self) -> str:
        if self.unfused_differs:
            return (
                "bisect: the program differs from the reference with no fusion rewrite "
                f"({self.input_set} inputs): not a fusion bug"
            )
        if self.first_bad is None or self.culprit is None:
            return (
                f"bisect: none of the {self.rewrites} fusion rewrites changes the outputs "
                "beyond tolerance"
            )
        c = self.culprit
        made = c.message.split(": ", 1)[-1]
        return (
            f"{c.where}: error: bisect: the outputs differ from the reference after rewrite "
            f"#{self.first_bad} of {self.rewrites} ([{c.pass_name}] {made}, on {self.input_set} "
            "inputs); the rewrites before it do not change them"
        )


def bisect(
    runner: Runner,
    seed: int,
    atol: float | None = None,
    rtol: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> BisectResult:
    """The first rewrite after which some output differs from the reference (see the module
    docstring). Compiles ``O(log rewrites)`` times."""
    sets = input_sets(runner.module, runner.function, seed)
    references = [run_function(runner.module, args, runner.function) for _, args in sets]

    def failing_set(limit: int | None) -> str | None:
        if progress is not None:
            progress(f"bisect: trying --rewrite-limit={limit}")
        exe, _ = runner.compile(limit)
        for (label, args), expected in zip(sets, references, strict=True):
            outputs = list(exe(*exe.spared(args)))
            if not all(c.ok for c in compare(outputs, expected, atol, rtol, True)):
                return label
        return None

    _, full = runner.compile(None)
    total = full.rewrites
    applied = [r for r in full.remarks if r.kind == "applied"]
    bad_unfused = failing_set(0)
    if bad_unfused is not None:
        return BisectResult(total, None, None, True, bad_unfused)
    bad_full = failing_set(None)
    if bad_full is None:
        return BisectResult(total, None, None, False)
    low, high, label = 0, total, bad_full  # limit `low` is good, limit `high` is bad
    while high - low > 1:
        mid = (low + high) // 2
        bad = failing_set(mid)
        if bad is None:
            low = mid
        else:
            high, label = mid, bad
    first_bad = high - 1  # the rewrite that limit `high` adds to limit `high - 1`
    culprit = applied[first_bad] if first_bad < len(applied) else None
    return BisectResult(total, first_bad, culprit, False, label)
