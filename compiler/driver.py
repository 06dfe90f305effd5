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

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusec.codegen.kernels.common import DeviceInfo
from fusec.codegen.kernels.gemm_wgmma import whole_tile
from fusec.codegen.plan import ProgramPlan, StoredLayout, ValueSpec
from fusec.codegen.program import PlanError, argument_name, build_plan, numpy_dtype
from fusec.compiler import progress
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, Source, parse_module
from fusec.compiler.fold_params import Folded, fold_bound, fold_bound_inputs
from fusec.compiler.onnx_driver import (
    OnnxExecutable,
    import_onnx,
    is_onnx_source,
    module_params,
)
from fusec.compiler.pipeline import run_pipeline
from fusec.dialects.bound_inputs import mark_bound
from fusec.knobs import overridden as knobs_overridden
from fusec.lowering.lower_to_kernels import lower_opencl_spec
from fusec.placement.calibration import Setup, load_setup
from fusec.placement.decide import ACCELERATOR, Placement, place
from fusec.placement.devices import DevicePair, find_devices
from fusec.placement.executor import PlacedExecutable, PlacedSegment
from fusec.placement.measured import MeasuredChoice
from fusec.placement.partition import Segment, ValueKeys, partition
from fusec.placement.report import build_report, choice_entry
from fusec.placement.tie import TieCheck, check_tie
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable


@dataclass(frozen=True)
class Compiled:
    """The kernel-level module and the plan made from it (for tools that show them)."""

    module: ModuleOp
    plan: ProgramPlan


def load(source_or_module: str | ModuleOp, name: str = "<input>") -> ModuleOp:
    """A verified module: the text parsed, or a clone of the given module."""
    if isinstance(source_or_module, ModuleOp):
        return source_or_module.clone()
    if not isinstance(source_or_module, str):
        raise TypeError(
            "fusec.compile takes IR text (a str), a ModuleOp, an onnx.ModelProto or the path of "
            f"a .onnx file; got {type(source_or_module).__name__}"
            + (" (for an .mlir file, pass its text and filename=)"
               if isinstance(source_or_module, os.PathLike) else "")
        )
    progress.step(f"parsing {name}")
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
    allow_tf32: bool = False,
    bound: Collection[str] = (),
    layouts: Mapping[str, StoredLayout] | None = None,
) -> Compiled:
    """Fuses, lowers and plans ``module`` in place. Launch fusion's budget is ``launch_budget``
    bytes, by default the device's global memory size; ``allow_tf32`` lets f32 matmuls use TF32
    tensor cores; ``bound`` names the inputs the executable binds at once (weights: a GEMM may
    read one in its own layout, `build_plan`), ``layouts`` how another program over the same
    weights stores them (read so where the kernels can: `PlanBuilder.layouts`)."""
    name = select_function(module, function, filename)
    ctx = make_context()
    spec = "" if pipeline in ("", "none") else pipeline
    # The device's memory as the default budget; a kernel alone over it is left to the
    # runtime, which says what does not fit (an explicit budget fails the pass instead).
    device_default = launch_budget is None and device_info is not None
    if device_default and device_info is not None:
        launch_budget = device_info.global_mem_size
    # A CPU's elementwise kernels run its native float vector per work-item (float16 with
    # AVX-512: t = a*b+c; tanh(t)*a over 2048^2 7-9 -> 2 ms against float4, the tanh calls).
    wide = device_info is not None and device_info.is_cpu and device_info.float_vector_width > 4
    lowering = lower_opencl_spec(
        device_info.kind if device_info else None, launch_budget, launch_fusion,
        allow_oversized=device_default, allow_tf32=allow_tf32,
        vector_width=device_info.float_vector_width if wide and device_info else None,
        max_work_group_size=(device_info.max_work_group_size
                             if device_info is not None and not device_info.is_cpu else None),
        gemm_whole_tile=whole_tile(device_info),
    )
    run_pipeline(ctx, module, ",".join(s for s in (spec, lowering) if s), filename)
    progress.step(f"generating the OpenCL C of @{name}")
    try:
        plan = build_plan(module, name, device_info, bound=bound, layouts=layouts)
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
    offload_thresholds: Mapping[str, str | int | float] | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
    launch_budget: int | None = None,
    launch_fusion: bool = True,
    allow_tf32: bool = False,
    knobs: Mapping[str, bool | str] | None = None,
    example_inputs: Sequence[Any] | None = None,
    report: str | None = None,
    input_values: Mapping[str, np.ndarray] | None = None,
    share_weights: Executable | None = None,
) -> Executable | PlacedExecutable | MeasuredChoice | OnnxExecutable | Any:
    """Compiles one function of ``source_or_module`` for a device; see the module docstring.

    ``params`` binds inputs (by name) to the device once, as `Executable.bind` does: a call
    then takes only the other inputs. With ``device="auto"`` the kernels are placed between
    the CPU and the GPU where both exist (`compile_placed`; ``offload_thresholds`` overrides
    the cost model's thresholds by name); with one device that device runs everything.
    IR whose module names a weights file (``fusec.params``, written by ``fusec-import``; found
    relative to ``filename``) binds those weights unless ``params`` is given. An
    ``onnx.ModelProto`` or the path of a ``.onnx`` file is imported first (``shapes`` fixes its
    dynamic input dimensions; ``input_values`` gives the values of inputs that decide shapes,
    which every call must then repeat) and called with its ONNX input names (`OnnxExecutable`).
    ``launch_budget`` (bytes, default the device's global memory size) bounds what one merged
    launch touches; ``launch_fusion=False`` keeps one launch per kernel.
    ``share_weights`` (an `Executable` of the same device, compiled from the same weights: a
    prefill, for a decode step) stores each bound input as that one does where this program's
    kernels can read it so, and binds each input of ``params`` that it was bound from the same
    array object and stores alike to its device buffer, not a copy (`Executable.borrow`); on
    one device only (``device`` not ``"auto"``).
    ``allow_tf32`` lets f32 matmuls run on TF32 tensor cores (NVIDIA), as PyTorch's flag.
    ``knobs`` sets code-generation knobs for this compile by name (`fusec.knobs`:
    ``{"attention_mma": False}``); the others keep their environment setting or default.
    A ``torch.nn.Module`` is exported with ``example_inputs`` (``torch.export``), a
    ``torch.export.ExportedProgram`` taken as it is; the executable is called with tensors
    (`fusec.compiler.torch_compile`; ``report`` names its JSON report).
    """
    if share_weights is not None and (device == "auto" or is_onnx_source(source_or_module)
                                      or is_torch_source(source_or_module)):
        raise ValueError("share_weights applies to IR compiled for one device "
                         "(device='cpu' or 'gpu')")
    with knobs_overridden(knobs or {}):
        if is_torch_source(source_or_module):
            from fusec.compiler.torch_compile import compile_torch  # imports this module

            return compile_torch(source_or_module, example_inputs, device, report, allow_tf32,
                                 launch_budget, pipeline, knobs=knobs)
        return _compile(source_or_module, function, pipeline, device, platform, filename, params,
                        offload_thresholds, shapes, launch_budget, launch_fusion, allow_tf32,
                        input_values, share_weights)


def _compile(
    source_or_module: str | ModuleOp | object,
    function: str | None,
    pipeline: str,
    device: str,
    platform: str | None,
    filename: str,
    params: Mapping[str, np.ndarray] | None,
    offload_thresholds: Mapping[str, str | int | float] | None,
    shapes: Mapping[str, Sequence[int]] | None,
    launch_budget: int | None,
    launch_fusion: bool,
    allow_tf32: bool,
    input_values: Mapping[str, np.ndarray] | None = None,
    share_weights: Executable | None = None,
) -> Executable | PlacedExecutable | MeasuredChoice | OnnxExecutable:
    """`compile` with its knobs set."""

    if is_onnx_source(source_or_module):
        imported = import_onnx(source_or_module, shapes,
                               None if filename == "<input>" else filename,
                               input_values=input_values)
        exe = _compile(imported.module, None, pipeline, device, platform, filename,
                       imported.params, offload_thresholds, None, launch_budget, launch_fusion,
                       allow_tf32)
        return OnnxExecutable(exe, imported)  # type: ignore[arg-type]
    module = load(source_or_module, filename)  # type: ignore[arg-type]
    if params is None:
        params = module_params(module, filename)
    if device == "auto":
        return compile_placed(module, function, pipeline, platform, filename, params,
                              offload_thresholds, launch_budget=launch_budget,
                              launch_fusion=launch_fusion,
                              allow_tf32=allow_tf32).executable
    if offload_thresholds:
        raise ValueError("offload_thresholds apply to device='auto' only")
    dev = select_device(device, platform)  # type: ignore[arg-type]
    pipeline, params = fuse_and_fold(module, function, pipeline, filename, params)
    layouts = None if share_weights is None else {
        spec.name: spec.layout for spec in share_weights.plan.inputs
        if spec.name in share_weights.params}
    compiled = lower(module, function, pipeline, DeviceInfo.from_device(dev.device), filename,
                     launch_budget, launch_fusion, allow_tf32, bound=list(params or {}),
                     layouts=layouts)
    building(compiled.plan)
    return Executable(compiled.plan, dev, params, share_weights=share_weights)


def is_torch_source(source: object) -> bool:
    """``source`` is a ``torch.nn.Module`` or a ``torch.export.ExportedProgram`` (never
    imports torch: if it was not imported, nothing is)."""
    import sys

    torch = sys.modules.get("torch")
    module = getattr(getattr(torch, "nn", None), "Module", None)
    if not isinstance(module, type):  # no torch, or a stand-in without one
        return False
    return isinstance(source, module | torch.export.ExportedProgram)  # type: ignore[union-attr]


def fuse_and_fold(
    module: ModuleOp,
    function: str | None,
    pipeline: str,
    filename: str,
    params: Mapping[str, np.ndarray] | None,
) -> tuple[str, Mapping[str, np.ndarray] | None]:
    """With bound inputs, runs the fusion `pipeline` on `module` now and folds the data
    movement on bound inputs it leaves (`fold_params`); returns the pipeline still to run
    (``none`` then) and the bound inputs of the new signature. Without, changes nothing."""
    pipeline, folded = fuse_and_fold_with_origins(module, function, pipeline, filename, params)
    return pipeline, params if folded is None else folded.params


def fuse_and_fold_with_origins(
    module: ModuleOp,
    function: str | None,
    pipeline: str,
    filename: str,
    params: Mapping[str, np.ndarray] | None,
) -> tuple[str, Folded | None]:
    """`fuse_and_fold`, with where the bound inputs folded away lie in the folded ones
    (`fold_params.Folded`: its ``params`` and ``origins``); None without bound inputs."""
    if not params:
        return pipeline, None
    name = select_function(module, function, filename)
    spec = "" if pipeline in ("", "none") else pipeline
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    mark_bound(fn, params.keys())
    if spec:
        run_pipeline(make_context(), module, spec, filename)
    return "none", fold_bound(fn, params)


@dataclass(frozen=True)
class Placed:
    """What `compile_placed` gives: the executable (one device's, a `PlacedExecutable` over
    two, or a `MeasuredChoice` between two of those for a near tie) and the offload report
    (`fusec.placement.report`) as it was at compile time (`current_report` adds what the
    executable measured since)."""

    executable: Executable | PlacedExecutable | MeasuredChoice
    report: dict[str, Any]
    function: str
    plans: tuple[ProgramPlan, ...]
    """The model's placement's plans (a near tie's other candidate has plans of its own)."""
    tie: TieCheck | None = None

    def current_report(self) -> dict[str, Any]:
        """The report, with the ``choice`` as it stands now (what was measured so far)."""
        measuring = self.executable if isinstance(self.executable, MeasuredChoice) else None
        return {**self.report, "choice": choice_entry(self.tie, measuring)}


@dataclass(frozen=True)
class LoweringOptions:
    filename: str
    launch_budget: int | None
    launch_fusion: bool
    allow_tf32: bool


def compile_placed(
    source_or_module: str | ModuleOp,
    function: str | None = None,
    pipeline: str = "default",
    platform: str | None = None,
    filename: str = "<input>",
    params: Mapping[str, np.ndarray] | None = None,
    offload_thresholds: Mapping[str, str | int | float] | None = None,
    devices: DevicePair | None = None,
    launch_budget: int | None = None,
    launch_fusion: bool = True,
    allow_tf32: bool = False,
    setup: Setup | None = None,
) -> Placed:
    """Fuses the function, places each unit on the host (CPU) or the accelerator (GPU) by the
    calibrated cost model (`fusec.placement`), lowers each device's segments for that device
    and returns them as one executable. Where every unit lands on one device the result is
    that device's plain `Executable`. Where the model's estimates of the placement and of the
    best other one are a near tie (`fusec.placement.tie`), both are built and the executable
    measures them on its first calls (`MeasuredChoice`). `devices` replaces the devices found
    and `setup` the calibration cache's cost model (tests)."""
    pair = devices or find_devices(platform)
    overrides = parse_thresholds(offload_thresholds or {})
    module = load(source_or_module, filename)
    name = select_function(module, function, filename)
    spec = "" if pipeline in ("", "none") else pipeline
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    mark_bound(fn, (params or {}).keys())
    if spec:
        run_pipeline(make_context(), module, spec, filename)
    if params:
        params = fold_bound_inputs(fn, params)
    single = pair.single
    progress.step("placing the kernels")
    if setup is None:
        setup = load_setup(pair.host, None if single else pair.accelerator)
    setup = replace(setup, thresholds=setup.thresholds.with_overrides(overrides),
                    overrides=dict(overrides))
    placement = place(fn, setup.thresholds, setup.accelerator,
                      single=single[0] if single else None, params=list(params or {}))
    tie = None if single else check_tie(fn, placement, setup.thresholds, setup.accelerator,
                                        list(params or {}))
    options = LoweringOptions(filename, launch_budget, launch_fusion, allow_tf32)
    exe, plans, segments = build_placed(module, name, fn, placement, pair, params, options)
    host = pair.host.description if pair.host else None
    accelerator = pair.accelerator.description if pair.accelerator else None
    note = None
    if not placement.split:
        role = placement.decisions[0].device if placement.decisions else (
            single[0] if single else ACCELERATOR)
        note = pair.note or f"every kernel on the {role} ({pair.device(role).description})"
    measuring = None
    if tie is not None and tie.tie and tie.other is not None:
        other, _, _ = build_placed(module, name, fn, tie.other.placement, pair, params, options)
        measuring = MeasuredChoice([(tie.chosen.name, exe), (tie.other.name, other)],
                                   tie.trials)
    report = build_report(setup, placement, host or "none", accelerator, segments, note=note,
                          choice=choice_entry(tie, measuring))
    return Placed(measuring or exe, report, name, plans, tie)


def build_placed(
    module: ModuleOp,
    name: str,
    fn: func.FuncOp,
    placement: Placement,
    pair: DevicePair,
    params: Mapping[str, np.ndarray] | None,
    options: LoweringOptions,
) -> tuple[Executable | PlacedExecutable, tuple[ProgramPlan, ...], list[Segment]]:
    """The executable of one placement of `fn` (of `module`, fused; neither is changed): one
    device's `Executable` where every unit is on one device (the very one
    ``fusec.compile(device=...)`` makes), else a `PlacedExecutable` of its segments."""
    single = pair.single
    if not placement.split:
        role = placement.decisions[0].device if placement.decisions else (
            single[0] if single else ACCELERATOR)
        dev = pair.device(role)
        compiled = lower(module.clone(), name, "none", DeviceInfo.from_device(dev.device),
                         options.filename, options.launch_budget, options.launch_fusion,
                         options.allow_tf32, bound=list(params or {}))
        building(compiled.plan)
        return Executable(compiled.plan, dev, params), (compiled.plan,), []
    segments = partition(fn, placement)
    placed = []
    for segment in segments:
        dev = pair.device(segment.device)
        compiled = lower(segment.module, segment.name, "none",
                         DeviceInfo.from_device(dev.device), options.filename,
                         options.launch_budget, options.launch_fusion, options.allow_tf32,
                         bound=list(params or {}))
        reads = {s.name for s in compiled.plan.inputs}
        bound = {k: v for k, v in (params or {}).items() if k in reads}
        building(compiled.plan)
        placed.append(PlacedSegment(segment, Executable(compiled.plan, dev, bound)))
    keys = ValueKeys(fn)
    inputs = [ValueSpec(argument_name(a, i), tuple(a.type.get_shape()),  # type: ignore
                        numpy_dtype(a.type.element_type), -1)  # type: ignore[attr-defined]
              for i, a in enumerate(fn.body.block.args)]
    outputs = [keys[v] for v in fn.body.block.last_op.operands]  # type: ignore[union-attr]
    exe = PlacedExecutable(name, inputs, outputs, placed, params)
    return exe, tuple(p.executable.plan for p in placed), segments


def building(plan: ProgramPlan) -> None:
    """Reports the OpenCL build of ``plan`` to the installed progress (the slowest step of
    many compiles)."""
    count = len(plan.kernel_lines)
    progress.step(f"building the OpenCL program of @{plan.function} "
                  f"({count} kernel{'s' if count != 1 else ''})")


def parse_thresholds(overrides: Mapping[str, str | int | float]) -> dict[str, str]:
    """The overrides as strings, checked (OffloadOptionError names the bad one)."""
    from fusec.placement.cost_model import Thresholds

    Thresholds().with_overrides(overrides)
    return {k: str(v) for k, v in overrides.items()}
