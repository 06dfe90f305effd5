"""The benchmark's output: a text table for people and a JSON document for machines.

Each row is a workload. fusec's columns: kernels per call, median wall time of a call (the
upload of the inputs, the kernels, the download of the outputs and the single wait), median
kernel time from OpenCL profiling events, and the achieved rate on each (GFLOP/s for
programs with matmuls or attention, else GB/s of the fewest bytes a call must move: each input
read once, each output written once). Then each peer's median wall time and the ratio
fusec / peer on wall times (below 1: fusec is faster). Where a peer also has a device time
(PyTorch on CUDA, by CUDA events), its cell adds ``| device ms (kernel ratio)``, the ratio of
fusec's kernel time to it. A cell that could not be measured says why in a numbered note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusec.bench.fusec_runner import NAME as FUSEC
from fusec.bench.harness import OK, RunnerResult, Settings, WorkloadResult


def rate(result: WorkloadResult, ms: float) -> tuple[float, str]:
    """The achieved rate at `ms` per call: (value, unit)."""
    flops = result.graph.flops()
    if flops:
        return flops / ms / 1e6, "GFLOP/s"
    return result.graph.io_bytes() / ms / 1e6, "GB/s"


def ratios(fusec: RunnerResult | None, peer: RunnerResult) -> tuple[float | None, float | None]:
    """(fusec wall / peer wall, fusec kernel time / peer device time), where both exist."""
    if fusec is None or peer.status != OK:
        return None, None
    wall = (fusec.wall.median_ms / peer.wall.median_ms
            if fusec.wall is not None and peer.wall is not None else None)
    device = (fusec.device.median_ms / peer.device.median_ms
              if fusec.device is not None and peer.device is not None else None)
    return wall, device


def runner_json(r: RunnerResult) -> dict[str, Any]:
    out: dict[str, Any] = {"status": r.status}
    if r.reason:
        out["reason"] = r.reason
    if r.error is not None:
        out["relative_error"] = r.error
    if r.wall is not None:
        out |= {"median_ms": r.wall.median_ms, "min_ms": r.wall.min_ms,
                "samples_ms": [round(t, 4) for t in r.wall.samples_ms]}
    if r.device is not None:
        out["device_median_ms"] = r.device.median_ms
    return out | r.details


def workload_json(result: WorkloadResult) -> dict[str, Any]:
    w = result.workload
    fusec = result.runner(FUSEC)
    entry: dict[str, Any] = {
        "name": w.name, "group": w.group, "summary": w.summary,
        "flops": result.graph.flops(), "bytes": result.graph.io_bytes(),
        "results": {r.name: runner_json(r) for r in result.runners},
        "ratios": {}, "device_ratios": {},
    }
    if fusec is not None and fusec.wall is not None:
        value, unit = rate(result, fusec.wall.median_ms)
        entry["fusec_rate"] = {"value": value, "unit": unit}
        if fusec.device is not None:
            value, unit = rate(result, fusec.device.median_ms)
            entry["fusec_kernel_rate"] = {"value": value, "unit": unit}
    for r in result.runners:
        if r.name == FUSEC:
            continue
        wall, device = ratios(fusec, r)
        if wall is not None:
            entry["ratios"][r.name] = wall
        if device is not None:
            entry["device_ratios"][r.name] = device
    return entry


def to_json(results: Sequence[WorkloadResult], settings: Settings, peers: Sequence[str],
            extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "device": settings.device, "repeat": settings.repeat, "warmup": settings.warmup,
        "pipeline": settings.pipeline, "peers": list(peers),
        "input_alignment": settings.input_alignment, "fusec_arrays": settings.fusec_arrays,
        "workloads": [workload_json(r) for r in results], **extra,
    }


def ms(value: float) -> str:
    return f"{value:.3g}" if value < 1000 else f"{value:.0f}"


def peer_cell(r: RunnerResult | None, fusec: RunnerResult | None, notes: list[str]) -> str:
    if r is None:
        return "-"
    if r.status != OK or r.wall is None:
        notes.append(f"{r.name}: {r.status}: {r.reason}")
        return f"{r.status} [{len(notes)}]"
    wall, device = ratios(fusec, r)
    text = ms(r.wall.median_ms) + (f" ({wall:.2f})" if wall is not None else "")
    if r.device is not None:
        text += f" | {ms(r.device.median_ms)}" + (f" ({device:.2f})" if device is not None
                                                   else "")
    return text


def fusec_cells(result: WorkloadResult, notes: list[str]) -> list[str]:
    """kernels, wall ms, rate on wall, kernel ms, rate on kernel time."""
    fusec = result.runner(FUSEC)
    if fusec is None:
        return ["-"] * 5
    if fusec.status != OK or fusec.wall is None:
        notes.append(f"fusec: {fusec.status}: {fusec.reason}")
        return ["-", f"{fusec.status} [{len(notes)}]", "-", "-", "-"]
    value, unit = rate(result, fusec.wall.median_ms)
    cells = [str(fusec.details.get("kernels", "?")), ms(fusec.wall.median_ms),
             f"{value:.1f} {unit}", "-", "-"]
    if fusec.device is not None:
        value, unit = rate(result, fusec.device.median_ms)
        cells[3:] = [ms(fusec.device.median_ms), f"{value:.1f} {unit}"]
    return cells


def to_table(results: Sequence[WorkloadResult], settings: Settings, peers: Sequence[str]) -> str:
    columns = ["workload", "kern", "fusec ms", "rate", "kernel ms", "kernel rate", *peers]
    rows: list[list[str]] = []
    notes: list[str] = []
    for result in results:
        rows.append([result.workload.name, *fusec_cells(result, notes),
                     *(peer_cell(result.runner(p), result.runner(FUSEC), notes)
                       for p in peers)])
    widths = [max(len(row[i]) for row in [columns, *rows]) for i in range(len(columns))]
    lines = [f"device {settings.device}, pipeline '{settings.pipeline}': median ms of at least "
             f"{settings.repeat} calls after {settings.warmup} warm-up; (x) = fusec / peer, "
             "below 1 means fusec is faster; 'a | b': wall | device time; inputs "
             + (f"{settings.input_alignment}-byte aligned" if settings.input_alignment
                else "as numpy allocates them")
             + f"; fusec arrays: {settings.fusec_arrays}"]
    for row in [columns, *rows]:
        lines.append("  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True))
                     .rstrip())
    lines.extend(f"[{i}] {note}" for i, note in enumerate(notes, 1))
    return "\n".join(lines)
