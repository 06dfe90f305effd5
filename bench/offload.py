"""CPU-only, GPU-only and auto-placed fusec, side by side: the table of issue 15.

    python -m fusec.bench.offload                      # every fusec-bench workload + mixed
    python -m fusec.bench.offload -w mixed_host_gpu -w sgemm1024 --json-out offload.json
    python -m fusec.bench.offload --first softmax --budget-s 240   # softmax first; no start
                                                                   # after 240 s

For each workload, fusec compiles it three ways: for the CPU OpenCL device alone
(``device="cpu"``), for the GPU alone (``device="gpu"``), and placed between them
(`fusec.compiler.driver.compile_placed`, with the calibration cache of ``fusec-calibrate`` or
the built-in defaults). Each one's outputs are checked against the numpy reference first; then
the three are timed interleaved (`fusec.bench.timing.interleaved`), wall time of a call with
numpy arrays in and out (the weights of `Workload.params` bound to the device(s) once). The
table gives each median, ``auto / best`` (the better single device) and where auto put the
kernels. A device that is missing shows as ``n/a``; nothing is estimated.

Where the model's estimates are a near tie (`fusec.placement.tie`), the auto executable
measures its two candidates on its first calls (`fusec.placement.measured`); those calls are
made before the timing, as warm-up, each candidate's outputs checked against the reference, so
the auto column is what a caller calling it repeatedly gets once it has chosen. The placement
column then says what was measured, each candidate's fastest timed call (``; tie measured:
gpu 45.3, cpu 41.2 ms -> cpu``), and the
JSON's ``choice`` has the estimates and the measured times (for every auto row: the estimates
of its placement and of the best other one, measured or not).

The runners take turns of `BLOCK` calls in a row, in an order where each follows each other
one equally often (``balanced``): a CPU call right after a GPU call is slower (the CPU runtime's
worker threads fell asleep meanwhile: 10-24% of a 0.1-0.3 ms call after a 1 ms gap, Intel CPU
OpenCL on 2 cores). In the fixed order cpu, gpu, auto the auto column alone paid for that, even
where it ran the very same CPU executable as the cpu column.

A row whose ``auto / best`` is above `RETIME_ABOVE` (1.05) after that timing is timed again
(``--retime-above``; 0 turns it off): another pass of at least `RETIME_CYCLES` (3) full cycles
of balanced turns (with ``--max-runner-s`` still capping each runner), and each median is
taken over both passes' calls. A row near the 10% bound then rests on more calls spread over
more time: on the H100 machine, rows where auto ran the very same program as the faster column
read 1.11 and 1.15 from one short pass. The JSON's ``passes`` and ``calls`` say what was done.

No library's idle threads spin while fusec is timed (`fusec.bench.idle_threads`, imported before
numpy, as by fusec-bench): the reference and the checks run numpy (a matmul and
``np.linalg.norm`` wake OpenBLAS), whose threads keep spinning for a while on the cores the CPU
runner called next needs: the likely cause of a near tie, measured right after the checks, that
saw a 0.3 ms CPU candidate at 0.6-1.2 ms (power_step, explained_variance on the H200 machine's
16-core CPU) and chose the GPU.

Exit codes: 0 when every runner that ran agreed with the reference, 1 otherwise, 2 for a bad
command line.
"""

from __future__ import annotations

from fusec.bench import idle_threads  # noqa: F401 - before numpy loads

# isort: split
import dataclasses
import json
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click
import numpy as np

from fusec.bench.graph import parse
from fusec.bench.harness import check, reference_outputs
from fusec.bench.timing import BLOCK, Timing, interleaved, turn_order, wall_call
from fusec.bench.workloads import Workload, all_workloads, offload_workloads, tiny_workloads
from fusec.compiler.driver import Placed
from fusec.placement.measured import TURN_CALLS, MeasuredChoice
from fusec.files import atomic_write

RUNNERS = ("cpu", "gpu", "auto")
MAX_RUNNER_S = 8.0
"""A runner's timed calls add up to about this at most (a 4096^3 f16 GEMM on a CPU)."""
MIN_CALLS = 3
RETIME_ABOVE = 1.05
"""A row whose auto / best is above this after its first timing is timed again."""
RETIME_CYCLES = 3
"""Full cycles of turns (each runner's turns of `BLOCK` calls) the second timing makes at
least."""


@dataclass
class Row:
    workload: str
    summary: str
    ms: dict[str, float | None]
    problems: dict[str, str]
    placement: str = ""
    choice: dict[str, Any] | None = None
    """auto's offload report ``choice``: the model's estimates for its placement and the best
    other one, and, for a near tie, what was measured (`fusec.placement.measured`)."""
    passes: int = 0
    """Timings made (2 where the first one's auto / best was above `RETIME_ABOVE`)."""
    first_ratio: float | None = None
    """auto / best after the first timing."""
    calls: dict[str, int] = dataclasses.field(default_factory=dict)
    """Timed calls per runner, over all passes."""

    @property
    def ratio(self) -> float | None:
        """auto / the better single device."""
        singles = [v for k, v in self.ms.items() if k != "auto" and v is not None]
        auto = self.ms.get("auto")
        return None if auto is None or not singles else auto / min(singles)


@dataclass
class Prepared:
    """A runner's call of the compiled workload, and for auto where its kernels went."""

    call: Callable[[], list[np.ndarray]]
    placement: str = ""
    placed: Placed | None = None
    """auto's `compile_placed` result (its offload report, and its executable, which may be
    measuring a near tie)."""

    @property
    def measuring(self) -> MeasuredChoice | None:
        exe = self.placed.executable if self.placed is not None else None
        return exe if isinstance(exe, MeasuredChoice) else None


def prepare(runner: str, workload: Workload, inputs: list[np.ndarray], names: list[str],
            params: dict[str, np.ndarray], pipeline: str) -> Prepared:
    """A call of the compiled workload, and (for auto) where its kernels went. The workload's
    own pipeline, launch fusion and TF32 setting apply, as in fusec-bench."""
    import fusec
    from fusec.compiler.driver import compile_placed

    where = ""
    placed = None
    options: dict[str, Any] = {"pipeline": workload.pipeline or pipeline, "params": params,
                               "launch_fusion": workload.launch_fusion,
                               "allow_tf32": workload.tf32}
    if runner == "auto":
        placed = compile_placed(workload.text, **options)
        exe: Any = placed.executable
        counts: dict[str, int] = {}
        for d in placed.report["decisions"]:
            counts[d["decision"]] = counts.get(d["decision"], 0) + 1
        where = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    else:
        exe = fusec.compile(workload.text, device=runner, **options)
    args = [a for a, n in zip(inputs, names, strict=True) if n not in params]
    return Prepared(lambda: exe(*args), where, placed)


def settle(prepared: Prepared, reference: list[np.ndarray]) -> float:
    """Calls an auto executable that measures a near tie until it has chosen, checking the
    outputs of each candidate's first call here (both candidates run; the other calls follow
    each other as in the timing, with no check between them); the largest relative error (0
    with nothing to do)."""
    measuring = prepared.measuring
    error = 0.0
    checked: set[int] = set()
    while measuring is not None and measuring.chosen is None:
        candidate = measuring.turns[measuring.calls // TURN_CALLS]
        outputs = list(prepared.call())
        if candidate not in checked:
            checked.add(candidate)
            error = max(error, check(outputs, reference))
    return error


def choice_summary(choice: dict[str, Any] | None) -> str:
    """``; tie measured: gpu 45.3, cpu 41.2 ms -> cpu`` (each candidate's fastest timed call,
    what decides) for a measured near tie, else ``""``."""
    if not choice or not choice.get("measured"):
        return ""
    fastest = ", ".join(f"{n} {m:.3g}" for n, m in choice["fastest_ms"].items() if m is not None)
    return f"; tie measured: {fastest} ms -> {choice['chosen']}"


def cycle_calls(runners: int, block: int, balanced: bool) -> int:
    """Calls each runner makes in one full cycle of turns."""
    turns = turn_order(runners).count(0) if balanced else 1
    return block * max(turns, 1)


def run_workload(workload: Workload, runners: Sequence[str], repeat: int, warmup: int,
                 pipeline: str, seed: int, max_runner_s: float | None = None,
                 block: int = BLOCK, balanced: bool = True,
                 retime_above: float = RETIME_ABOVE) -> Row:
    graph = dataclasses.replace(parse(workload.text, workload.name),
                                params=frozenset(workload.params))
    names = [t.name for t in graph.inputs]
    inputs = workload.inputs(names, [t.shape for t in graph.inputs], seed, 4096)
    params = {n: a for n, a in zip(names, inputs, strict=True) if n in graph.params}
    reference = reference_outputs(workload.text, inputs)
    row = Row(workload.name, workload.summary, {r: None for r in runners}, {})
    ready: dict[str, Callable[[], list[np.ndarray]]] = {}
    for runner in runners:
        try:
            prepared = prepare(runner, workload, inputs, names, params, pipeline)
            error = max(check(list(prepared.call()), reference), settle(prepared, reference))
        except Exception as e:  # noqa: BLE001 - a missing device or a failure: in the table
            row.problems[runner] = str(e).splitlines()[0] if str(e) else type(e).__name__
            continue
        if not error <= workload.tolerance:
            row.problems[runner] = f"wrong: relative error {error:.3g}"
            continue
        if prepared.placed is not None:
            row.choice = prepared.placed.current_report()["choice"]
            row.placement = prepared.placement + choice_summary(row.choice)
        ready[runner] = prepared.call
    calls = [lambda c=c: wall_call(c) for c in ready.values()]
    timings = interleaved(calls, warmup, repeat, block=block, balanced=balanced,
                          max_time_s=max_runner_s, min_calls=MIN_CALLS)
    row.passes = 1
    record(row, list(ready), timings)
    row.first_ratio = row.ratio
    if retime_above > 0 and row.ratio is not None and row.ratio > retime_above:
        more = interleaved(calls, 0, RETIME_CYCLES * cycle_calls(len(calls), block, balanced),
                           block=block, balanced=balanced, max_time_s=max_runner_s,
                           min_calls=MIN_CALLS)
        row.passes = 2
        record(row, list(ready), [Timing(first.samples_ms + second.samples_ms)
                                  for first, second in zip(timings, more, strict=True)])
    return row


def record(row: Row, runners: Sequence[str], timings: Sequence[Timing]) -> None:
    for runner, timing in zip(runners, timings, strict=True):
        row.ms[runner] = timing.median_ms
        row.calls[runner] = len(timing.samples_ms)


def render(rows: Sequence[Row], runners: Sequence[str]) -> str:
    header = ["workload", *[f"{r} ms" for r in runners], "auto/best", "auto placed"]
    table = [header]
    for row in rows:
        cells = [row.workload]
        for r in runners:
            value = row.ms.get(r)
            cells.append(f"{value:.3f}" if value is not None else
                         ("WRONG" if row.problems.get(r, "").startswith("wrong") else "n/a"))
        cells.append(f"{row.ratio:.2f}" if row.ratio is not None else "-")
        cells.append(row.placement or "-")
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in table]
    for row in rows:
        for runner, problem in row.problems.items():
            lines.append(f"  {row.workload} {runner}: {problem}")
    return "\n".join(lines)


def select(names: Sequence[str]) -> list[Workload]:
    table = all_workloads() + offload_workloads() + tiny_workloads()
    if not names:
        return [w for w in all_workloads() + offload_workloads() if w.group != "t"]
    chosen = []
    for name in names:
        hits = [w for w in table if w.name == name] or [w for w in table
                                                         if w.name.startswith(name)]
        if not hits:
            raise click.BadParameter(f"unknown workload '{name}' (known: "
                                     f"{', '.join(w.name for w in table)})")
        chosen += [w for w in hits if w not in chosen]
    return chosen


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-w", "--workload", "workloads", multiple=True,
              help="Run only this workload (repeatable; a prefix selects several).")
@click.option("--first", "first", multiple=True, metavar="NAME",
              help="Run this workload before the others (repeatable; as -w, a prefix).")
@click.option("--runners", default=",".join(RUNNERS), show_default=True,
              help="Comma-separated: cpu, gpu, auto.")
@click.option("--repeat", type=click.IntRange(1), default=5, show_default=True)
@click.option("--warmup", type=click.IntRange(0), default=2, show_default=True)
@click.option("-p", "--pipeline", default="default", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json-out", metavar="FILE", help="Also write the rows as JSON.")
@click.option("--order", type=click.Choice(["balanced", "fixed"]), default="balanced",
              show_default=True, help="Turns in a balanced order, or always cpu, gpu, auto "
              "(the old method, to compare).")
@click.option("--block", type=click.IntRange(1), default=BLOCK, show_default=True,
              help="Calls of one runner in a row, per turn.")
@click.option("--budget-s", type=click.FloatRange(0), default=None, metavar="SECONDS",
              help="Start no workload after this many seconds; list those left out.")
@click.option("--retime-above", type=click.FloatRange(0), default=RETIME_ABOVE,
              show_default=True, metavar="RATIO", help="Time a row again (at least "
              f"{RETIME_CYCLES} more cycles of turns; medians over both) where auto/best is "
              "above RATIO; 0: never.")
@click.option("--max-runner-s", type=click.FloatRange(0), default=MAX_RUNNER_S,
              show_default=True, help="Time one runner's calls for about this long at most "
              f"(at least {MIN_CALLS} calls, even under --repeat).")
def main(workloads: tuple[str, ...], first: tuple[str, ...], runners: str, repeat: int,
         warmup: int, pipeline: str, seed: int, json_out: str | None, order: str, block: int,
         budget_s: float | None, max_runner_s: float, retime_above: float) -> None:
    """Time fusec on the CPU alone, the GPU alone and placed between them."""
    chosen_runners = [r.strip() for r in runners.split(",") if r.strip()]
    unknown = [r for r in chosen_runners if r not in RUNNERS]
    if unknown:
        raise click.BadParameter(f"unknown runner(s) {', '.join(unknown)}")
    rows: list[Row] = []
    chosen = select(workloads)
    leading = [w for w in select(first) if w in chosen] if first else []
    chosen = leading + [w for w in chosen if w not in leading]
    began = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, stop)   # `timeout`: the table so far, then exit
    try:
        for workload in chosen:
            if rows and budget_s is not None and time.perf_counter() - began >= budget_s:
                break
            click.echo(f"offload: {workload.name} ...", err=True)
            start = time.perf_counter()
            rows.append(run_workload(workload, chosen_runners, repeat, warmup, pipeline, seed,
                                     max_runner_s, block, order == "balanced", retime_above))
            last = rows[-1]
            again = (f" (timed twice: auto/best {last.first_ratio:.2f} after the first timing)"
                     if last.passes > 1 and last.first_ratio is not None else "")
            click.echo(f"offload: {workload.name} took {time.perf_counter() - start:.1f} s"
                       f"{again}", err=True)
            if json_out:
                atomic_write(json_out, json.dumps(
                    [dataclasses.asdict(r) | {"auto_over_best": r.ratio} for r in rows],
                    indent=1))
    except Stopped:
        click.echo(f"offload: stopped (SIGTERM) after {time.perf_counter() - began:.0f} s",
                   err=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo(render(rows, chosen_runners))
    left = [w.name for w in chosen if w.name not in {r.workload for r in rows}]
    if left:
        click.echo(f"not run ({time.perf_counter() - began:.0f} s spent): {' '.join(left)}; "
                   f"run them with -w {' -w '.join(left)}")
    if any(p.startswith("wrong") for r in rows for p in r.problems.values()):
        sys.exit(1)


class Stopped(Exception):
    """SIGTERM arrived (``timeout``): stop and show what was measured."""


def stop(signum: int, frame: object) -> None:
    raise Stopped


if __name__ == "__main__":
    main()
