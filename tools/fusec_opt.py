"""``fusec-opt``: parse fusec IR, run passes, print the result (modelled on ``mlir-opt``).

Exit codes: 0 on success; 1 when the input is bad (unreadable file, parse or verifier error, a
pass that fails); 2 when the command line is bad (unknown pass, option or target). Every error
is one line on stderr, ``file:line:col: error: ...`` where the input has a location. Output is
written only when every chunk succeeded, so ``-o`` never leaves a half-written file.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from collections.abc import Callable

import click
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, get_pass_option_infos

from fusec import __version__
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError, Source, parse_module, split_input
from fusec.compiler.fusion_stats import FusionReport, count, reports_json, reports_text
from fusec.compiler.pipeline import (
    NAMED_PIPELINES,
    PipelineSpecError,
    build_passes,
    run_passes,
)
from fusec.compiler.targets import build_target
from fusec.passes import XDSL_SUMMARIES, get_all_passes

EXIT_INPUT = 1
EXIT_USAGE = 2
INTERNAL_ERROR = 70


def summary(cls: type[ModulePass]) -> str:
    """The first line of a pass's documentation (its module docstring, else its class's)."""
    doc = sys.modules[cls.__module__].__doc__ if cls.__module__.startswith("fusec.") else None
    doc = doc or cls.__doc__ or XDSL_SUMMARIES.get(cls.name, "")
    return doc.strip().splitlines()[0] if doc.strip() else ""


def describe_passes() -> str:
    lines = []
    for name, get in get_all_passes().items():
        cls = get()
        lines.append(f"{name}: {summary(cls)}")
        for info in get_pass_option_infos(cls):
            default = "" if info.default_value is None else f" = {info.default_value}"
            lines.append(f"    {info.name.replace('_', '-')}: {info.expected_type}{default}")
    for name, (spec, doc) in sorted(NAMED_PIPELINES.items()):
        lines.append(f"{name}: (pipeline) {doc}")
        lines.append(f"    = {spec}")
    return "\n".join(lines) + "\n"


def read_input(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise FusecError(f"{path}: error: cannot read input: {e.strerror}") from None
    except UnicodeDecodeError:
        raise FusecError(f"{path}: error: input is not UTF-8 text") from None


def write_output(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` atomically (a temp file, then a rename), or to stdout."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".fusec-opt-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise FusecError(f"{path}: error: cannot write output: {e.strerror}") from None


def process(
    chunk: Source,
    passes: list[ModulePass],
    emit: Callable[[ModuleOp], str],
    reports: list[FusionReport] | None = None,
) -> str:
    ctx = make_context()
    module = parse_module(ctx, chunk)
    before = count(module) if reports is not None else None
    run_passes(ctx, module, passes, chunk.name)
    if reports is not None and before is not None:
        label = f"{chunk.name}:{chunk.line_offset + 1}" if chunk.line_offset else chunk.name
        reports.append(FusionReport(label, before, count(module)))
    return emit(module)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_file", metavar="[FILE|-]", default="-")
@click.option(
    "-p",
    "--passes",
    default="",
    metavar="PIPELINE",
    help="Passes to run, comma-separated, options in braces: 'fuse-x{opt=1},cse'.",
)
@click.option("-o", "--output", default="-", metavar="OUT", help="Output file (default: stdout).")
@click.option("-t", "--target", default="mlir", show_default=True, help="Output target.")
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
) -> None:
    """Parse fusec IR from FILE (or stdin), run passes, and print the result."""
    if list_passes:
        click.echo(describe_passes(), nl=False)
        return
    try:
        pass_list = build_passes(passes)
        tgt = build_target(target, print_op_generic)
    except FusecError as e:
        fail(str(e), EXIT_USAGE)
    ctx = make_context()

    def emit(module: ModuleOp) -> str:
        buf = io.StringIO()
        tgt.emit(ctx, module, buf)
        return buf.getvalue()

    try:
        text, name = read_input(input_file)
        chunks = split_input(text, name) if split_input_file else [Source(text, name)]
        outputs = []
        want_stats = fusion_stats or fusion_stats_json is not None
        reports: list[FusionReport] | None = [] if want_stats else None
        for chunk in chunks:
            try:
                outputs.append(process(chunk, pass_list, emit, reports))
            except FusecError as e:
                if not verify_diagnostics:
                    raise
                outputs.append(f"{e}\n")
        write_output(output, "// -----\n".join(outputs))
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
    try:
        cli.main(args=argv, prog_name="fusec-opt", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return EXIT_USAGE
    except click.exceptions.Abort:
        return 130
    except SystemExit as e:
        return int(e.code or 0)
    except PipelineSpecError as e:
        click.echo(str(e), err=True)
        return EXIT_USAGE
    except Exception as e:  # a bug in fusec: still one line, never a traceback
        if os.environ.get("FUSEC_TRACEBACK"):
            raise
        click.echo(f"fusec-opt: internal error: {type(e).__name__}: {e}", err=True)
        return INTERNAL_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
