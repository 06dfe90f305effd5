"""``fusec-opt``: parse fusec IR, run passes, print the result (modelled on ``mlir-opt``).

    fusec-opt model.mlir -p 'fuse-matmul-bias-act,cse' -o fused.mlir
    fusec-opt - --print-op-generic < model.mlir

Exit codes (build scripts rely on them):

- 0: success (also with ``--verify-diagnostics`` when a chunk had an error: it is printed);
- 1: bad input: an unreadable or non-UTF-8 file, a parse or verifier error, a pass that fails,
  an output file that cannot be written;
- 2: bad command line: an unknown option, pass, pass option or target, a malformed pipeline;
- 70: an internal error, i.e. a bug in fusec (``FUSEC_TRACEBACK=1`` shows the traceback).

Every error is one line on stderr, ``file:line:col: error: ...`` where the input has a location;
never a Python traceback. Input without operations (empty, or only comments) is an empty module,
as in ``mlir-opt``. Output is deterministic, and written only when every chunk succeeded: ``-o``
writes a temporary file next to the target and renames it, so it never leaves a half-written file.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from dataclasses import dataclass

import click
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fusec import __version__, knobs
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, Source, parse_module, split_input
from fusec.compiler.fusion_stats import (
    FusionReport,
    LaunchFusionTracker,
    count,
    reports_json,
    reports_text,
)
from fusec.compiler.incremental_verify import IncrementalVerifier
from fusec.compiler.ir_dump import IRDumper
from fusec.compiler.pipeline import (
    NAMED_PIPELINES,
    PipelineHooks,
    PipelineSpecError,
    build_passes,
    check_pass_names,
    run_passes,
)
from fusec.compiler.progress import Progress, reporting
from fusec.compiler.registry import pass_infos
from fusec.compiler.targets import build_target, target_names
from fusec.compiler.timing import Timing
from fusec.files import atomic_write, check_distinct_outputs, check_not_input
from fusec.passes.remarks import Remark, RemarkLog
from fusec.tools.cli import EXIT_INPUT, EXIT_USAGE, knob_values, run_cli


def describe_passes() -> str:
    lines = []
    for info in pass_infos():
        lines.append(f"{info.name}: {info.summary}")
        for option in info.options:
            if option.default is None:
                lines.append(f"    {option.name}: {option.kind}")
            else:
                lines.append(f"    {option.name}: {option.kind} = {option.default}")
    for name, (spec, doc) in sorted(NAMED_PIPELINES.items()):
        lines.append(f"{name}: (pipeline) {doc}")
        lines.append(f"    = {spec}")
    return "\n".join(lines) + "\n"


def read_input(path: str) -> tuple[str, str]:
    """The text of ``path`` (``-``: stdin) and the name that messages give it."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise FusecError(f"{name}: error: cannot read input: {e.strerror}") from None
    try:
        return data.decode("utf-8-sig"), name  # a leading byte-order mark is dropped
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise FusecError(
            f"{name}:{line}:{col}: error: input is not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None


def write_output(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` atomically (`fusec.files.atomic_write`), or to stdout."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    atomic_write(path, text)


def process(
    chunk: Source,
    passes: list[ModulePass],
    emit: Callable[[ModuleOp], str],
    reports: list[FusionReport] | None = None,
    debug: DebugOptions | None = None,
) -> str:
    debug = debug or DebugOptions()
    ctx = make_context()
    verifier = IncrementalVerifier()
    timing = debug.timing or Timing()
    if debug.progress is not None:
        debug.progress.step(f"parsing {chunk.name}")
    with timing.measure("parse"):
        module = parse_module(ctx, chunk, lambda m, f: timing_verify(timing, verifier, m, f))
    before = count(module) if reports is not None else None
    hooks = PipelineHooks(debug.dumper, timing, debug.progress, verifier, debug.remarks)
    tracker = LaunchFusionTracker(module) if reports is not None else None
    run_passes(ctx, module, passes, chunk.name, tracker.after_pass if tracker else None,
               hooks=hooks)
    if reports is not None and before is not None and tracker is not None:
        label = f"{chunk.name}:{chunk.line_offset + 1}" if chunk.line_offset else chunk.name
        reports.append(FusionReport(label, before, count(module), tracker.counts()))
    if debug.progress is not None:
        debug.progress.step("printing")
    with timing.measure("print"):
        return emit(module)


def timing_verify(
    timing: Timing, verifier: IncrementalVerifier, module: ModuleOp, filename: str
) -> None:
    """The verification after parsing, in its own ``--timing`` row."""
    with timing.measure("verify"):
        verifier.verify(module, filename)


@dataclass
class DebugOptions:
    """What the ``--print-ir-*``, ``--timing`` and ``--progress`` options ask for."""

    dumper: IRDumper | None = None
    timing: Timing | None = None
    progress: Progress | None = None
    remarks: RemarkLog | None = None


def remark_printer(kinds: str | None) -> Callable[[Remark], None] | None:
    """Prints the remarks ``--remarks`` asks for on stderr, as the passes make them."""
    if kinds is None:
        return None
    wanted = {"missed", "applied"} if kinds == "all" else {kinds}

    def emit(remark: Remark) -> None:
        if remark.kind in wanted:
            click.echo(str(remark), err=True)

    return emit


def pass_names(values: tuple[str, ...]) -> list[str]:
    """``--opt a,b --opt c`` -> ``[a, b, c]``."""
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


EPILOG = """\b
Examples:
  fusec-opt examples/mlp.mlir -p canonicalize
  fusec-opt model.mlir -p 'fuse-matmul-bias-act,cse' -o fused.mlir
  fusec-opt - --print-op-generic < model.mlir

\b
Exit codes: 0 success, 1 bad input (parse, verifier or pass error, unreadable
file), 2 bad command line (unknown option, pass or target), 70 internal error.
"""


@click.command(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.argument("input_file", metavar="[FILE|-]", default="-")
@click.option(
    "-p",
    "--passes",
    default="",
    metavar="PIPELINE",
    help="Passes to run, comma-separated, options in braces: 'fuse-x{opt=1},cse'.",
)
@click.option("-o", "--output", default="-", metavar="OUT", help="Output file (default: stdout).")
@click.option(
    "-t",
    "--target",
    default="mlir",
    show_default=True,
    metavar="TARGET",
    help=f"Output target, options in braces: {', '.join(target_names())}.",
)
@click.option(
    "--split-input-file",
    is_flag=True,
    help="Treat '// -----' lines as separators; process each chunk on its own.",
)
@click.option(
    "--verify-diagnostics",
    is_flag=True,
    help="Print each chunk's error to stdout and go on (for lit tests); exit 0.",
)
@click.option("--print-op-generic", is_flag=True, help="Print the IR in generic form.")
@click.option("--list-passes", is_flag=True, help="List passes, their options and pipelines.")
@click.option(
    "--fusion-stats",
    is_flag=True,
    help="Print ops, regions, kernel launches and bytes written before/after, on stderr.",
)
@click.option(
    "--fusion-stats-json",
    metavar="FILE",
    default=None,
    help="Write the fusion stats as JSON to FILE (for build scripts).",
)
@click.option(
    "--disable-pass",
    "disabled",
    multiple=True,
    metavar="PASSES",
    help="Remove these passes (comma-separated) from the pipeline, named pipelines too.",
)
@click.option(
    "--print-ir-before",
    multiple=True,
    metavar="PASSES",
    help="Print the IR on stderr before each run of these passes (comma-separated).",
)
@click.option(
    "--print-ir-after",
    multiple=True,
    metavar="PASSES",
    help="Print the IR on stderr after each run of these passes (comma-separated).",
)
@click.option("--print-ir-after-all", is_flag=True, help="Print the IR on stderr after every pass.")
@click.option(
    "--print-ir-after-change",
    is_flag=True,
    help="Print the IR on stderr after every pass that changed it.",
)
@click.option(
    "--remarks",
    "remark_kinds",
    type=click.Choice(["missed", "applied", "all"]),
    default=None,
    help="Print on stderr, at each candidate's location, why a fusion did not happen (missed), "
    "each fusion made (applied), or both.",
)
@click.option(
    "--rewrite-limit",
    type=click.IntRange(0),
    default=None,
    metavar="N",
    help="Make only the first N fusion rewrites of the pipeline (numbered from 0, in a "
    "deterministic order; --remarks names each one's number).",
)
@click.option(
    "--timing",
    is_flag=True,
    help="Print the wall time of parsing, each pass, verification and printing on stderr.",
)
@click.option(
    "--progress",
    "force_progress",
    is_flag=True,
    help="Report each step on stderr (shown anyway on a terminal after about a second).",
)
@click.option(
    "--knob",
    "knob_settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a code-generation knob, e.g. gram_split_on_gpu=false (repeatable; the knobs: "
    "docs/knobs.md).",
)
@click.version_option(__version__, prog_name="fusec-opt")
def cli(
    input_file: str,
    passes: str,
    output: str,
    target: str,
    split_input_file: bool,
    verify_diagnostics: bool,
    print_op_generic: bool,
    list_passes: bool,
    fusion_stats: bool,
    fusion_stats_json: str | None,
    disabled: tuple[str, ...],
    print_ir_before: tuple[str, ...],
    print_ir_after: tuple[str, ...],
    print_ir_after_all: bool,
    print_ir_after_change: bool,
    remark_kinds: str | None,
    rewrite_limit: int | None,
    timing: bool,
    force_progress: bool,
    knob_settings: tuple[str, ...],
) -> None:
    """Parse fusec IR from FILE (or stdin), run passes, and print the result."""
    if list_passes:
        click.echo(describe_passes(), nl=False)
        return
    try:
        pass_list = build_passes(passes, pass_names(disabled))
        tgt = build_target(target, print_op_generic)
        before, after = pass_names(print_ir_before), pass_names(print_ir_after)
        check_pass_names(before, "--print-ir-before")
        check_pass_names(after, "--print-ir-after")
    except FusecError as e:
        fail(str(e), EXIT_USAGE)
    settings = knob_values(knob_settings)
    ctx = make_context()

    def emit(module: ModuleOp) -> str:
        buf = io.StringIO()
        tgt.emit(ctx, module, buf)
        return buf.getvalue()

    def show(module: ModuleOp) -> str:
        buf = io.StringIO()
        build_target("mlir", print_op_generic).emit(ctx, module, buf)
        return buf.getvalue()

    dumper = IRDumper(
        sys.stderr, show, before, after, print_ir_after_all, print_ir_after_change
    )
    debug = DebugOptions(
        dumper if dumper.active else None,
        Timing() if timing else None,
        Progress.for_stream(sys.stderr, "fusec-opt", force_progress),
        RemarkLog(rewrite_limit, remark_printer(remark_kinds)),
    )

    for out in (output, fusion_stats_json):
        check_not_input(out, [input_file])
    check_distinct_outputs([("-o", output), ("--fusion-stats-json", fusion_stats_json)])
    try:
        text, name = read_input(input_file)
        chunks = split_input(text, name) if split_input_file else [Source(text, name)]
        outputs = []
        want_stats = fusion_stats or fusion_stats_json is not None
        reports: list[FusionReport] | None = [] if want_stats else None
        # the progress display is erased (its timer stopped) however this ends
        with knobs.overridden(settings), reporting(debug.progress):
            for chunk in chunks:
                try:
                    outputs.append(process(chunk, pass_list, emit, reports, debug))
                except FusecError as e:
                    if not verify_diagnostics:
                        raise
                    outputs.append(f"{e}\n")
        write_output(output, "// -----\n".join(outputs))
        if debug.timing is not None:
            click.echo(debug.timing.report(), err=True, nl=False)
        if fusion_stats and reports is not None:
            click.echo(reports_text(reports), err=True, nl=False)
        if fusion_stats_json is not None and reports is not None:
            write_output(fusion_stats_json, reports_json(reports, name))
    except FusecError as e:
        fail(str(e), EXIT_INPUT)


def fail(message: str, code: int) -> None:
    click.echo(f"fusec-opt: {message}" if ": error:" not in message else message, err=True)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the CLI; turns any unexpected exception into one line, exit 70."""
    return run_cli(cli, "fusec-opt", argv, usage_errors=(PipelineSpecError,))

if __name__ == "__main__":
    sys.exit(main())
