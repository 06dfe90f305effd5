"""Output targets for ``fusec-opt -t``: ``mlir`` (the IR, custom or generic form) and the
backends that later stages register."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.utils.target import Target

from fusec.compiler.diagnostics import FusecError

# name -> lazy getter of the Target class
_TARGETS: dict[str, Callable[[], type[Target]]] = {
    "mlir": lambda: MLIRTarget,
    "opencl": lambda: _opencl_target(),
    "dot": lambda: _dot_target(),
}


def _opencl_target() -> type[Target]:
    from fusec.compiler.opencl_target import OpenCLTarget

    return OpenCLTarget


def _dot_target() -> type[Target]:
    from fusec.compiler.dot_target import DotTarget

    return DotTarget


def target_names() -> list[str]:
    return sorted(_TARGETS)


def build_target(spec: str, print_generic: bool = False) -> Target:
    """The target named by ``spec`` (``name`` or ``name{opt=val}``); one-line error if unknown."""
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as e:
        raise FusecError(f"invalid target '{spec}': {' '.join(str(e).split())}") from None
    if len(specs) != 1 or specs[0].name not in _TARGETS:
        raise FusecError(f"unknown target '{spec}' (known: {', '.join(target_names())})")
    try:
        target = _TARGETS[specs[0].name]().from_spec(specs[0])
    except (ValueError, TypeError) as e:
        raise FusecError(f"bad options for target '{specs[0].name}': {e}") from None
    if isinstance(target, MLIRTarget) and print_generic:
        target = dataclasses.replace(target, print_generic_format=True)
    return target
