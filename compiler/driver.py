"""``fusec.compile``: from IR text (or a parsed module) to an `Executable` on a device.

    exe = fusec.compile(open("model.mlir").read())
    (out,) = exe(x, w)            # or exe(x=x, w=w); numpy arrays in, numpy arrays out

    exe = fusec.compile(text, params={"w": w})   # w stays on the device: calls take x only
    (out,) = exe(x)

Steps: parse and verify (one-line errors with ``file:line:col``), run the fusion ``pipeline``
(default: the ``default`` fusion pipeline; ``""`` or ``"none"`` for none), then ``lower-opencl``,
then read the host schedule into a plan, select the device and build the program (once per
source, device and options, see ``fusec.runtime.program_cache``). The device's kind reaches the
lowering as its ``device`` option, and its `DeviceInfo` the kernel templates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, Source, parse_module
from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.program import PlanError, build_plan
from fusec.compiler.onnx_driver import (
    OnnxExecutable,
    import_onnx,
    is_onnx_source,
    module_params,
)
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
) -> Compiled:
    """Fuses, lowers and plans ``module`` in place."""
    name = select_function(module, function, filename)
    ctx = make_context()
    spec = "" if pipeline in ("", "none") else pipeline
    lowering = lower_opencl_spec(device_info.kind if device_info else None)
    run_pipeline(ctx, module, ",".join(s for s in (spec, lowering) if s), filename)
    try:
        plan = build_plan(module, name, device_info)
    except (PlanError, ValueError) as e:
        raise FusecError(f"{filename}: error: {e}") from None
    return Compiled(module, plan)


def compile(  # noqa: A001 - the public name the package exports
    source_or_module: str | ModuleOp | object,
    function: str | None = None,
    pipeline: str = "default",
    device: str = "auto",
    platform: str | None = None,
    filename: str = "<input>",
    params: Mapping[str, np.ndarray] | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
) -> Executable | OnnxExecutable:
    """Compiles one function of ``source_or_module`` for a device; see the module docstring.

    ``params`` binds inputs (by name) to the device once, as `Executable.bind` does: a call
    then takes only the other inputs. IR whose module names a weights file (``fusec.params``,
    written by ``fusec-import``; found relative to ``filename``) binds those weights unless
    ``params`` is given. An ``onnx.ModelProto`` or the path of a ``.onnx`` file is imported
    first (``shapes`` fixes its dynamic input dimensions), see `fusec.compiler.onnx_driver`.
    """
    if is_onnx_source(source_or_module):
        imported = import_onnx(source_or_module, shapes,
                               None if filename == "<input>" else filename)
        exe = compile_module(imported.module, None, pipeline, device, platform, filename,
                             imported.params)
        return OnnxExecutable(exe, imported)
    module = load(source_or_module, filename)  # type: ignore[arg-type]
    if params is None:
        params = module_params(module, filename)
    return compile_module(module, function, pipeline, device, platform, filename, params)


def compile_module(
    module: ModuleOp,
    function: str | None,
    pipeline: str,
    device: str,
    platform: str | None,
    filename: str,
    params: Mapping[str, np.ndarray] | None,
) -> Executable:
    """`compile` of a verified module, which it lowers in place."""
    dev = select_device(device, platform)  # type: ignore[arg-type]
    compiled = lower(module, function, pipeline, DeviceInfo.from_device(dev.device), filename)
    return Executable(compiled.plan, dev, params)
