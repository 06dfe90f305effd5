"""Every pass fusec-opt knows, by command-line name.

``get_all_passes()`` maps each name to a getter that imports the pass lazily, as
``xdsl.transforms.get_all_passes`` does, so that start-up does not import every pass. The graph
rewrites come from `fusec.passes`, the kernel-IR passes from `fusec.lowering`, and three
general passes from xDSL. `pass_infos()` describes each for `fusec-opt --list-passes` and for
the generated reference in docs/passes.md (`fusec.tools.docs_pages`).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.passes import ModulePass, get_pass_option_infos

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


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, as a pipeline spec writes it (`fuse-foo{max-steps=8}`)."""

    name: str
    kind: str
    default: str | None
    """The default as a pipeline spec writes it (``relu,gelu``, ``true``); None: required."""


@dataclass(frozen=True)
class PassInfo:
    """What a pass is, for its users: its CLI name, where it lives, its documentation."""

    name: str
    module: str
    doc: str
    """The whole documentation: a fusec pass's module docstring, fusec's line for an xDSL one."""
    options: tuple[PassOption, ...]

    @property
    def summary(self) -> str:
        """The first paragraph of `doc`, on one line."""
        return " ".join(self.doc.split("\n\n")[0].split())


def pass_doc(cls: type[ModulePass]) -> str:
    """A pass's documentation: for a fusec pass its module docstring, for a reused xDSL pass
    fusec's own summary."""
    if cls.__module__.startswith("fusec."):
        doc = sys.modules[cls.__module__].__doc__ or cls.__doc__ or ""
    else:
        doc = XDSL_SUMMARIES.get(cls.name) or cls.__doc__ or ""
    return doc.strip()


def option_default(text: str) -> str:
    """A pass option's default as it is written in a pipeline spec: ``('relu', 'gelu')`` ->
    ``relu,gelu``, ``True`` -> ``true``."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value) or "(empty)"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def pass_infos() -> list[PassInfo]:
    """Every pass fusec-opt knows, described, in `get_all_passes()`'s order."""
    infos = []
    for name, get in get_all_passes().items():
        cls = get()
        options = tuple(
            PassOption(
                info.name.replace("_", "-"),
                info.expected_type.strip("'\""),
                None if info.default_value is None else option_default(info.default_value),
            )
            for info in get_pass_option_infos(cls)
        )
        infos.append(PassInfo(name, cls.__module__, pass_doc(cls), options))
    return infos
