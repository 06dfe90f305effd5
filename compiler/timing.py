"""``--timing``: wall time per step of a compile, as a table on stderr (as ``--mlir-timing``).

Rows: ``parse``, each pass in pipeline order, ``verify`` (after parsing and after each pass),
``print``; the order is fixed, only the numbers change from run to run. A pass that
runs twice in a pipeline has a row per run (``cse``, ``cse #2``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# Rows shown after the passes, in this order, wherever they first ran.
LAST = ("verify", "print")


class Timing:
    """Wall seconds per step label, summed over the chunks of ``--split-input-file``."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._inner: list[float] = []
        """Per open `measure`, the seconds of the measures nested in it."""

    @contextmanager
    def measure(self, label: str) -> Iterator[None]:
        """Adds the block's time to ``label``, less that of the measures nested in it (parsing
        verifies the module: that time is ``verify``'s, not ``parse``'s)."""
        start = time.perf_counter()
        self._inner.append(0.0)
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self.add(label, elapsed - self._inner.pop())
            if self._inner:
                self._inner[-1] += elapsed

    def add(self, label: str, seconds: float) -> None:
        self.seconds[label] = self.seconds.get(label, 0.0) + seconds

    def report(self) -> str:
        total = sum(self.seconds.values())
        rule = "===" + "-" * 72 + "==="
        lines = [
            rule,
            "fusec-opt execution time report".center(len(rule)).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        last = [label for label in LAST if label in self.seconds]
        rows = [label for label in self.seconds if label not in last] + last
        for label in rows:
            seconds = self.seconds[label]
            share = 100.0 * seconds / total if total > 0 else 0.0
            lines.append(f"  {seconds:10.4f} ({share:5.1f}%)  {label}")
        lines.append(f"  {total:10.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


def pass_labels(names: list[str]) -> list[str]:
    """One label per pass run: its name, ``name #2`` for its second run, and so on."""
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return labels
