"""Pass pipelines: parsing ``-p`` specs, named pipelines, and running them with verification.

A spec is xDSL's: passes separated by commas, options in braces separated by spaces
(``fuse-elementwise{max-steps=8 max-inputs=4},cse``). A name from ``NAMED_PIPELINES`` stands for
its whole spec, so ``-p default`` runs the default fusion pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, PassFailedException

from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, diagnostic_message
from fusec.compiler.gc_pause import paused_gc
from fusec.compiler.incremental_verify import IncrementalVerifier
from fusec.compiler.ir_dump import IRDumper
from fusec.compiler.progress import Progress
from fusec.compiler.progress import current as current_progress
from fusec.compiler.registry import get_all_passes
from fusec.compiler.timing import Timing, pass_labels
from fusec.lowering.lower_to_kernels import lower_opencl_spec
from fusec.passes.remarks import RemarkLog, collecting
from fusec.passes.remarks import current as current_remark_log

# Named pipelines: name -> (spec, one-line summary).
NAMED_PIPELINES: dict[str, tuple[str, str]] = {
    "default": ("canonicalize-nn,fuse-centered-gram,fuse-power-step-normalize,fuse-explained-variance,fuse-matmul-bias-act,fuse-shared-input-matmul{epilogue-only=true bound-only=true},fuse-attention-block,fuse-residual-layer-norm,fuse-residual-rms-norm,fuse-rms-norm-reshape,fuse-transformer-layer,fuse-swiglu-dual-matmul,fuse-shared-input-matmul{plain-only=true},fuse-swiglu,fuse-image-normalize,fuse-attention-cast,fuse-row-reduce,fuse-elementwise,fuse-matmul-epilogue,fuse-multi-output,fuse-reductions", "The fusions in the order that lets them compose (see docs/passes.md)."),  # noqa: E501
}

NAMED_PIPELINES["lower-opencl"] = (
    lower_opencl_spec(),
    "Lowers to the OpenCL kernel-level IR: unfuse what the backend lacks, lower, plan buffers.",
)


class PipelineSpecError(FusecError):
    """A ``-p`` spec that names an unknown pass or option, or does not parse."""


def _parse_specs(spec: str) -> list[ArgSpec]:
    try:
        specs = list(parse_pipeline(spec))
        _check_no_repeated_option(spec)
    except ArgSpecParseError as e:  # a BaseException in xDSL
        detail = " ".join(str(e).split())
        raise PipelineSpecError(f"invalid pass pipeline '{spec}': {detail}") from None
    return specs


def _check_no_repeated_option(spec: str) -> None:
    """An option given twice to one pass (``fuse-elementwise{max-steps=2 max-steps=5}``, or
    ``max_steps`` and ``max-steps``) is an error: xDSL's parser keeps the last, silently."""
    name, keys, inside, previous = "", set[str](), False, None
    for token in PipelineLexer._generator(spec):  # noqa: SLF001 - its token stream
        kind = token.kind
        if not inside and kind is SpecTokenKind.IDENT:
            name = token.span.text
        elif kind is SpecTokenKind.L_BRACE:
            inside, keys = True, set()
        elif kind is SpecTokenKind.R_BRACE:
            inside = False
        elif inside and kind is SpecTokenKind.IDENT and previous in (SpecTokenKind.L_BRACE,
                                                                      SpecTokenKind.SPACE):
            key = token.span.text.replace("_", "-")
            if key in keys:
                raise PipelineSpecError(f"option '{key}' is given twice to pass '{name}'")
            keys.add(key)
        previous = kind


def _expand(specs: list[ArgSpec], seen: tuple[str, ...] = ()) -> list[ArgSpec]:
    out: list[ArgSpec] = []
    for s in specs:
        if s.name in NAMED_PIPELINES and s.name not in seen:
            if s.parameters:
                raise PipelineSpecError(f"pipeline '{s.name}' takes no options")
            inner = _parse_specs(NAMED_PIPELINES[s.name][0])
            out.extend(_expand(inner, (*seen, s.name)))
        else:
            out.append(s)
    return out


def check_pass_names(names: Collection[str], option: str) -> None:
    """A ``PipelineSpecError`` for a name in ``names`` that is no pass (for options such as
    ``--disable-pass`` and ``--print-ir-after`` that name passes)."""
    available = get_all_passes()
    for name in names:
        if name not in available:
            raise PipelineSpecError(
                f"{option}: unknown pass '{name}' (known: {', '.join(available)})"
            )


def build_passes(spec: str, disabled: Collection[str] = ()) -> list[ModulePass]:
    """The passes of ``spec``, options applied, less those named in ``disabled`` (as
    ``--disable-pass``: removed from named pipelines too); one-line ``PipelineSpecError`` on any
    fault."""
    check_pass_names(disabled, "--disable-pass")
    if not spec.strip():
        return []
    available = get_all_passes()
    passes: list[ModulePass] = []
    for s in _expand(_parse_specs(spec)):
        if s.name in disabled:
            continue
        if s.name not in available:
            known = ", ".join([*available, *NAMED_PIPELINES])
            raise PipelineSpecError(f"unknown pass '{s.name}' (known: {known})")
        cls = available[s.name]()
        known_opts = {info.name.replace("_", "-") for info in get_pass_option_infos(cls)}
        for opt in s.parameters:
            if opt.replace("_", "-") not in known_opts:
                choices = ", ".join(sorted(known_opts)) or "none"
                raise PipelineSpecError(
                    f"unknown option '{opt}' for pass '{s.name}' (options: {choices})"
                )
        try:
            built = cls.from_pass_spec(s)
        except (ValueError, TypeError) as e:
            raise PipelineSpecError(f"bad options for pass '{s.name}': {e}") from None
        if s.parameters:
            check_option_values(s.name, built)
        passes.append(built)
    return passes


def check_option_values(name: str, built: ModulePass) -> None:
    """A pass checks its option values when it runs, before it touches the IR
    (``max-steps=-1``, ``device=tpu``): run here on an empty module, such a failure is the
    command line's (`PipelineSpecError`, exit 2), not one of the input (exit 1)."""
    try:
        built.apply(make_context(), ModuleOp([]))
    except PassFailedException as e:
        message = str(e).removeprefix(f"{name}: ")
        raise PipelineSpecError(f"bad options for pass '{name}': {message}") from None


@dataclass
class PipelineHooks:
    """What ``fusec-opt``'s debugging options add around each pass (all optional)."""

    dumper: IRDumper | None = None
    timing: Timing | None = None
    progress: Progress | None = None
    verifier: IncrementalVerifier | None = None
    """Shared with `parse_module` so that the first verification after a pass is incremental
    too; a fresh one (which verifies everything once) when None."""
    remarks: RemarkLog | None = None
    """Receives the fusion passes' remarks and applies ``--rewrite-limit`` (default: the log a
    caller installed with `fusec.passes.remarks.collecting`, else a fresh one)."""


def run_passes(
    ctx: Context,
    module: ModuleOp,
    passes: list[ModulePass],
    filename: str,
    after_each: Callable[[ModulePass, ModuleOp], None] | None = None,
    hooks: PipelineHooks | None = None,
) -> None:
    """Applies ``passes`` in order, verifying after each; errors become ``FusecError``.

    Verification checks only the ops a pass changed (`IncrementalVerifier`), and the garbage
    collector is paused meanwhile (`paused_gc`): both were quadratic on 10^5-op programs.
    """
    hooks = hooks or PipelineHooks()
    verifier = hooks.verifier or IncrementalVerifier()
    timing = hooks.timing or Timing()
    labels = pass_labels([p.name for p in passes])
    remarks = hooks.remarks or current_remark_log() or RemarkLog()
    progress = hooks.progress or current_progress()
    with paused_gc(), collecting(remarks):
        for index, (p, label) in enumerate(zip(passes, labels, strict=True)):
            if progress is not None:
                progress.step(f"pass {index + 1}/{len(passes)}: {p.name}")
            if hooks.dumper is not None:
                hooks.dumper.before_pass(p, module)
            try:
                with timing.measure(label):
                    p.apply(ctx, module)
            except DiagnosticException as e:
                raise FusecError(diagnostic_message(e, filename)) from None
            finally:
                remarks.end_pass()
            try:
                with timing.measure("verify"):
                    verifier.verify(module, filename)
            except FusecError as e:
                raise FusecError(f"{e} (after pass '{p.name}')") from None
            if after_each is not None:
                after_each(p, module)
            if hooks.dumper is not None:
                hooks.dumper.after_pass(p, module)


def run_pipeline(ctx: Context, module: ModuleOp, spec: str, filename: str = "<input>") -> None:
    """Parses ``spec`` and applies it to ``module`` (for build scripts and tests)."""
    run_passes(ctx, module, build_passes(spec), filename)
