"""Shrinks a failing program while it still fails the same way.

Greedy, in rounds until nothing changes: keep one output at a time, then cut ops (an op becomes
a function argument of the same name and type, and what only it needed goes), latest ops
first. A candidate counts when the oracle still reports a finding with the same `signature`
(kind and where) as the original's first one. Arguments keep their values (`fuzz.inputs`
draws them by name), so the failing values stay in the smaller program.
"""

from __future__ import annotations

from collections.abc import Callable

from .oracle import Finding
from .program import Program

Oracle = Callable[[Program], list[Finding]]


def minimize(program: Program, finding: Finding, oracle: Oracle, budget: int = 60) -> Program:
    """The smallest program found (within ``budget`` oracle calls) that still shows
    ``finding``'s signature."""
    calls = 0

    def still_fails(candidate: Program) -> bool:
        nonlocal calls
        calls += 1
        return any(f.signature == finding.signature for f in oracle(candidate))

    best = program
    changed = True
    while changed and calls < budget:
        changed = False
        if len(best.outputs) > 1:
            for value in best.outputs:
                candidate = best.with_outputs([value])
                if calls < budget and still_fails(candidate):
                    best, changed = candidate, True
                    break
        for index in reversed(range(len(best.ops))):
            if calls >= budget or index >= len(best.ops):
                continue
            candidate = best.cut(index)
            if candidate.ops and still_fails(candidate):
                best, changed = candidate, True
    return best
