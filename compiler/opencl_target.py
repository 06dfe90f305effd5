"""``fusec-opt -t opencl``: the OpenCL C of every function's kernels.

The input may be kernel-level IR (after ``-p lower-opencl``) or tensor-level IR, which is lowered
first with ``lower-opencl`` for the device. The output is, per function, a comment naming it and
its launches, then the program source the runtime builds for it. ``device=gpu`` picks the GPU
shapes of the generated kernels and of the kernel templates (default ``cpu``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.target import Target

from fusec.compiler.diagnostics import FusecError
from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.program import build_plan, host_functions
from fusec.lowering.lower_to_kernels import lower_opencl_spec

DEVICES = {
    "cpu": DeviceInfo(name="generic CPU", is_cpu=True),
    "gpu": DeviceInfo(name="generic GPU", is_cpu=False),
}


def is_tensor_level(module: ModuleOp) -> bool:
    for fn in host_functions(module):
        types = [*fn.function_type.inputs.data, *fn.function_type.outputs.data]
        if any(isinstance(t, TensorType) for t in types):
            return True
    return any(op.dialect_name() in ("nn", "fused") for op in module.walk())


@dataclass(frozen=True)
class OpenCLTarget(Target):
    name = "opencl"

    device: str = "cpu"
    """Which template variants to print: cpu or gpu."""

    def __post_init__(self) -> None:
        if self.device not in DEVICES:  # a command-line error (exit 2), before anything runs
            raise ValueError(f"device '{self.device}' is not one of {', '.join(DEVICES)}")

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if is_tensor_level(module):
            from fusec.compiler.pipeline import run_pipeline

            run_pipeline(ctx, module, lower_opencl_spec(self.device))
        for fn in host_functions(module):
            assert isinstance(fn, func.FuncOp)
            try:
                plan = build_plan(module, fn.sym_name.data, DEVICES[self.device])
            except ValueError as e:
                raise FusecError(f"opencl target: {e}") from None
            launches = ", ".join(launch.kernel for launch in plan.launches) or "none"
            output.write(f"// @{plan.function}: {len(plan.launches)} launches: {launches}\n")
            output.write(plan.source)
