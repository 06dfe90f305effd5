"""``fusec-bench``: time fusec against numpy, PyTorch, torch.compile and ONNX Runtime.

    fusec-bench                         # every CPU workload, host overhead, compile time
    fusec-bench --device gpu --json     # the GPU table, as JSON
    fusec-bench -w softmax -w sgemm --repeat 10 --peers numpy,onnxruntime

Each workload runs through fusec and every installed peer in this one process; every output
is checked against the reference before anything is timed. Peers come with
``pip install 'fusec[bench]'``; a missing one shows as ``n/a``. Exit codes: 0 when every output
that was computed agreed with the reference, 1 when one did not (or fusec failed to compile a
workload), 2 for a bad command line.
"""

from __future__ import annotations

import json
import sys
from typing import NoReturn

import click

from fusec.bench import idle_threads  # noqa: F401 - before numpy and torch load
from fusec.bench.harness import Settings
from fusec.bench.peers import peers_for, set_threads
from fusec.bench.report import to_json
from fusec.bench.suite import SPECIAL, SuiteResult, plan, render, run_suite
from fusec.bench.workloads import all_workloads, tiny_workloads
from fusec.files import atomic_write, check_writable
from fusec.tools.cli import run_cli

EXIT_WRONG = 1
EXIT_INPUT = 1
EXIT_USAGE = 2


def workload_help() -> str:
    names = [w.name for w in all_workloads() + tiny_workloads()]
    return ("Run only this workload (repeatable; a prefix selects several): "
            f"{', '.join([*names, *SPECIAL])}.")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--device", type=click.Choice(["cpu", "gpu"]), default="cpu", show_default=True,
              help="Where fusec and the peers run.")
@click.option("-w", "--workload", "workloads", multiple=True, help=workload_help())
@click.option("--repeat", type=click.IntRange(1), default=5, show_default=True,
              help="Timed calls per runner; the median is reported.")
@click.option("--warmup", type=click.IntRange(0), default=2, show_default=True,
              help="Untimed calls before timing (after the checked call).")
@click.option("--peers", "peer_list", default="",
              help="Comma-separated peers to run (default: all for the device): "
                   "numpy, torch, torch.compile, onnxruntime.")
@click.option("-p", "--pipeline", default="default", show_default=True,
              help="fusec pass pipeline.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Input seed.")
@click.option("--threads", type=click.IntRange(1), default=None,
              help="CPU threads for PyTorch and ONNX Runtime (default: theirs).")
@click.option("--inputs", "input_layout", type=click.Choice(["aligned", "numpy"]),
              default="aligned", show_default=True,
              help="Input arrays page-aligned (fusec uses them in place on the CPU) or as "
                   "numpy allocates them (16-byte aligned: fusec copies each once per call).")
@click.option("--fusec-arrays", type=click.Choice(["numpy", "device"]), default=None,
              help="fusec's inputs and outputs: numpy arrays (moved in and out in every call) "
                   "or device arrays made once, as the torch peers' tensors are (a call "
                   "enqueues, then synchronize). Default: device with --device gpu, else numpy.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the table.")
@click.option("--json-out", type=click.Path(dir_okay=False, writable=True),
              help="Also write the JSON document to this file.")
@click.option("--plot", "plot_path", metavar="FILE.svg|png",
              help="Also draw the results as a chart (needs the 'plot' extra: matplotlib).")
@click.option("--from", "from_json", metavar="FILE.json", type=click.Path(dir_okay=False),
              help="With --plot: draw this saved --json-out result instead of running.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def cli(device: str, workloads: tuple[str, ...], repeat: int, warmup: int, peer_list: str,
         pipeline: str, seed: int, threads: int | None, input_layout: str,
         fusec_arrays: str | None, as_json: bool, json_out: str | None, plot_path: str | None,
         from_json: str | None, quiet: bool) -> None:
    """Benchmark fusec against the tools a user would otherwise reach for."""
    if plot_path is not None:
        from fusec.bench.plot import PlotError, check_path

        try:
            check_path(plot_path)  # before the run: a typo in --plot costs no benchmark
        except PlotError as e:
            raise click.UsageError(str(e)) from None
    if from_json is not None:
        if plot_path is None:
            click.echo("fusec-bench: --from needs --plot", err=True)
            sys.exit(EXIT_USAGE)
        plot(load_document(from_json), plot_path)
        return
    check_writable(json_out)  # before the benchmark runs (an OutputError: one line, exit 1)
    check_writable(plot_path)
    settings = Settings(device=device, repeat=repeat, warmup=warmup, pipeline=pipeline,
                        seed=seed, input_alignment=4096 if input_layout == "aligned" else None,
                        fusec_arrays=fusec_arrays or ("device" if device == "gpu" else "numpy"))
    try:
        names = [n.strip() for n in peer_list.split(",") if n.strip()]
        peers = peers_for(device, names or None)
        chosen = plan(workloads, device)
    except ValueError as error:
        click.echo(f"fusec-bench: {error}", err=True)
        sys.exit(EXIT_USAGE)
    set_threads(threads)
    peer_names = [p.name for p in peers]

    def document(suite: SuiteResult) -> str:
        return json.dumps(to_json(suite.rows, settings, peer_names, suite.extra), indent=1)

    def save(suite: SuiteResult) -> None:
        if json_out:  # atomically: an interrupted run leaves the last checkpoint whole
            atomic_write(json_out, document(suite) + "\n")

    suite = run_suite(chosen, peers, settings,
                      progress=lambda line: None if quiet else click.echo(line, err=True),
                      checkpoint=save)
    save(suite)
    if as_json:
        click.echo(document(suite))
    else:
        click.echo(render(suite, settings, peer_names))
    if plot_path is not None:
        plot(to_json(suite.rows, settings, peer_names, suite.extra), plot_path)
    problems = suite.problems()
    for line in problems:
        click.echo(f"fusec-bench: error: {line}", err=True)
    if problems:
        sys.exit(EXIT_WRONG)


def load_document(path: str) -> dict:
    """A saved ``--json-out`` document; one-line error if unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as e:
        click.echo(f"fusec-bench: {path}: error: {e.strerror}", err=True)
        sys.exit(EXIT_INPUT)
    except ValueError as e:
        click.echo(f"fusec-bench: {path}: error: not a fusec-bench JSON document: {e}", err=True)
        sys.exit(EXIT_INPUT)
    if not isinstance(document, dict) or not isinstance(document.get("workloads"), list):
        click.echo(f"fusec-bench: {path}: error: not a fusec-bench JSON document "
                   "(no 'workloads' list)", err=True)
        sys.exit(EXIT_INPUT)
    return document


def plot(document: dict, path: str) -> None:
    from fusec.bench.plot import PlotError, draw

    try:
        draw(document, path)
    except PlotError as e:
        click.echo(f"fusec-bench: error: {e}", err=True)
        sys.exit(EXIT_INPUT)


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: exits with the command's code; an error is one line, never a traceback
    (exit 70 for a bug in fusec)."""
    sys.exit(run_cli(cli, "fusec-bench", argv))


if __name__ == "__main__":
    main()
