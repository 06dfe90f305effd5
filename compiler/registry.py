"""Every pass fusec-opt knows, by command-line name.

``get_all_passes()`` maps each name to a getter that imports the pass lazily, as
``xdsl.transforms.get_all_passes`` does, so that start-up does not import every pass. The graph
rewrites come from `fusec.passes`, the kernel-IR passes from `fusec.lowering`, and three
general passes from xDSL.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

from fusec.lowering import LOWERING_PASSES
from fusec.passes import GRAPH_PASSES

# CLI name -> (module, class name) of the xDSL passes fusec reuses.
_XDSL_PASSES: dict[str, tuple[str, str]] = {
    "canonicalize": ("xdsl.transforms.canonicalize", "CanonicalizePass"),
    "cse": (
        "xdsl.transforms.common_subexpression_elimination",
        "CommonSubexpressionElimination",
    ),
    "dce": ("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
}

XDSL_SUMMARIES: dict[str, str] = {
    "canonicalize": "Applies the canonicalization patterns of every loaded dialect (xDSL).",
    "cse": "Common subexpression elimination (xDSL).",
    "dce": "Removes ops whose results are unused and that have no side effects (xDSL).",
}


def _getter(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def get() -> type[ModulePass]:
        return getattr(importlib.import_module(module), cls)

    return get


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass fusec-opt knows, by CLI name, in a stable (sorted) order."""
    table = {name: (f"fusec.passes.{mod}", cls) for name, (mod, cls) in GRAPH_PASSES.items()}
    table.update(
        {name: (f"fusec.lowering.{mod}", cls) for name, (mod, cls) in LOWERING_PASSES.items()}
    )
    table.update(_XDSL_PASSES)
    return {name: _getter(*table[name]) for name in sorted(table)}
