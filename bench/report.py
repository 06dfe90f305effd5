"""The benchmark's output: a text table for people and a JSON document for machines.

Each row is a workload: fusec's median wall time per call, its kernel time where known, its
achieved rate (GFLOP/s for programs with matmuls or attention, else GB/s of the fewest bytes
the call must move), then for each peer its median time and the ratio fusec / peer (below 1:
fusec is faster). A cell that could not be measured says why in a numbered note under the
table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusec.bench.fusec_runner import NAME as FUSEC
from fusec.bench.harness import OK, RunnerResult, Settings, WorkloadResult


def rate(result: WorkloadResult, ms: float) -> tuple[float, str]:
    """fusec's achieved rate at `ms` per call: (value, unit)."""
    flops = result.graph.flops()
    if flops:
        return flops / ms / 1e6, "GFLOP/s"
    return result.graph.io_bytes() / ms / 1e6, "GB/s"


def ratio(fusec: RunnerResult | None, peer: RunnerResult) -> float | None:
    if fusec is None or fusec.wall is None or peer.wall is None:
        return None
    return fusec.wall.median_ms / peer.wall.median_ms


def runner_json(r: RunnerResult) -> dict[str, Any]:
    out: dict[str, Any] = {"status": r.status}
    if r.reason:
        out["reason"] = r.reason
    if r.error is not None:
        out["relative_error"] = r.error
    if r.wall is not None:
        out |= {"median_ms": r.wall.median_ms, "min_ms": r.wall.min_ms,
                "samples_ms": list(r.wall.samples_ms)}
    if r.device is not None:
        out["device_median_ms"] = r.device.median_ms
    return out


def workload_json(result: WorkloadResult) -> dict[str, Any]:
    w = result.workload
    fusec = result.runner(FUSEC)
    entry: dict[str, Any] = {
        "name": w.name, "group": w.group, "summary": w.summary,
        "flops": result.graph.flops(), "bytes": result.graph.io_bytes(),
        "results": {r.name: runner_json(r) for r in result.runners},
        "ratios": {},
    }
    if fusec is not None and fusec.wall is not None:
        value, unit = rate(result, fusec.wall.median_ms)
        entry["fusec_rate"] = {"value": value, "unit": unit}
        for r in result.runners:
            q = ratio(fusec, r)
            if r.name != FUSEC and q is not None:
                entry["ratios"][r.name] = q
    return entry


def to_json(results: Sequence[WorkloadResult], settings: Settings, peers: Sequence[str],
            extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "device": settings.device, "repeat": settings.repeat, "warmup": settings.warmup,
        "pipeline": settings.pipeline, "peers": list(peers),
        "workloads": [workload_json(r) for r in results], **extra,
    }


def cell(r: RunnerResult | None, fusec: RunnerResult | None, notes: list[str]) -> str:
    if r is None:
        return "-"
    if r.status != OK or r.wall is None:
        notes.append(f"{r.name}: {r.status}: {r.reason}")
        return f"{r.status} [{len(notes)}]"
    q = ratio(fusec, r) if r.name != FUSEC else None
    text = f"{r.wall.median_ms:.3g}"
    return f"{text} ({q:.2f})" if q is not None else text


def to_table(results: Sequence[WorkloadResult], settings: Settings, peers: Sequence[str],
             header: str = "") -> str:
    columns = ["workload", "fusec ms", "kernel ms", "fusec rate", *peers]
    rows: list[list[str]] = []
    notes: list[str] = []
    for result in results:
        fusec = result.runner(FUSEC)
        kernel, achieved = "-", "-"
        if fusec is not None and fusec.wall is not None:
            value, unit = rate(result, fusec.wall.median_ms)
            achieved = f"{value:.1f} {unit}"
            if fusec.device is not None:
                kernel = f"{fusec.device.median_ms:.3g}"
        rows.append([result.workload.name, cell(fusec, fusec, notes), kernel, achieved,
                     *(cell(result.runner(p), fusec, notes) for p in peers)])
    widths = [max(len(row[i]) for row in [columns, *rows]) for i in range(len(columns))]
    lines = [header] if header else []
    lines.append(f"device {settings.device}, pipeline '{settings.pipeline}', median of "
                 f"{settings.repeat} calls after {settings.warmup} warm-up; times in ms; "
                 "(x) = fusec / peer, below 1 means fusec is faster")
    for row in [columns, *rows]:
        lines.append("  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True)))
    lines.extend(f"[{i}] {note}" for i, note in enumerate(notes, 1))
    return "\n".join(lines)
