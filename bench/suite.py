"""A whole benchmark run: the selected workloads, then the host-overhead and compile probes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusec.bench import report, special
from fusec.bench.harness import FAILED, WRONG, Settings, WorkloadResult, run_workload
from fusec.bench.peers import Peer
from fusec.bench.workloads import Workload, select

IMPORTED = ("onnx_bert_b1", "onnx_gpt2_b1", "onnx_llama_b1")
"""Imported ONNX models against ONNX Runtime (`fusec.bench.imported`): only when named."""
WHOLE_MODELS = ("torch_bert", "torch_gpt2", "torch_llama")
"""Whole Hugging Face models through ``torch.compile(backend="fusec")`` against eager and
Inductor (`fusec.bench.whole_models`): only when named."""
SPECIAL = ("bandwidth", "overhead", "compile", *IMPORTED, *WHOLE_MODELS)
NAMED_ONLY = (*IMPORTED, *WHOLE_MODELS)


@dataclass
class SuiteResult:
    rows: list[WorkloadResult] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    """``host_overhead`` and ``compile_time`` summaries, when run."""
    lines: list[str] = field(default_factory=list)
    """Text for the special measurements, printed under the table."""

    def problems(self) -> list[str]:
        """One line per runner whose output was wrong, and per fusec failure."""
        found = []
        for row in self.rows:
            for r in row.runners:
                if r.status == WRONG or (r.status == FAILED and r.name == "fusec"):
                    found.append(f"{row.workload.name}: {r.name}: {r.status}: {r.reason}")
        for which in ("cold", "warm"):
            entry = self.extra.get("compile_time", {}).get(which, {})
            if entry.get("status") == "failed" and "unavailable" not in entry.get("reason", ""):
                found.append(f"compile ({which}): {entry['reason']}")
        for name in NAMED_ONLY:
            entry = self.extra.get(name, {})
            if entry.get("status") in ("wrong", "failed"):
                found.append(f"{name}: fusec: {entry['status']}: {entry.get('reason', '')}")
        return found


@dataclass(frozen=True)
class Plan:
    workloads: list[Workload]
    specials: list[str]


def plan(names: Sequence[str], device: str) -> Plan:
    """What `names` select on `device`: every table workload and both probes when empty.
    Raises ValueError for an unknown name."""
    regular = [n for n in names if n not in SPECIAL]
    specials = ([n for n in names if n in SPECIAL] if names
                else [n for n in SPECIAL if n not in NAMED_ONLY])
    return Plan(select(regular, device) if regular or not names else [], specials)


def run_suite(chosen: Plan, peers: Sequence[Peer], settings: Settings,
              progress: Callable[[str], None],
              checkpoint: Callable[[SuiteResult], None] = lambda suite: None) -> SuiteResult:
    """Runs the planned workloads, then the planned probes, on settings.device; `checkpoint`
    sees the results so far after each step (a run cut short still leaves them)."""
    workloads, specials = chosen.workloads, chosen.specials
    suite = SuiteResult()
    suite.extra["load_average_start"] = load_average()
    for i, workload in enumerate(workloads, 1):
        progress(f"[{i}/{len(workloads)}] {workload.name}: {workload.summary}")
        start = time.perf_counter()
        row = run_workload(workload, peers, settings)
        suite.rows.append(row)
        progress(f"    {summary_line(row)}  ({time.perf_counter() - start:.0f} s)")
        checkpoint(suite)
    if "bandwidth" in specials:
        progress("copy bandwidth: float4 copy kernel")
        summary = special.copy_bandwidth(settings)
        suite.extra["copy_bandwidth"] = summary
        checkpoint(suite)
        suite.lines.extend(special.bandwidth_lines(summary))
    if "overhead" in specials:
        progress("host overhead: matmul chains")
        rows, summary = special.host_overhead(list(peers), settings)
        suite.rows.extend(rows)
        suite.extra["host_overhead"] = summary
        checkpoint(suite)
        suite.lines.extend(special.overhead_lines(summary))
    if "compile" in specials:
        progress(f"compile time: {special.COMPILE_LAYERS}-layer BERT, cold then warm process")
        summary = special.compile_time(settings)
        suite.extra["compile_time"] = summary
        checkpoint(suite)
        suite.lines.extend(special.compile_lines(summary))
    for name in (n for n in IMPORTED if n in specials):
        from fusec.bench import imported

        progress(f"{name}: {imported.MODELS[name][0]}, fusec vs onnxruntime")
        summary = imported.run_imported(name, settings)
        suite.extra[name] = summary
        checkpoint(suite)
        suite.lines.extend(imported.imported_lines(summary))
    for name in (n for n in WHOLE_MODELS if n in specials):
        from fusec.bench import whole_models

        progress(f"{name}: whole model through torch.compile(backend='fusec'), "
                 "against eager and Inductor")
        summary = whole_models.run_whole_model(name, settings)
        suite.extra[name] = summary
        checkpoint(suite)
        suite.lines.extend(whole_models.whole_model_lines(summary))
    suite.extra["load_average_end"] = load_average()
    suite.extra["cpu_count"] = os.cpu_count()
    return suite


def load_average() -> float | None:
    """The 1-minute load average (how busy the shared machine was), where the OS tells it."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def summary_line(row: WorkloadResult) -> str:
    """One progress line: each runner's median wall time (and device time), or its status."""
    parts = []
    for r in row.runners:
        if r.wall is None:
            parts.append(f"{r.name} {r.status}")
            continue
        text = f"{r.name} {r.wall.median_ms:.4g}"
        if r.device is not None:
            text += f" (dev {r.device.median_ms:.4g})"
        parts.append(text)
    return " | ".join(parts) + " ms"


def render(suite: SuiteResult, settings: Settings, peer_names: Sequence[str]) -> str:
    tables = [report.to_table(suite.rows, settings, peer_names)] if suite.rows else []
    start, end = suite.extra.get("load_average_start"), suite.extra.get("load_average_end")
    load = (f"load average {start:.1f} at the start, {end:.1f} at the end, "
            f"{suite.extra.get('cpu_count')} cpus" if start is not None and end is not None
            else "")
    return "\n".join([*tables, *suite.lines, *([load] if load else [])])
