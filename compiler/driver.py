"""``fusec.compile``: from IR text (or a parsed module) to an `Executable` on a device.

    exe = fusec.compile(open("model.mlir").read())
    (out,) = exe(x, w)            # or exe(x=x, w=w); numpy arrays in, numpy arrays out

    exe = fusec.compile(text, params={"w": w})   # w stays on the device: calls take x only
    (out,) = exe(x)

Steps: parse and verify (one-line errors with ``file:line:col``), run the fusion ``pipeline``
(default: the ``default`` fusion pipeline; ``""`` or ``"none"`` for none), then ``lower-opencl``,
then read the host schedule into a plan, select the device and build the program (once per
source, device and options, see ``fusec.runtime.program_cache``). The device's kind reaches the
lowering as its ``device`` option, and its `DeviceInfo` the kernel templates; its global memory
size is launch fusion's default budget (``fuse-launches``: ``launch_budget=`` bytes,
``launch_fusion=False`` for none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, Source, parse_module
from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.program import PlanError, build_plan
from fusec.compiler.pipeline import run_pipeline
from fusec.lowering.lower_to_kernels import lower_opencl_spec
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable
from fusec.codegen.plan import ProgramPlan


@dataclass(frozen=True)
class Compiled:
    """The kernel-level module and the plan made from it (for tools that show them)."""

    module: ModuleOp
    plan: ProgramPlan


def load(source_or_module: str | ModuleOp, name: str = "<input>") -> ModuleOp:
    """A verified module: the text parsed, or a clone of the given module."""
    if isinstance(source_or_module, ModuleOp):
        return source_or_module.clone()
    return parse_module(make_context(), Source(source_or_module, name))


def select_function(module: ModuleOp, function: str | None, filename: str = "<input>") -> str:
    """The name of the function to compile; one-line error if missing or ambiguous."""
    names = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
    if function is None:
        if len(names) != 1:
            listed = ", ".join(f"@{n}" for n in names) or "none"
            raise FusecError(
                f"{filename}: error: expected exactly one func.func, found {listed}; name one"
            )
        return names[0]
    if function not in names:
        listed = ", ".join(f"@{n}" for n in names) or "none"
        raise FusecError(
            f"{filename}: error: no function @{function} in the module (functions: {listed})"
        )
    return function


def lower(
    module: ModuleOp,
    function: str | None = None,
    pipeline: str = "default",
    device_info: DeviceInfo | None = None,
    filename: str = "<input>",
    launch_budget: int | None = None,
    launch_fusion: bool = True,
) -> Compiled:
    """Fuses, lowers and plans ``module`` in place. Launch fusion's budget is ``launch_budget``
    bytes, by default the device's global memory size."""
    name = select_function(module, function, filename)
    ctx = make_context()
    spec = "" if pipeline in ("", "none") else pipeline
    # The device's memory as the default budget; a kernel alone over it is left to the
    # runtime, which says what does not fit (an explicit budget fails the pass instead).
    device_default = launch_budget is None and device_info is not None
    if device_default and device_info is not None:
        launch_budget = device_info.global_mem_size
    lowering = lower_opencl_spec(
        device_info.kind if device_info else None, launch_budget, launch_fusion,
        allow_oversized=device_default,
    )
    run_pipeline(ctx, module, ",".join(s for s in (spec, lowering) if s), filename)
    try:
        plan = build_plan(module, name, device_info)
    except (PlanError, ValueError) as e:
        raise FusecError(f"{filename}: error: {e}") from None
    return Compiled(module, plan)


def compile(  # noqa: A001 - the public name the package exports
    source_or_module: str | ModuleOp,
    function: str | None = None,
    pipeline: str = "default",
    device: str = "auto",
    platform: str | None = None,
    filename: str = "<input>",
    params: Mapping[str, np.ndarray] | None = None,
    launch_budget: int | None = None,
    launch_fusion: bool = True,
) -> Executable:
    """Compiles one function of ``source_or_module`` for a device; see the module docstring.

    ``params`` binds inputs (by name) to the device once, as `Executable.bind` does: a call
    then takes only the other inputs. ``launch_budget`` (bytes, default the device's global
    memory size) bounds what one merged launch touches; ``launch_fusion=False`` keeps one
    launch per kernel.
    """
    dev = select_device(device, platform)  # type: ignore[arg-type]
    module = load(source_or_module, filename)
    compiled = lower(module, function, pipeline, DeviceInfo.from_device(dev.device), filename,
                     launch_budget, launch_fusion)
    return Executable(compiled.plan, dev, params)
