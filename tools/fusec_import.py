"""``fusec-import``: an ONNX model (or a saved PyTorch ``ExportedProgram``, ``.pt2``) in,
``nn`` IR out (with its weights beside it).

    fusec-import model.onnx -o model.mlir          # writes model.mlir and model.params.npz
    fusec-import bert.onnx --shape input_ids=1x128 --shape attention_mask=1x128 -o bert.mlir
    fusec-import tiny.onnx --inline-weights        # everything inline, printed to stdout
    fusec-import model.pt2 -o model.mlir           # torch.export.save's file, its shapes

The IR is one ``func.func @main``: the graph inputs in graph order, then the weights; the
results are the graph outputs in graph order. Weights larger than a few elements go to
``OUT.params.npz`` (keys: the weight arguments' names), which the module names in its
``fusec.params`` attribute, so that ``fusec-run OUT.mlir`` and ``fusec.compile`` bind them
without flags. Without ``-o`` the IR goes to stdout, which needs ``--inline-weights`` when the
model has weights to write. Both files are written to temporary names and renamed, so a failed
run leaves nothing half-written; the input is never overwritten.

Exit codes: 0 success; 1 bad input (an unreadable, corrupt or truncated model, an opset out of
range, missing external data, an unsupported op: ``model.onnx: error: node '/encoder/Foo'
(NonMaxSuppression): not supported``); 2 bad command line; 70 internal error.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
import tempfile

import click
import numpy as np

from fusec import __version__
from fusec.compiler import progress
from fusec.compiler.diagnostics import FusecError
from fusec.compiler.progress import Progress
from fusec.files import check_distinct_outputs, check_not_input
from fusec.tools.cli import EXIT_INPUT, run_cli

PARAMS_SUFFIX = ".params.npz"
PT2_SUFFIX = ".pt2"


def parse_shape(spec: str) -> tuple[str, list[int]]:
    """``NAME=1x128`` -> ``("NAME", [1, 128])``; a usage error otherwise."""
    name, sep, dims = spec.rpartition("=")
    try:
        shape = [int(d) for d in dims.split("x")] if dims else []
    except ValueError:
        shape = []
    if not sep or not name or not shape or any(d < 0 for d in shape):
        raise click.BadParameter(f"'{spec}' is not NAME=DIMS (e.g. input_ids=1x128)",
                                 param_hint="--shape")
    return name, shape


def parse_shapes(specs: tuple[str, ...]) -> dict[str, list[int]]:
    shapes: dict[str, list[int]] = {}
    for spec in specs:
        name, shape = parse_shape(spec)
        if name in shapes:
            raise click.BadParameter(f"'{name}' is given twice", param_hint="--shape")
        shapes[name] = shape
    return shapes


def params_path(output: str) -> str:
    base = output[:-5] if output.endswith(".mlir") else output
    return base + PARAMS_SUFFIX


def print_module(module: object) -> str:
    from fusec.compiler.context import make_context
    from fusec.compiler.targets import build_target

    buf = io.StringIO()
    build_target("mlir").emit(make_context(), module, buf)  # type: ignore[arg-type]
    return buf.getvalue()


def write_atomically(files: list[tuple[str, bytes]]) -> None:
    """Writes every file to a temporary name beside it, then renames them all. A target that
    exists and is not a regular file (``/dev/null``, a FIFO) is written in place, last: a
    rename would put a regular file where the device was."""
    temps: list[tuple[str, str, str]] = []  # (temporary file, target, path as given)
    in_place: list[tuple[str, bytes]] = []
    where = ""  # the output being written: what a failure names (not its temporary file)
    try:
        for path, data in files:
            where = path
            target = os.path.realpath(path)
            if os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode):
                in_place.append((target, data))
                continue
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".fusec-import-")
            temps.append((tmp, target, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        for tmp, target, path in temps:
            where = path
            os.replace(tmp, target)
        for target, data in in_place:
            where = target
            with open(target, "wb") as f:
                f.write(data)
    except OSError as e:
        for tmp, _, _ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise FusecError(f"{where}: error: cannot write output: {e.strerror}") from None


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def run(model_path: str, output: str | None, shapes: dict[str, list[int]],
        inline_weights: bool, dot: str | None = None, report: bool = False) -> None:
    from fusec.compiler.onnx_driver import import_onnx
    from fusec.frontends import onnx_import

    inline = sys.maxsize if inline_weights else onnx_import.INLINE_ELEMENTS
    if model_path.endswith(PT2_SUFFIX):
        from fusec.compiler.torch_export import import_exported

        if shapes:
            raise FusecError(f"{model_path}: error: --shape does not apply to an "
                             "ExportedProgram (it runs at the shapes it was exported with)")
        imported = import_exported(model_path, inline)
    else:
        imported = import_onnx(model_path, shapes, inline_elements=inline)
    files: list[tuple[str, bytes]] = []
    if imported.params:
        if output is None:
            raise FusecError(f"{model_path}: error: the model has {len(imported.params)} "
                             "weights to write beside the IR; give -o OUT.mlir (or "
                             "--inline-weights)")
        npz = params_path(output)
        onnx_import.params_attribute(imported.module, os.path.basename(npz))
        files.append((npz, npz_bytes(imported.params)))
    if dot is not None:
        from fusec.compiler.dot import draw

        files.append((dot, draw(imported.module).encode("utf-8")))
    progress.step("printing the IR")
    text = print_module(imported.module)
    if output is not None:
        files.append((output, text.encode("utf-8")))
    if files:
        progress.step(f"writing {', '.join(path for path, _ in files)}")
    write_atomically(files)
    progress.pause()
    if report:
        for line in imported.report:
            click.echo(f"{model_path}: {line}", err=True)
    if output is None:
        sys.stdout.write(text)


EPILOG = """\b
Examples:
  fusec-import model.onnx -o model.mlir
  fusec-import bert.onnx --shape input_ids=1x128 -o bert.mlir
  fusec-import tiny.onnx --inline-weights
  fusec-import model.pt2 -o model.mlir     # a saved torch.export ExportedProgram
  fusec-import model.onnx -o model.mlir --dot model.dot   # and: dot -Tsvg model.dot
  fusec-import model.onnx -o model.mlir --report   # what was recognised, what was not

\b
Exit codes: 0 success, 1 bad input (unreadable or corrupt model, unsupported
op or opset, missing external data), 2 bad command line, 70 internal error.
"""


@click.command(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.argument("model", metavar="MODEL.onnx|MODEL.pt2")
@click.option("-o", "--output", metavar="OUT.mlir",
              help="Write the IR here and the weights to OUT.params.npz (default: stdout).")
@click.option("--shape", "shape_specs", multiple=True, metavar="NAME=DIMS",
              help="Fix a dynamic input's shape, e.g. input_ids=1x128 (repeatable).")
@click.option("--inline-weights", is_flag=True,
              help="Write every weight inline in the IR (small models, tests).")
@click.option("--dot", metavar="FILE.dot",
              help="Also write the imported graph as Graphviz DOT (see fusec-opt -t dot).")
@click.option("--report", is_flag=True,
              help="Print on stderr what was recognised (attention, norms, GELUs) and what was "
                   "left as written, with the ONNX node and why.")
@click.option("--progress", "force_progress", is_flag=True,
              help="Report each step on stderr (shown anyway on a terminal after about a "
                   "second).")
@click.version_option(__version__, prog_name="fusec-import")
def cli(model: str, output: str | None, shape_specs: tuple[str, ...],
        inline_weights: bool, dot: str | None, report: bool, force_progress: bool) -> None:
    """Import the ONNX model MODEL.onnx (or the ExportedProgram MODEL.pt2) as fusec nn IR."""
    shapes = parse_shapes(shape_specs)
    if output is not None:
        for written in (output, params_path(output)):
            check_not_input(written, [model])  # also through symlinks and hard links: exit 1
    check_not_input(dot, [model, output])
    check_distinct_outputs([("-o", output),
                            ("-o's weights", None if output is None else params_path(output)),
                            ("--dot", dot)])
    try:
        with progress.reporting(Progress.for_stream(sys.stderr, "fusec-import", force_progress)):
            run(model, output, shapes, inline_weights, dot, report)
    except FusecError as e:
        message = str(e)
        click.echo(message if ": error:" in message else f"fusec-import: {message}", err=True)
        sys.exit(EXIT_INPUT)


def main(argv: list[str] | None = None) -> int:
    """Entry point: one line per error, never a traceback (exit 70 for a bug in fusec)."""
    return run_cli(cli, "fusec-import", argv)


if __name__ == "__main__":
    sys.exit(main())

