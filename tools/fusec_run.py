"""``fusec-run``: compile a function of fusec IR for an OpenCL device, run it, write the outputs.

    fusec-run model.mlir --random 0 --check
    fusec-run model.mlir --inputs in.npz -o out.npz --device cpu --profile

Inputs come from ``--inputs in.npz`` (keys are the function's argument names as written in the
IR: ``%hidden`` is ``hidden``, an unnamed argument is ``arg0``, ``arg1``, ...) or are random
(``--random SEED``; the default is ``--random 0``). Outputs go to ``-o out.npz`` as ``result0``,
``result1``, ... in return order; without ``-o`` a line per output is printed. IR whose module
names a weights file (``fusec.params``, from ``fusec-import``) gets those weights bound: they
are not inputs. FILE may be an ONNX model (``model.onnx``, imported first; ``--shape
NAME=1x128`` fixes a dynamic input dimension): then the ``.npz`` keys are the ONNX graph input
and output names, and int64 inputs and outputs stay int64; an input whose value decides shapes
(a Reshape's shape given as a graph input) is imported at the value ``--inputs`` gives. A saved
PyTorch ``ExportedProgram`` (``model.pt2``, ``torch.export.save``; PyTorch needed) is imported
likewise: the keys are its user inputs' names, the outputs ``result0``, ..., at the shapes it
was exported with. ``--check``
compares the outputs with the numpy reference executor (run on the program as written, before
fusion); an output passes when ``max |out - ref| <= atol + rtol * max |ref|`` (tolerances by
the output's dtype unless given: f32 1e-4/1e-3, f16 1e-2, bf16 6e-2; normwise: random
weights make long sums whose rounding shows in the elements near zero). ``--profile`` runs
once to warm up, then prints each kernel's time from OpenCL profiling events and the host
overhead of a call. Adjacent launches are merged (``fuse-launches``) under a budget of the
device's global memory size; ``--launch-budget BYTES`` sets it, ``--no-launch-fusion`` keeps
one launch per kernel.

``--generate STEPS --inputs IN.npz`` decodes greedily with FILE's ``@prefill`` and ``@step``
(`fusec.tools.run_generate`, docs/generation.md).

``--device auto`` places each kernel on the CPU or the GPU where both exist (``fusec.placement``:
the cost model, calibrated by ``fusec-calibrate`` or the built-in defaults);
``--offload-threshold NAME=VALUE`` overrides one of its thresholds and ``--offload-report
FILE.json`` writes what was decided and why (``-``: a table on stderr).

Exit codes:
    0  success
    1  bad input: unreadable or invalid IR, a pass that fails, bad or missing input arrays,
       an output that is one of the inputs, a program larger than the device or host memory
    2  bad command line (unknown option, pass or pipeline)
    3  no usable OpenCL device
    4  an OpenCL program failed to build, or a kernel failed to launch (the message starts
       with the file:line:col of the op(s) the kernel computes, and names the kernel)
    5  ``--check`` found an output beyond tolerance
   70  internal error (a bug in fusec)
  130  interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM): no output is left half-written
Every error is one line on stderr (``--verbose`` adds the build log and kernel source).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np

from fusec import __version__, knobs
from fusec.compiler import progress
from fusec.compiler.progress import Progress
from fusec.files import atomic_write, check_distinct_outputs, check_not_input, check_writable
from fusec.tools.cli import EXIT_INPUT, EXIT_USAGE, knob_values, run_cli, show_warnings

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

EXIT_DEVICE = 3
EXIT_BUILD = 4
EXIT_CHECK = 5


class ToolError(Exception):
    """A failure with its exit code; the message is one line."""

    def __init__(self, message: str, code: int, details: str | None = None):
        super().__init__(message)
        self.code = code
        self.details = details


def read_source(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ToolError(f"{path}: error: cannot read input: {e.strerror}", EXIT_INPUT) from None
    except UnicodeDecodeError:
        raise ToolError(f"{path}: error: input is not UTF-8 text", EXIT_INPUT) from None


def load_inputs(path: str, names: list[str]) -> dict[str, np.ndarray]:
    """The arrays of ``path`` by name; every name must be there and no other."""
    arrays = read_arrays(path)
    listed = ", ".join(names)
    for name in names:
        if name not in arrays:
            raise ToolError(f"{path}: error: missing input '{name}' (the function takes: "
                            f"{listed})", EXIT_INPUT)
    for key in arrays:
        if key not in names:
            raise ToolError(f"{path}: error: unexpected input '{key}' (the function takes: "
                            f"{listed})", EXIT_INPUT)
    return arrays


def read_arrays(path: str) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file ``path`` by name; a one-line error if unreadable."""
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):  # one .npy array has no names
            raise ToolError(f"{path}: error: cannot read inputs: not an .npz archive (np.savez "
                            "writes one, an array per argument name)", EXIT_INPUT)
        with loaded as data:
            arrays = {key: data[key] for key in data.files}
    except EOFError:  # an empty file
        raise ToolError(f"{path}: error: cannot read inputs: the file is empty",
                        EXIT_INPUT) from None
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise ToolError(f"{path}: error: cannot read inputs: {e}", EXIT_INPUT) from None
    return arrays


def narrowed_integers(arrays: dict[str, np.ndarray], fn: object,
                      path: str) -> dict[str, np.ndarray]:
    """int64 arrays for i32 arguments as int32 (the ``.npz`` ONNX Runtime takes for a model
    whose imported IR computes its token ids in i32), each checked to fit."""
    from xdsl.dialects.builtin import i32

    from fusec.codegen.program import argument_name

    types = {argument_name(a, i): a.type
             for i, a in enumerate(fn.args)}  # type: ignore[attr-defined]
    result = dict(arrays)
    for name, array in arrays.items():
        t = types.get(name)
        if array.dtype != np.int64 or getattr(t, "element_type", None) != i32:
            continue
        if array.size and (array.max() > 2**31 - 1 or array.min() < -(2**31)):
            bad = array.max() if array.max() > 2**31 - 1 else array.min()
            raise ToolError(f"{path}: error: input '{name}' holds {bad}, outside the 32-bit "
                            "range of its i32 argument", EXIT_INPUT)
        result[name] = array.astype(np.int32)
    return result


def tolerance(value: float | None) -> float | None:
    """A ``--atol``/``--rtol``: a negative or NaN one would fail every comparison (exit 5, as
    if the outputs were wrong), so it is a command-line error."""
    if value is not None and not value >= 0:
        raise click.BadParameter(f"{value} is not a non-negative number")
    return value


def write_outputs(path: str, outputs: list[np.ndarray], names: list[str]) -> None:
    """The outputs by name (``result0``, ... or an ONNX model's) in an ``.npz``, atomically."""
    arrays = dict(zip(names, outputs, strict=True))
    archive = io.BytesIO()  # a zip is written with seeks: /dev/null or a FIFO takes none
    np.savez(archive, **arrays)  # type: ignore[arg-type]
    atomic_write(path, archive.getvalue())


def list_devices() -> None:
    from fusec.runtime.device import list_devices as devices

    reports = devices()
    if not reports:
        click.echo("no OpenCL devices found")
    for r in reports:
        status = "usable" if r.usable else f"not usable: {r.problem}"
        click.echo(f"{r.platform} / {r.name} [{r.type}]: {status}")


def run(
    file: str,
    function: str | None,
    inputs: str | None,
    seed: int | None,
    device: str,
    platform: str | None,
    pipeline: str,
    output: str | None,
    check: bool,
    atol: float | None,
    rtol: float | None,
    profile: bool,
    dump_kernels: str | None,
    offload_thresholds: tuple[str, ...] = (),
    offload_report: str | None = None,
    dot: str | None = None,
    shapes: dict[str, list[int]] | None = None,
    launch_budget: int | None = None,
    launch_fusion: bool = True,
    allow_tf32: bool = False,
    verbose: bool = False,
) -> None:
    from fusec.codegen.program import argument_name
    from fusec.compiler.check import spared
    from fusec.compiler.driver import building, compile_placed, fuse_and_fold, load, lower
    from fusec.compiler.artifact_build import import_model_file
    from fusec.compiler.onnx_driver import OnnxExecutable, module_params
    from fusec.compiler.torch_export import is_exported_file
    from fusec.codegen.kernels.common import DeviceInfo
    from fusec.errors import IndexOutOfRangeError
    from fusec.runtime.device import select_device
    from fusec.runtime.executable import Executable
    from fusec.runtime.model_executable import in_model_dtype, in_model_names
    from fusec.reference.executor import find_function, random_inputs, run_function

    report_file = offload_report if offload_report != "-" else None
    for out in (output, report_file, *dump_paths(dump_kernels, function)):
        check_not_input(out, [file, inputs])
    check_distinct_outputs([("-o", output), ("--offload-report", report_file), ("--dot", dot),
                            *(("--dump-kernels", p) for p in dump_paths(dump_kernels, function))])
    for out in (output, report_file, dot):
        check_writable(out)  # before compiling and running, not after
    imported = None
    if file.endswith(".onnx") or is_exported_file(file):
        # the inputs' values decide shapes where an operand must be known (Reshape's shape)
        imported = import_model_file(file, shapes,
                                     None if inputs is None else read_arrays(inputs))
        original = imported.module
        params = imported.params
    else:
        if shapes:
            raise ToolError(f"{file}: error: --shape applies to ONNX models only", EXIT_USAGE)
        original = load(read_source(file), file)
        params = module_params(original, file) or {}
    started = time.perf_counter()
    measuring = False
    if device == "auto":
        from fusec.placement.cost_model import parse_overrides

        placed = compile_placed(original.clone(), function, pipeline, platform, file,
                                params=params or None,
                                offload_thresholds=parse_overrides(offload_thresholds),
                                launch_budget=launch_budget, launch_fusion=launch_fusion,
                                allow_tf32=allow_tf32)
        progress.pause()
        for warning in placed.report["warnings"]:
            click.echo(f"fusec-run: warning: {warning}", err=True)
        exe = placed.executable
        name = placed.function
        description = ", ".join(getattr(exe, "devices", None) or [exe.device.description])
        if dump_kernels:
            for plan in placed.plans:
                dump(dump_kernels, plan.function, plan.source, "", [file, inputs])
        measuring = placed.tie is not None and placed.tie.tie
        if verbose and placed.report.get("choice"):
            from fusec.placement.report import choice_line

            click.echo(f"fusec-run: note: {choice_line(placed.report['choice'])}", err=True)
        if offload_report and not measuring:
            write_report(offload_report, placed.report)
    else:
        dev = select_device(device, platform)  # type: ignore[arg-type]
        info = DeviceInfo.from_device(dev.device)
        if verbose:
            progress.pause()
            for note in info.notes:
                click.echo(f"fusec-run: note: {note}", err=True)
        module = original.clone()
        left, bound = fuse_and_fold(module, function, pipeline, file, params or None)
        compiled = lower(module, function, left, info, file, launch_budget, launch_fusion,
                         allow_tf32, bound=list(bound or {}))
        if dump_kernels:
            dump(dump_kernels, compiled.plan.function, compiled.plan.source,
                 str(compiled.module), [file, inputs])
        building(compiled.plan)
        exe = Executable(compiled.plan, dev, bound)
        name = compiled.plan.function
        description = dev.description
    if dot:
        kind = (DeviceInfo.from_device(exe.device.device).kind if isinstance(exe, Executable)
                else "gpu")
        write_dot(dot, [file, inputs], original, pipeline, kind)
    compile_seconds = time.perf_counter() - started
    progress.step("running")
    fn = find_function(original, name)
    every_input = [argument_name(a, i) for i, a in enumerate(fn.args)]
    if inputs is not None and imported is not None:
        model = OnnxExecutable(exe, imported)  # type: ignore[arg-type]
        given = load_inputs(inputs, model.input_names)
        args = exe.arguments((), model.arguments((), given))
    elif inputs is not None:
        given = narrowed_integers(load_inputs(inputs, exe.input_names), fn, inputs)
        args = exe.arguments((), given)
    else:
        from fusec.codegen.program import numpy_dtype
        from fusec.runtime.limits import check_host_arrays

        # the arguments' types (a placed executable has no plan of its own to read them from)
        check_host_arrays("inputs", (numpy_dtype(a.type.element_type).itemsize
                                     * int(np.prod(a.type.get_shape())) for n, a in
                                     zip(every_input, fn.args, strict=True) if n not in params))
        randoms = random_inputs(fn, 0 if seed is None else seed)
        args = [a for n, a in zip(every_input, randoms, strict=True) if n not in params]
    if profile:  # (a donated input updated by a call keeps its values for --check: `spared`)
        exe(*spared(exe, args))  # warm-up
        outputs, prof = exe.profile(*spared(exe, args))
        progress.pause()
        click.echo(f"device: {description}")
        click.echo(f"compile: {compile_seconds * 1e3:.1f} ms")
        for k in prof.kernels:
            click.echo(f"  {k.kernel}: {k.seconds * 1e3:.3f} ms")
        click.echo(f"kernels: {prof.kernel_seconds * 1e3:.3f} ms in {len(prof.kernels)} launches; "
                   f"call: {prof.wall_seconds * 1e3:.3f} ms; host overhead: "
                   f"{prof.host_overhead_seconds * 1e3:.3f} ms")
    else:
        try:
            outputs = exe(*spared(exe, args))
        except IndexOutOfRangeError as e:  # an ONNX model's input by its ONNX name
            raise e if imported is None else in_model_names(e, imported.inputs) from None
    progress.pause()
    if device == "auto" and measuring and offload_report:   # a near tie: what was measured
        write_report(offload_report, placed.current_report())
    names = [f"result{i}" for i in range(len(outputs))]
    if imported is not None:
        names = [v.onnx_name for v in imported.outputs]
        outputs = [in_model_dtype(o, v.dtype) for o, v in zip(outputs, imported.outputs,
                                                               strict=True)]
    if output:
        write_outputs(output, outputs, names)
    else:
        for out_name, out in zip(names, outputs, strict=True):
            click.echo(f"{out_name}: {out.dtype}{list(out.shape)}")
    if check:
        from fusec.compiler.check import compare

        given_args = dict(zip(exe.input_names, args, strict=True))
        every_arg = [params[n] if n in params else given_args[n] for n in every_input]
        expected = run_function(original, every_arg, name)
        results = compare(outputs, expected, atol, rtol, normwise=True)
        for result in results:
            click.echo(result.describe())
        if not all(r.ok for r in results):
            raise ToolError(f"{file}: error: --check: outputs differ from the reference "
                            "beyond tolerance", EXIT_CHECK)


def run_artifact(file: str, inputs: str, device: str | None, platform: str | None,
                 output: str | None, profile: bool) -> None:
    """Runs a ``fusec-build`` artifact (`fusec.runtime.artifact`): no compiler, no xDSL."""
    from fusec.runtime.artifact import load
    from fusec.runtime.model_executable import ModelExecutable

    check_not_input(output, [file, inputs])
    check_writable(output)
    exe = load(file, device, platform)
    given = load_inputs(inputs, exe.input_names)
    if profile:  # the compiled function's kernels, called with its own arguments
        inner = exe.exe if isinstance(exe, ModelExecutable) else exe
        args = inner.arguments((), exe.arguments((), given) if inner is not exe else given)
        inner(*args)  # warm-up
        _, prof = inner.profile(*args)
        click.echo(f"device: {inner.device.description}")
        for k in prof.kernels:
            click.echo(f"  {k.kernel}: {k.seconds * 1e3:.3f} ms")
        click.echo(f"kernels: {prof.kernel_seconds * 1e3:.3f} ms in {len(prof.kernels)} launches; "
                   f"call: {prof.wall_seconds * 1e3:.3f} ms; host overhead: "
                   f"{prof.host_overhead_seconds * 1e3:.3f} ms")
    outputs = exe(**given)
    names = exe.output_names
    if output:
        write_outputs(output, outputs, names)
    else:
        for out_name, out in zip(names, outputs, strict=True):
            click.echo(f"{out_name}: {out.dtype}{list(out.shape)}")


def differential(file: str, function: str | None, seed: int | None, device: str,
                 platform: str | None, pipeline: str, atol: float | None, rtol: float | None,
                 bisect: bool) -> None:
    """``--verify-fusion`` and ``--bisect`` (`fusec.compiler.differential`)."""
    from fusec.compiler import differential as diff
    from fusec.compiler.driver import load, select_function
    from fusec.runtime.device import select_device

    module = load(read_source(file), file)
    name = select_function(module, function, file)
    runner = diff.Runner(module, name, pipeline, select_device(device, platform), file)
    if bisect:
        result = diff.bisect(runner, seed or 0, atol, rtol)
        progress.pause()
        click.echo(result.describe())
        if result.first_bad is not None or result.unfused_differs:
            sys.exit(EXIT_CHECK)
        return
    reports = diff.verify_fusion(runner, seed or 0, atol, rtol)
    progress.pause()
    for report in reports:
        for line in report.lines():
            click.echo(line)
    if not all(r.ok for r in reports):
        raise ToolError(f"{file}: error: --verify-fusion: fused and unfused outputs differ "
                        "beyond tolerance", EXIT_CHECK)


def write_report(path: str, report: dict) -> None:
    """The offload report: a table on stderr for ``-``, else JSON written atomically."""
    from fusec.placement.report import to_json, to_table

    if path == "-":
        click.echo(to_table(report), err=True)
        return
    atomic_write(path, to_json(report) + "\n")


def write_dot(path: str, inputs: list[str | None], original: ModuleOp, pipeline: str,
              device_kind: str) -> None:
    """The fused tensor-level IR as DOT, each op naming its kernels on ``device_kind``."""
    from fusec.compiler.context import make_context
    from fusec.compiler.dot import draw
    from fusec.compiler.pipeline import run_pipeline

    check_not_input(path, inputs)
    fused = original.clone()
    if pipeline not in ("", "none"):
        run_pipeline(make_context(), fused, pipeline, inputs[0] or "<input>")
    atomic_write(path, draw(fused, kernels=True, device=device_kind))


def dump_paths(folder: str | None, function: str | None) -> list[str]:
    """The files ``--dump-kernels`` writes (known before compiling when the function is named)."""
    if not folder or not function:
        return []
    return [os.path.join(folder, f"{function}.cl"), os.path.join(folder, f"{function}.kernels.mlir")]


def dump(folder: str, function: str, source: str, ir: str, inputs: list[str | None]) -> None:
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        message = f"{folder}: error: cannot write kernels: {e.strerror}"
        raise ToolError(message, EXIT_INPUT) from None
    cl_path, ir_path = dump_paths(folder, function)
    for path in (cl_path, ir_path):
        check_not_input(path, inputs)
    atomic_write(cl_path, source)
    if ir:
        atomic_write(ir_path, ir + "\n")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", required=False)
@click.option("--function", metavar="NAME", help="The function to run (default: the only one).")
@click.option("--inputs", metavar="IN.npz", help="Input arrays by argument name.")
@click.option("--random", "seed", type=click.IntRange(min=0), metavar="SEED",
              help="Random inputs (default 0).")
@click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default=None,
              help="The OpenCL device (default: auto; an artifact's: the kind it was built "
                   "for).")
@click.option("--platform", metavar="NAME", help="Only platforms whose name contains NAME.")
@click.option("-p", "--pipeline", default="default", show_default=True,
              help="Fusion passes before lowering ('none' for none).")
@click.option("-o", "--output", metavar="OUT.npz", help="Write the outputs here.")
@click.option("--check", is_flag=True, help="Compare with the numpy reference.")
@click.option("--atol", type=float, default=None, callback=lambda c, p, v: tolerance(v),
              help="Absolute tolerance of --check (default by dtype: f32 1e-4, f16 1e-2, "
                   "bf16 6e-2).")
@click.option("--rtol", type=float, default=None, callback=lambda c, p, v: tolerance(v),
              help="Relative tolerance of --check (default by dtype: f32 1e-3, f16 1e-2, "
                   "bf16 6e-2).")
@click.option("--profile", is_flag=True, help="Print each kernel's time and the host overhead.")
@click.option("--dump-kernels", metavar="DIR", help="Write the OpenCL C and kernel-level IR.")
@click.option("--offload-threshold", "offload_thresholds", multiple=True, metavar="NAME=VALUE",
              help="With --device auto: override a threshold of the CPU/GPU cost model "
                   "(repeatable; names as in the offload report, e.g. small_batch_max_dim=4).")
@click.option("--offload-report", metavar="FILE.json|-",
              help="With --device auto: write the placement report as JSON ('-': a table on "
                   "stderr).")
@click.option("--dot", metavar="FILE.dot",
              help="Also write the fused graph as Graphviz DOT, each op naming its kernels.")
@click.option("--verify-fusion", is_flag=True,
              help="Run the program fused and unfused on random and adversarial inputs (large, "
                   "ties, signed zeros, subnormals); print the largest differences per output.")
@click.option("--bisect", is_flag=True,
              help="Find the first fusion rewrite after which the outputs differ from the "
                   "reference (as --rewrite-limit is searched in fusec-opt).")
@click.option("--launch-budget", type=click.IntRange(min=0), metavar="BYTES",
              help="Bytes one merged launch may touch (default: the device's global memory).")
@click.option("--no-launch-fusion", is_flag=True, help="Keep one launch per kernel.")
@click.option("--list-devices", "list_only", is_flag=True, help="List OpenCL devices and exit.")
@click.option("--allow-tf32", is_flag=True,
              help="Let f32 matmuls run on TF32 tensor cores (NVIDIA), as PyTorch's flag.")
@click.option("--knob", "knob_settings", multiple=True, metavar="NAME=VALUE",
              help="Set a code-generation knob for this compile, e.g. attention_mma=false "
                   "(repeatable; the knobs: docs/knobs.md).")
@click.option("--verbose", is_flag=True,
              help="On a build error, print the log and source; show cache warnings and what "
                   "was found out about the device (e.g. tensor cores the driver rejected).")
@click.option("--shape", "shape_specs", multiple=True, metavar="NAME=DIMS",
              help="An ONNX model's dynamic input shape, e.g. input_ids=1x128 (repeatable).")
@click.option("--generate", "generate_steps", type=click.IntRange(min=1), metavar="STEPS",
              help="Greedy decoding: FILE's @prefill and @step (docs/generation.md) on the "
              "prompt 'tokens' and the weights of --inputs; prints STEPS tokens per sequence "
              "(or writes them to -o as 'tokens'); --check compares them with the reference's.")
@click.option("--progress", "force_progress", is_flag=True,
              help="Report each compile step on stderr (shown anyway on a terminal after about "
                   "a second).")
@click.version_option(__version__, prog_name="fusec-run")
def cli(file: str | None, function: str | None, inputs: str | None, seed: int | None,
        device: str, platform: str | None, pipeline: str, output: str | None, check: bool,
        atol: float | None, rtol: float | None, profile: bool, dump_kernels: str | None,
        dot: str | None, offload_thresholds: tuple[str, ...], offload_report: str | None,
        verify_fusion: bool, bisect: bool, launch_budget: int | None, no_launch_fusion: bool,
        list_only: bool,
        allow_tf32: bool, knob_settings: tuple[str, ...], verbose: bool,
        shape_specs: tuple[str, ...], generate_steps: int | None,
        force_progress: bool) -> None:
    """Compile FILE for an OpenCL device, run it and write or check its outputs."""
    if list_only:
        list_devices()
        return
    if file is None:
        raise click.UsageError("missing FILE")
    if inputs is not None and seed is not None:
        raise click.UsageError("--inputs and --random exclude each other")
    if launch_budget is not None and no_launch_fusion:
        raise click.UsageError("--launch-budget and --no-launch-fusion exclude each other")
    if verbose:
        show_warnings("fusec-run")
    if generate_steps is not None:
        generating(file, inputs, generate_steps, device, platform, pipeline, output, check,
                   verbose, force_progress, knob_values(knob_settings), {
                       "--function": function, "--random": seed is not None,
                       "--profile": profile, "--dump-kernels": dump_kernels, "--dot": dot,
                       "--offload-threshold": offload_thresholds,
                       "--offload-report": offload_report, "--verify-fusion": verify_fusion,
                       "--bisect": bisect, "--launch-budget": launch_budget is not None,
                       "--no-launch-fusion": no_launch_fusion, "--allow-tf32": allow_tf32,
                       "--shape": shape_specs, "--atol": atol is not None,
                       "--rtol": rtol is not None})
        return
    from fusec.runtime.artifact import is_artifact

    if is_artifact(file):
        compiling = {"--function": function, "-p": pipeline != "default" or None,
                     "--check": check, "--dump-kernels": dump_kernels, "--dot": dot,
                     "--offload-threshold": offload_thresholds, "--offload-report":
                     offload_report, "--verify-fusion": verify_fusion, "--bisect": bisect,
                     "--launch-budget": launch_budget, "--no-launch-fusion": no_launch_fusion,
                     "--allow-tf32": allow_tf32, "--shape": shape_specs, "--random": seed}
        given = [option for option, value in compiling.items() if value]
        if given:
            raise click.UsageError(f"{', '.join(given)}: not for an artifact (compiled by "
                                   "fusec-build); it runs with --inputs, -o, --profile, "
                                   "--device, --platform")
        if inputs is None:
            raise click.UsageError("an artifact runs on --inputs IN.npz")
        with errors_reported("fusec-run", verbose):
            run_artifact(file, inputs, device, platform, output, profile)
        return
    device = device or "auto"
    if device != "auto" and (offload_thresholds or offload_report):
        raise click.UsageError("--offload-threshold and --offload-report need --device auto")
    from fusec.placement.cost_model import OffloadOptionError, parse_overrides

    try:
        parse_overrides(offload_thresholds)
    except OffloadOptionError as e:
        raise click.UsageError(str(e)) from None
    settings = knob_values(knob_settings)
    if verify_fusion or bisect:
        if verify_fusion and bisect:
            raise click.UsageError("--verify-fusion and --bisect exclude each other")
        if inputs is not None or output or profile or check or file.endswith((".onnx", ".pt2")):
            raise click.UsageError("--verify-fusion and --bisect take an .mlir file and "
                                   "--random, not --inputs, -o, --profile or --check")
    from fusec.tools.fusec_import import parse_shapes

    with errors_reported("fusec-run", verbose), knobs.overridden(settings):
        with progress.reporting(Progress.for_stream(sys.stderr, "fusec-run", force_progress)):
            if verify_fusion or bisect:
                differential(file, function, seed, device, platform, pipeline, atol, rtol,
                             bisect)
                return
            run(file, function, inputs, seed, device, platform, pipeline, output, check, atol,
                rtol, profile, dump_kernels, offload_thresholds, offload_report, dot,
                parse_shapes(shape_specs), launch_budget, not no_launch_fusion, allow_tf32,
                verbose)


def generating(file: str, inputs: str | None, steps: int, device: str | None,
               platform: str | None, pipeline: str, output: str | None, check: bool,
               verbose: bool, force_progress: bool, settings: dict,
               others: dict[str, object]) -> None:
    """``--generate``: its command line checked, then `run_generate.generate_tokens`."""
    given = [option for option, value in others.items() if value]
    if given:
        raise click.UsageError(f"{', '.join(given)}: not with --generate (it takes --inputs, "
                               "-o, --check, --device, --platform, -p, --knob)")
    if inputs is None:
        raise click.UsageError("--generate needs --inputs IN.npz (the prompt as 'tokens' and "
                               "the weights)")
    from fusec.runtime.artifact import is_artifact

    if is_artifact(file) or not file.endswith(".mlir"):
        raise click.UsageError("--generate takes an .mlir file with @prefill and @step")
    from fusec.tools.run_generate import generate_tokens

    with errors_reported("fusec-run", verbose), knobs.overridden(settings):
        check_not_input(output, [file, inputs])
        check_writable(output)
        with progress.reporting(Progress.for_stream(sys.stderr, "fusec-run", force_progress)):
            generate_tokens(file, steps, inputs, device or "auto", platform, pipeline, output,
                            check)


@contextlib.contextmanager
def errors_reported(prog: str, verbose: bool) -> Iterator[None]:
    """Within the block, a `ToolError`, a `FusecError` or a runtime error ends the tool with
    its one line and exit code (see the module docstring); ``verbose`` adds the details."""
    try:
        yield
    except ToolError as e:
        fail(str(e), e.code, e.details if verbose else None)
    except Exception as e:  # compiler and runtime errors: classified by type, imported lazily
        # (the compiler's only if it was imported: running an artifact imports no xDSL)
        diagnostics = sys.modules.get("fusec.compiler.diagnostics")
        if diagnostics is not None and isinstance(e, diagnostics.FusecError):
            from fusec.compiler.pipeline import PipelineSpecError

            if isinstance(e, PipelineSpecError):  # a bad -p: a command-line error
                fail(f"{prog}: error: {e}", EXIT_USAGE)
            fail(str(e), EXIT_INPUT)
        from fusec.runtime.artifact_format import ArtifactError
        from fusec.runtime.errors import BuildError, DeviceError, FusecRuntimeError, LaunchError

        if not isinstance(e, FusecRuntimeError):
            raise
        code = EXIT_INPUT
        if isinstance(e, DeviceError):
            code = EXIT_DEVICE
        elif isinstance(e, BuildError | LaunchError):
            code = EXIT_BUILD
        hint = "" if verbose or not isinstance(e, BuildError) else " (--verbose for the log)"
        # A kernel's error that names its source op starts with that op's file:line:col, an
        # artifact's with its path.
        located = getattr(e, "places", ()) or isinstance(e, ArtifactError)
        prefix = "" if located else f"{prog}: error: "
        fail(f"{prefix}{e}{hint}", code, e.details() if verbose else None)


def fail(message: str, code: int, details: str | None = None) -> None:
    click.echo(message, err=True)
    if details:
        click.echo(details, err=True)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Entry point: one line per error, never a traceback (exit 70 for a bug in fusec)."""
    return run_cli(cli, "fusec-run", argv)


if __name__ == "__main__":
    sys.exit(main())
