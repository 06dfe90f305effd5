"""``fusec-fuzz``: random programs against the reference, mangled texts against fusec-opt.

    fusec-fuzz --seed 0 --count 200                  # 200 programs and 200 mangled texts
    fusec-fuzz --seed 1000 --count 50 --out failures  # write minimized failing cases there
    fusec-fuzz --models --seed 0 --count 300          # 300 mutants of the ONNX test models

Each program (seeds ``--seed`` on) is compiled with the default pipeline and with none, run on
the OpenCL device and compared with the numpy reference (`fusec.fuzz.oracle`); each mangled
text goes through ``fusec-opt`` and must end in a one-line error. A failing program is minimized
and, with ``--out``, written as ``program-<seed>.mlir`` and ``.npz``, the form of
``tests/fuzz/cases``. A line per failure, then a summary line.

With ``--models``, it mutates ONNX model files instead (``--model FILE``, repeated; default the
ONNX test models in ``tests/frontends/models``): ``--count`` mutants, each run by ``fusec-run``
in a worker process within ``--timeout`` seconds (none started after ``--budget`` seconds),
which must exit 0 with ONNX Runtime's numbers
(where ONNX Runtime accepts the file) or exit 1 with one line; never a traceback, a hang, a
crash, or a read of a file outside the model's folder (`fusec.fuzz.model_campaign`). With
``--out``, failing mutants are written there as ``mutant-<seed>/``.

Exit codes: 0 nothing failed, 1 a failure was found, 2 bad command line, 3 no usable device,
70 internal error (a bug in the fuzzer itself).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fusec import __version__
from fusec.tools.cli import EXIT_INPUT, run_cli

EXIT_DEVICE = 3


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The first seed.")
@click.option("--count", type=click.IntRange(min=0), default=100, show_default=True,
              help="Random programs to try.")
@click.option("--mutations", type=click.IntRange(min=0), default=None,
              help="Mangled texts to try (default: as many as --count).")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Write minimized failing cases into this folder.")
@click.option("--device", type=click.Choice(["auto", "gpu", "cpu"]), default="cpu",
              show_default=True)
@click.option("--max-ops", type=click.IntRange(min=1), default=10, show_default=True,
              help="Most ops in a program.")
@click.option("--verbose", is_flag=True, help="Also list inconclusive cases.")
@click.option("--in-process", is_flag=True,
              help="Run the programs in this process (faster; one that crashes it ends the run).")
@click.option("--models", is_flag=True,
              help="Mutate ONNX model files instead: --count mutants through fusec-run.")
@click.option("--model", "model_files", multiple=True,
              type=click.Path(exists=True, dir_okay=False),
              help="With --models: a model to mutate (repeatable; default the ONNX test models).")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="With --models: seconds each fusec-run of a mutant may take.")
@click.option("--budget", type=click.FloatRange(min=0), default=None,
              help="With --models: start no mutant after this many seconds.")
@click.version_option(__version__, prog_name="fusec-fuzz")
def cli(seed: int, count: int, mutations: int | None, out: str | None, device: str,
        max_ops: int, verbose: bool, in_process: bool, models: bool,
        model_files: tuple[str, ...], timeout: float, budget: float | None) -> None:
    """Fuzz fusec: random programs against the reference, mangled text against fusec-opt."""
    if models:
        run_models(seed, count, out, model_files, timeout, verbose, budget)
        return
    from fusec.fuzz.campaign import run
    from fusec.runtime.device import select_device
    from fusec.runtime.errors import DeviceError
    from fusec.tools.fusec_opt import main as opt_main

    try:
        select_device(device)  # type: ignore[arg-type]
    except DeviceError as e:
        click.echo(f"fusec-fuzz: error: {e}", err=True)
        sys.exit(EXIT_DEVICE)
    report = run(seed, count, count if mutations is None else mutations,
                 Path(out) if out else None, device, max_ops,
                 progress=lambda line: click.echo(f"FAIL {line}"), opt_main=opt_main,
                 isolate=not in_process)
    if verbose:
        for line in report.inconclusive:
            click.echo(f"inconclusive {line}")
    click.echo(report.summary())
    if report.failures:
        sys.exit(EXIT_INPUT)


def run_models(seed: int, count: int, out: str | None, model_files: tuple[str, ...],
               timeout: float, verbose: bool, budget: float | None) -> None:
    """``--models``: mutants of model files through fusec-run (`fusec.fuzz.model_campaign`)."""
    from fusec.fuzz.model_campaign import TEST_MODELS, run_models as campaign

    files = [Path(f) for f in model_files] or sorted(TEST_MODELS.glob("*.onnx"))
    if not files:
        raise click.UsageError(f"no models to mutate (none in {TEST_MODELS}); give --model")
    report = campaign(seed, count, files, fusec_run_job, Path(out) if out else None, timeout,
                      progress=lambda line: click.echo(f"FAIL {line}"), budget=budget)
    if verbose:
        for line in report.refused:
            click.echo(f"refused: {line}")
        for line in report.lenient:
            click.echo(f"accepted where ONNX Runtime refuses: {line}")
    click.echo(report.summary())
    if report.failures:
        sys.exit(EXIT_INPUT)


def fusec_run_job(folder: str) -> tuple[int, str, str]:
    """A mutant's folder through ``fusec-run`` in the worker process (`run_models`)."""
    from fusec.fuzz.model_oracle import run_fusec
    from fusec.tools.fusec_run import main as run_main

    return run_fusec(run_main, folder)


def main(argv: list[str] | None = None) -> int:
    return run_cli(cli, "fusec-fuzz", argv)


if __name__ == "__main__":
    sys.exit(main())
