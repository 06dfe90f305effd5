"""The offload report (seed 004's `AutoOffloadReport`): as JSON, or as a table for a terminal.

Keys: ``devices`` (host and accelerator, by description; the accelerator None with one
device), ``note`` (why nothing was split, where that is so), ``thresholds`` (the values used,
overrides applied), ``base_source`` (``built-in-default``, ``loaded-from-cache`` or
``calibrated``), ``overrides``, ``cache_path``, ``calibrate_duration_ms``, ``calibration``
(``previous`` thresholds and the ``delta`` of each per-unit cost that changed:
``before``, ``after``, ``absolute``, ``ratio``), ``warnings``, ``decisions`` (the last 128:
``kernel``, ``kind``, ``elements``, ``flops``, ``batch``, ``decision`` (``cpu`` or ``gpu``),
``reason``, ``cpu_estimate_ms``, ``gpu_estimate_ms``, ``threshold``), ``decisions_total``,
``transfers`` (``value``, ``from``, ``to``, ``bytes``, ``estimate_ms``), ``segments``
(``device`` and the kernels each runs) and ``choice`` (None with one device or without a
calibrated accelerator): the model's placement against the best other one
(`fusec.placement.tie`): ``margin``, ``trials``, ``estimate_ratio``, ``tie``, the
``candidates`` (``name``, ``model_choice``, ``estimate_ms``), ``measured`` (whether the
executable measures them), ``chosen`` (the candidate that runs; None while measuring) and,
where measured, `fusec.placement.measured.MeasuredChoice.record`'s ``state``, ``calls``,
``calls_to_decide``, ``times_ms``, ``median_ms`` and ``fastest_ms`` (what decides).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fusec.placement.calibration import Setup
from fusec.placement.cost_model import Thresholds
from fusec.placement.decide import Placement
from fusec.placement.measured import MeasuredChoice
from fusec.placement.partition import Segment
from fusec.placement.tie import TieCheck

DELTA_FIELDS = ("cpu_elem_per_elem", "cpu_reduction_per_elem", "cpu_matmul_per_flop")


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def delta(before: Thresholds, after: Thresholds) -> dict[str, dict[str, float | None]]:
    """The seed's `ThresholdDelta`: each per-unit cost that changed."""
    out: dict[str, dict[str, float | None]] = {}
    for name in DELTA_FIELDS:
        b, a = getattr(before, name), getattr(after, name)
        if b != a:
            out[name] = {"before": b, "after": a, "absolute": a - b,
                         "ratio": a / b if b else None}
    return out


def choice_entry(tie: TieCheck | None, measuring: MeasuredChoice | None) -> dict[str, Any] | None:
    """The report's ``choice`` (module docstring); `measuring` is the executable that measures
    the tie, where it does."""
    if tie is None:
        return None
    entry = tie.as_dict() | {"measured": measuring is not None, "chosen": tie.chosen.name}
    if measuring is not None:
        entry |= measuring.record()
    return entry


def build_report(setup: Setup, placement: Placement, host: str, accelerator: str | None,
                 segments: Sequence[Segment] = (), note: str | None = None,
                 choice: dict[str, Any] | None = None) -> dict[str, Any]:
    calibration = None
    if setup.previous is not None:
        calibration = {"previous": setup.previous.as_dict(),
                       "delta": delta(setup.previous, setup.thresholds)}
    return {
        "devices": {"host": host, "accelerator": accelerator},
        "note": note,
        "thresholds": setup.thresholds.as_dict(),
        "base_source": setup.base_source,
        "overrides": dict(setup.overrides),
        "cache_path": setup.cache_path,
        "calibrate_duration_ms": setup.calibrate_duration_ms,
        "calibration": calibration,
        "warnings": list(setup.warnings),
        "decisions": [{
            "kernel": d.work.label,
            "kind": d.work.kind.value,
            "elements": d.work.elements,
            "flops": d.work.flops,
            "batch": d.work.batch,
            "decision": d.device,
            "reason": d.reason,
            "cpu_estimate_ms": ms(d.cpu_s),
            "gpu_estimate_ms": ms(d.gpu_s),
            "threshold": d.threshold,
        } for d in placement.log()],
        "decisions_total": len(placement.decisions),
        "transfers": [{"value": t.value, "from": t.source, "to": t.target, "bytes": t.nbytes,
                       "estimate_ms": ms(t.seconds)} for t in placement.transfers],
        "segments": [{"device": s.device, "kernels": list(s.labels)} for s in segments],
        "choice": choice,
    }


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def to_table(report: dict[str, Any]) -> str:
    """The report for a terminal: a header, the thresholds, one line per decision."""
    devices = report["devices"]
    lines = [f"offload: host {devices['host']}",
             f"offload: accelerator {devices['accelerator'] or 'none'}"]
    if report.get("note"):
        lines.append(f"offload: {report['note']}")
    lines.append(f"offload: thresholds from {report['base_source']}"
                 + (f" ({report['cache_path']})" if report["cache_path"] else "")
                 + (f", calibrated in {report['calibrate_duration_ms']:.0f} ms"
                    if report["calibrate_duration_ms"] is not None else ""))
    if report["overrides"]:
        lines.append("offload: overrides " + ", ".join(f"{k}={v}" for k, v in
                                                       report["overrides"].items()))
    lines += [f"offload: warning: {w}" for w in report["warnings"]]
    lines.append("  " + "  ".join(f"{k}={_cell(v)}" for k, v in report["thresholds"].items()))
    calibration = report.get("calibration") or {}
    for name, d in (calibration.get("delta") or {}).items():
        lines.append(f"  {name}: {_cell(d['before'])} -> {_cell(d['after'])}"
                     f" (x{_cell(d['ratio'])})")
    header = ("kernel", "elements", "flops", "batch", "decision", "reason", "cpu ms", "gpu ms")
    rows = [header] + [(d["kernel"], _cell(d["elements"]), _cell(d["flops"]), _cell(d["batch"]),
                        d["decision"], d["reason"], _cell(d["cpu_estimate_ms"]),
                        _cell(d["gpu_estimate_ms"])) for d in report["decisions"]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    if report["decisions_total"] > len(report["decisions"]):
        lines.append(f"  (last {len(report['decisions'])} of {report['decisions_total']})")
    for t in report["transfers"]:
        lines.append(f"  transfer {t['value']}: {t['from']} -> {t['to']}, {t['bytes']} bytes"
                     + (f", {t['estimate_ms']:.4g} ms" if t["estimate_ms"] is not None else ""))
    if report.get("choice"):
        lines.append(choice_line(report["choice"]))
    return "\n".join(lines)


def choice_line(choice: dict[str, Any]) -> str:
    """One line: the candidates' estimates, and what was measured (if anything)."""
    estimates = " vs ".join(f"{c['name']}{' (model)' if c['model_choice'] else ''} "
                            f"{_cell(c['estimate_ms'])} ms" for c in choice["candidates"])
    line = f"offload: choice: estimated {estimates}"
    if not choice["measured"]:
        within = "within" if choice["tie"] else "not within"
        return line + f" ({within} the tie margin {choice['margin']:g}): {choice['chosen']}"
    fastest = " vs ".join(f"{n} {_cell(m)} ms" for n, m in choice["fastest_ms"].items())
    if choice["state"] == "measuring":
        return (line + f", a near tie: measuring ({choice['calls']} of "
                f"{choice['calls_to_decide']} calls so far, fastest: {fastest})")
    return (line + f", a near tie: measured over {choice['calls']} calls, fastest {fastest}: "
            f"{choice['chosen']}")
