"""``fusec-bench --plot FILE.svg|png``: the benchmark table as a chart.

One group of bars per workload: fusec and each peer, as the ratio of its time to the best peer's
(so the best peer is 1 and lower is better), on a log scale. Two panels side by side: wall time,
and kernel time (fusec's profiled kernel time against the best peer's kernel time where the peer
reports one, as torch on a GPU does, else against its wall time). Reads the JSON document that
``fusec-bench --json``/``--json-out`` writes (``bench.report.to_json``), so a chart can be drawn
again later from a saved result (``--from FILE.json``).

matplotlib is an optional extra (``pip install 'fusec[plot]'``); without it ``PlotError`` says so.
The file is written to a temporary name and renamed, and SVG output is deterministic.
"""

from __future__ import annotations

import math
import os
from typing import Any

from fusec.files import OutputError, atomic_write

FUSEC = "fusec"
FORMATS = ("svg", "png")
COLORS = {"fusec": "#1f6fb2", "numpy": "#999999", "torch": "#ee4c2c",
          "torch.compile": "#f29b38", "onnxruntime": "#5c9e31"}


class PlotError(Exception):
    """A chart that cannot be drawn; the message is one line."""


def times(workload: dict[str, Any], key: str) -> dict[str, float]:
    """Runner -> its time under ``key`` (``median_ms`` or ``device_median_ms``), where it ran."""
    return {name: r[key] for name, r in workload.get("results", {}).items()
            if r.get("status") == "ok" and isinstance(r.get(key), (int, float)) and r[key] > 0}


def ratios_to_best_peer(workload: dict[str, Any], kernel: bool) -> dict[str, float]:
    """Runner -> time / best peer's time; empty when no peer ran."""
    wall = times(workload, "median_ms")
    peers = {n: t for n, t in wall.items() if n != FUSEC}
    if not peers:
        return {}
    if not kernel:
        best = min(peers.values())
        return {n: t / best for n, t in wall.items()}
    device = times(workload, "device_median_ms")
    if FUSEC not in device:
        return {}
    peer_times = {n: device.get(n, t) for n, t in peers.items()}
    best = min(peer_times.values())
    return {FUSEC: device[FUSEC] / best} | {n: t / best for n, t in peer_times.items()}


def runner_order(document: dict[str, Any]) -> list[str]:
    return [FUSEC, *[p for p in document.get("peers", []) if p != FUSEC]]


def minor_label(value: float, _position: object) -> str:
    """Labels 2 and 5 of each decade between the powers of ten."""
    leading = round(value / 10 ** math.floor(math.log10(value))) if value > 0 else 0
    return f"{value:g}" if leading in (2, 5) else ""


def check_path(path: str) -> None:
    """`PlotError` unless ``path`` names a format `draw` writes (checked before a benchmark
    runs, not after)."""
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if fmt not in FORMATS:
        raise PlotError(f"{path}: --plot writes .svg or .png, not '.{fmt or '(none)'}'")


def draw(document: dict[str, Any], path: str) -> None:
    """Writes the chart of ``document`` to ``path`` (``.svg`` or ``.png``)."""
    check_path(path)
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    workloads = [w for w in document.get("workloads", []) if ratios_to_best_peer(w, False)]
    if not workloads:
        raise PlotError("nothing to plot: no workload has a peer result")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'fusec[plot]'") from None
    matplotlib.rcParams["svg.hashsalt"] = "fusec"
    runners = [r for r in runner_order(document)
               if any(r in ratios_to_best_peer(w, k) for w in workloads for k in (False, True))]
    names = [w["name"] for w in workloads]
    width = 0.8 / len(runners)
    fig, axes = plt.subplots(1, 2, figsize=(max(8.0, 1.1 * len(names) + 3), 4.8), sharey=True)
    for ax, kernel in zip(axes, (False, True), strict=True):
        for i, runner in enumerate(runners):
            xs, ys = [], []
            for x, w in enumerate(workloads):
                value = ratios_to_best_peer(w, kernel).get(runner)
                if value is not None:
                    xs.append(x - 0.4 + width * (i + 0.5))
                    ys.append(value)
            bars = ax.bar(xs, ys, width, label=runner, color=COLORS.get(runner, f"C{i}"))
            if runner == FUSEC:
                ax.bar_label(bars, [f"{y:.2f}" for y in ys], fontsize=7, padding=1)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(minor_label))
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right", fontsize=8)
        ax.set_title("kernel time" if kernel else "wall time", fontsize=10)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("time / best peer's (lower is better)")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"fusec-bench, device {document.get('device', '?')}, "
                 f"pipeline '{document.get('pipeline', '?')}'", fontsize=11)
    fig.tight_layout()
    metadata = {"Date": None} if fmt == "svg" else None
    try:
        atomic_write(path, lambda f: fig.savefig(f, format=fmt, metadata=metadata))
    except OutputError as e:
        raise PlotError(str(e)) from None
    finally:
        plt.close(fig)
