"""``fusec-build``: compile a model once, at build time, into a deployable ``.fusec`` artifact.

    fusec-build examples/bert_layer.mlir -o bert_layer.fusec --device cpu
    fusec-build model.onnx -o model.fusec --shape input_ids=1x128 --fusion-stats-json stats.json
    fusec-build model.pt2 -o model.fusec     # a saved torch.export ExportedProgram (PyTorch needed)
    fusec-run bert_layer.fusec --inputs in.npz -o out.npz       # or fusec.load("bert_layer.fusec")

INPUT is ``nn`` IR (``.mlir``; weights named by its ``fusec.params`` attribute are bound and
stored), an ONNX model (``.onnx``; ``--shape NAME=DIMS`` fixes a dynamic input dimension) or a
saved PyTorch ``ExportedProgram`` (``.pt2``, at the shapes it was exported with).
``--knob NAME=VALUE`` sets a code-generation knob for this build (`fusec.knobs`, as ``fusec-run``
and ``fusec-opt``); what it decided is in the artifact's plan and source.
The artifact holds the program plan, the OpenCL source and the device binary, the weights,
the signature and the device it was built for (docs/artifacts.md); ``fusec.load`` runs it
without the compiler. The same input and options give a byte-identical file; ``-o`` and
``--fusion-stats-json`` are written atomically (nothing half-written on a failure).

Exit codes (as ``fusec-run``'s):
    0  success
    1  bad input: unreadable or invalid IR or model, a pass that fails, an output that cannot
       be written or is the input
    2  bad command line (unknown option, pass or pipeline)
    3  no usable OpenCL device
    4  an OpenCL program failed to build
   70  internal error (a bug in fusec)
  130  interrupted (SIGINT); 143 terminated (SIGTERM)
"""

from __future__ import annotations

import sys

import click

from fusec import __version__, knobs
from fusec.compiler import progress
from fusec.compiler.progress import Progress
from fusec.files import atomic_write, check_distinct_outputs, check_not_input, check_writable
from fusec.tools.cli import knob_values, run_cli, show_warnings
from fusec.tools.fusec_run import errors_reported


def build(input_file: str, output: str, device: str, platform: str | None, pipeline: str,
          shapes: dict[str, list[int]], function: str | None, stats_json: str | None,
          launch_budget: int | None, launch_fusion: bool, allow_tf32: bool) -> None:
    from fusec.compiler.artifact_build import build_artifact
    from fusec.compiler.fusion_stats import reports_json

    for out in (output, stats_json):
        check_not_input(out, [input_file])
        check_writable(out)  # before compiling, not after
    check_distinct_outputs([("-o", output), ("--fusion-stats-json", stats_json)])
    built = build_artifact(input_file, device, platform, pipeline, shapes, function,
                           launch_budget, launch_fusion, allow_tf32)
    progress.step(f"writing {output}")
    atomic_write(output, built.data)
    if stats_json is not None:
        atomic_write(stats_json, reports_json([built.stats], input_file))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_file", metavar="INPUT")
@click.option("-o", "--output", required=True, metavar="OUT.fusec",
              help="The artifact to write.")
@click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="auto",
              show_default=True, help="The device to build for (auto: the best one found).")
@click.option("--platform", metavar="NAME", help="Only platforms whose name contains NAME.")
@click.option("-p", "--pipeline", default="default", show_default=True,
              help="Fusion passes before lowering ('none' for none).")
@click.option("--shape", "shape_specs", multiple=True, metavar="NAME=DIMS",
              help="An ONNX model's dynamic input shape, e.g. input_ids=1x128 (repeatable).")
@click.option("--function", metavar="NAME", help="The function to build (default: the only one).")
@click.option("--fusion-stats-json", "stats_json", metavar="FILE",
              help="Also write what fusion did (ops, regions, launches, bytes) as JSON.")
@click.option("--launch-budget", type=click.IntRange(min=0), metavar="BYTES",
              help="Bytes one merged launch may touch (default: the device's global memory).")
@click.option("--no-launch-fusion", is_flag=True, help="Keep one launch per kernel.")
@click.option("--allow-tf32", is_flag=True,
              help="Let f32 matmuls run on TF32 tensor cores (NVIDIA), as PyTorch's flag.")
@click.option("--knob", "knob_settings", multiple=True, metavar="NAME=VALUE",
              help="Set a code-generation knob for this build, e.g. attention_mma=false "
                   "(repeatable; the knobs: docs/knobs.md).")
@click.option("--verbose", is_flag=True,
              help="On a build error, print the log and source; show cache warnings.")
@click.option("--progress", "force_progress", is_flag=True,
              help="Report each compile step on stderr (shown anyway on a terminal after about "
                   "a second).")
@click.version_option(__version__, prog_name="fusec-build")
def cli(input_file: str, output: str, device: str, platform: str | None, pipeline: str,
        shape_specs: tuple[str, ...], function: str | None, stats_json: str | None,
        launch_budget: int | None, no_launch_fusion: bool, allow_tf32: bool,
        knob_settings: tuple[str, ...], verbose: bool, force_progress: bool) -> None:
    """Compile INPUT (.mlir, .onnx or a saved ExportedProgram .pt2) into a deployable
    artifact, OUT.fusec."""
    if launch_budget is not None and no_launch_fusion:
        raise click.UsageError("--launch-budget and --no-launch-fusion exclude each other")
    if verbose:
        show_warnings("fusec-build")
    from fusec.tools.fusec_import import parse_shapes

    shapes = parse_shapes(shape_specs)
    if shapes and not input_file.endswith(".onnx"):
        raise click.UsageError("--shape applies to ONNX models only")
    settings = knob_values(knob_settings)
    with errors_reported("fusec-build", verbose), knobs.overridden(settings):
        with progress.reporting(Progress.for_stream(sys.stderr, "fusec-build",
                                                    force_progress)):
            build(input_file, output, device, platform, pipeline, shapes, function,
                  stats_json, launch_budget, not no_launch_fusion, allow_tf32)


def main(argv: list[str] | None = None) -> int:
    """Entry point: one line per error, never a traceback (exit 70 for a bug in fusec)."""
    return run_cli(cli, "fusec-build", argv)


if __name__ == "__main__":
    sys.exit(main())
