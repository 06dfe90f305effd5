"""``fusec-opt -t dot``: the tensor-level IR as Graphviz DOT text (see ``compiler.dot``).

Options: ``kernels=true`` names, in each op's box, the kernels its OpenCL lowering launches;
``device=cpu|gpu`` picks the lowering's kernel shapes for that (default ``cpu``).

    fusec-opt examples/mlp.mlir -p default -t dot | dot -Tsvg -o mlp.svg
    fusec-opt examples/mlp.mlir -p default -t 'dot{kernels=true device=gpu}'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from fusec.compiler.dot import draw
from fusec.lowering.lower_to_kernels import DEVICES


@dataclass(frozen=True)
class DotTarget(Target):
    name = "dot"

    kernels: bool = False
    """Name each op's kernels (lowers a copy of the module for ``device``)."""

    device: str = "cpu"
    """The device kind whose kernels ``kernels`` names: cpu or gpu."""

    def __post_init__(self) -> None:
        if self.device not in DEVICES:  # a command-line error (exit 2), before anything runs
            raise ValueError(f"device '{self.device}' is not one of {', '.join(DEVICES)}")

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(draw(module, kernels=self.kernels, device=self.device))
