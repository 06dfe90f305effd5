"""A whole Hugging Face BERT-base on the CPU: fusec on its ONNX file and through
``torch.compile(backend="fusec")``, against ONNX Runtime on the same file and torch eager, in one
process, interleaved (issues 26 and 29: "at most 1.0x ONNX Runtime on the same model").

    python -m fusec.bench.bert_ort [--size base] [--layers 12] [--seq 128] [--repeat 10] [--rounds 1]
        [--runners fusec_onnx,fusec_torch,onnxruntime,eager] [--knob-off NAME] [--profile]
        [--json-out PATH]

The model is ``BertModel`` with the bert-base configuration (12 layers, width 768, 12 heads,
intermediate 3072, vocabulary 30522; ``--size tiny``: width 64, 4 heads, intermediate 128,
vocabulary 100, for tests) and random weights (`fusec.bench.hf_models.spread_weights`;
nothing is downloaded), at the library's default attention (``sdpa``), float32, batch 1. It is
exported once to an ONNX file (``torch.onnx.export``, the TorchScript exporter at opset 17: the
dynamo exporter needs ``onnxscript``) with static shapes; inputs are ``input_ids`` and
``attention_mask`` (int64, the last eighth of the keys masked), the output
``last_hidden_state``. The runners:

- ``fusec_onnx``: ``fusec.compile(file, device="cpu")``, weights bound, called as a user calls it
  (``exe(**feeds)``: numpy in and out);
- ``fusec_torch``: ``torch.compile(model, backend="fusec", options={"device": "cpu"})``;
- ``onnxruntime``: the same file, CPU provider, the session options fusec-bench gives every
  session (`fusec.bench.peer_onnx.session_options`: every optimisation, no spinning);
- ``eager``: the PyTorch model itself;
- with ``--knob-off NAME`` (repeatable), also ``fusec_onnx-NAME``: the ONNX file compiled with
  that code-generation knob off (`fusec.knobs`), for a before/after in the same run.

Every runner's output is checked against eager's (max |difference| at most 1e-4 of the output's
largest magnitude, at least 1e-4) before anything is timed; one that differs is reported and not
timed. The runners are then timed as fusec-bench times them (`fusec.bench.timing.interleaved`,
balanced order, turns of `BLOCK` calls); each figure is a median of wall times per call, in the
same run as the others; ``--rounds`` repeats the whole timing and prints each round. The load
average is printed before and after each round. ``--profile`` adds the per-kernel time of the
``fusec_onnx`` executable (OpenCL profiling events, summed over the launches of each kernel).

Without torch, transformers, onnx or onnxruntime it prints what is missing and exits 0.
"""

from __future__ import annotations

import fusec.bench.idle_threads  # noqa: F401,I001 - before numpy and torch load

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fusec.bench.timing import BLOCK, interleaved, wall_call

RUNNERS = ("fusec_onnx", "fusec_torch", "onnxruntime", "eager")
NEEDS = ("torch", "transformers", "onnx", "onnxruntime")
SIZES = {"base": {}, "tiny": {"hidden_size": 64, "num_attention_heads": 4,
                              "intermediate_size": 128, "vocab_size": 100}}
"""BertConfig arguments on top of the library's defaults (which are bert-base's)."""
ATOL = 1e-4
"""Each runner's output against eager's: max |difference| <= ATOL * max(1, max |eager|)."""


def missing_modules() -> list[str]:
    import importlib.util

    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


@dataclass
class Model:
    """The PyTorch module (returns ``last_hidden_state``), its ONNX file and the inputs."""

    module: Any
    path: Path
    inputs: dict[str, Any]
    description: str

    @property
    def feeds(self) -> dict[str, np.ndarray]:
        return {name: tensor.numpy() for name, tensor in self.inputs.items()}


def build(layers: int, seq: int, directory: Path, seed: int = 0, size: str = "base") -> Model:
    import torch
    import transformers

    from fusec.bench.hf_models import spread_weights

    torch.manual_seed(seed)
    config = transformers.BertConfig(num_hidden_layers=layers, **SIZES[size])
    bert = transformers.BertModel(config).eval()
    spread_weights(bert, seed)

    class LastHiddenState(torch.nn.Module):  # the tensor alone, not a ModelOutput
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    module = LastHiddenState().eval()
    generator = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, config.vocab_size, (1, seq), generator=generator)
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, seq - seq // 8:] = 0
    inputs = {"input_ids": ids, "attention_mask": mask}
    path = directory / f"bert_base_{layers}l_s{seq}.onnx"
    with torch.no_grad():
        torch.onnx.export(module, (ids, mask), str(path), input_names=list(inputs),
                          output_names=["last_hidden_state"], opset_version=17, dynamo=False)
    description = (f"HF BertModel, bert-{size} config, {layers} layers, B=1 S={seq}, f32, "
                   f"{bert.config._attn_implementation} attention, random weights; ONNX: "
                   f"TorchScript exporter, opset 17, {path.stat().st_size / 2**20:.0f} MiB")
    return Model(module, path, inputs, description)


@dataclass
class Runner:
    name: str
    call: Callable[[], Any]
    output: Callable[[Any], np.ndarray]
    first_call_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def make_runners(model: Model, names: list[str],
                 knobs_off: list[str] = ()) -> tuple[list[Runner], dict[str, str]]:
    """The runners of ``names`` (and one ``fusec_onnx-KNOB`` per knob of ``knobs_off``) that
    could be made; the others with the reason."""
    import torch

    import fusec
    from fusec.bench.peer_onnx import session_options

    feeds = model.feeds
    makers: dict[str, Callable[[], Runner]] = {}

    def fusec_onnx(knob: str | None = None) -> Runner:
        exe = fusec.compile(str(model.path), device="cpu",
                            shapes={n: list(a.shape) for n, a in feeds.items()},
                            knobs={knob: False} if knob else None)
        return Runner(f"fusec_onnx-{knob}" if knob else "fusec_onnx", lambda: exe(**feeds),
                      lambda out: out[0], extra={"exe": exe})

    def fusec_torch() -> Runner:
        compiled = torch.compile(model.module, backend="fusec", options={"device": "cpu"})
        return Runner("fusec_torch", lambda: compiled(**model.inputs),
                      lambda out: out.numpy())

    def onnxruntime() -> Runner:
        import onnxruntime as ort

        session = ort.InferenceSession(str(model.path), session_options(),
                                       providers=["CPUExecutionProvider"])
        return Runner("onnxruntime", lambda: session.run(None, feeds), lambda out: out[0])

    def eager() -> Runner:
        return Runner("eager", lambda: model.module(**model.inputs), lambda out: out.numpy())

    makers = {"fusec_onnx": fusec_onnx, "fusec_torch": fusec_torch, "onnxruntime": onnxruntime,
              "eager": eager}
    for knob in knobs_off:
        makers[f"fusec_onnx-{knob}"] = lambda knob=knob: fusec_onnx(knob)
    runners, failed = [], {}
    for name in [*names, *(f"fusec_onnx-{knob}" for knob in knobs_off)]:
        try:
            start = time.perf_counter()
            runner = makers[name]()
            with torch.inference_mode():
                runner.call()
            runner.first_call_s = time.perf_counter() - start
            runners.append(runner)
        except Exception as error:  # noqa: BLE001 - a runner that cannot be made is reported
            failed[name] = f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"
    return runners, failed


def check(runners: list[Runner], model: Model) -> tuple[list[Runner], dict[str, str],
                                                         dict[str, float]]:
    """The runners whose output matches eager's, the others with the difference, and each
    one's max |difference|."""
    import torch

    with torch.inference_mode():
        reference = model.module(**model.inputs).numpy()
        bound = ATOL * max(1.0, float(np.abs(reference).max()))
        good, wrong, differences = [], {}, {}
        for runner in runners:
            out = np.asarray(runner.output(runner.call()))
            difference = (float(np.abs(out - reference).max()) if out.shape == reference.shape
                          else float("inf"))
            differences[runner.name] = difference
            if difference <= bound:
                good.append(runner)
            else:
                wrong[runner.name] = (f"differs from eager by {difference:.3g} (bound "
                                      f"{bound:.3g}, shape {out.shape})")
    return good, wrong, differences


def time_round(runners: list[Runner], warmup: int, repeat: int) -> dict[str, float]:
    import torch

    with torch.inference_mode():
        timings = interleaved([lambda r=r: wall_call(r.call) for r in runners], warmup, repeat,
                              block=BLOCK, balanced=True)
    return {r.name: t.median_ms for r, t in zip(runners, timings, strict=True)}


def kernel_profile(exe: Any, feeds: dict[str, np.ndarray], repeat: int) -> list[tuple[str, int,
                                                                                     float]]:
    """(kernel, launches per call, median ms per call summed over its launches), largest
    first, of the fusec ONNX executable."""
    args = exe.exe.arguments((), exe.arguments((), feeds))
    per_call: dict[str, list[float]] = defaultdict(list)
    launches: dict[str, int] = defaultdict(int)
    for i in range(repeat):
        totals: dict[str, float] = defaultdict(float)
        for kernel in exe.exe.profile(*args)[1].kernels:
            totals[kernel.kernel] += kernel.seconds * 1e3
            if i == 0:
                launches[kernel.kernel] += 1
        for name, ms in totals.items():
            per_call[name].append(ms)
    rows = [(name, launches[name], float(np.median(values))) for name, values in per_call.items()]
    return sorted(rows, key=lambda row: -row[2])


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def run(args: argparse.Namespace) -> dict[str, Any]:
    names = [n for n in args.runners.split(",") if n]
    unknown = [n for n in names if n not in RUNNERS]
    if unknown:
        raise SystemExit(f"bert_ort: unknown runner(s) {', '.join(unknown)} (known: "
                         f"{', '.join(RUNNERS)})")
    result: dict[str, Any] = {"device": "cpu"}
    with tempfile.TemporaryDirectory(prefix="fusec-bert-ort-") as tmp:
        start = time.perf_counter()
        model = build(args.layers, args.seq, Path(tmp), size=args.size)
        print(f"model: {model.description} (built and exported in "
              f"{time.perf_counter() - start:.0f} s)", flush=True)
        result["model"] = model.description
        runners, failed = make_runners(model, names, args.knob_off)
        runners, wrong, differences = check(runners, model)
        result.update(failed=failed, wrong=wrong, max_difference=differences,
                      first_call_s={r.name: round(r.first_call_s, 1) for r in runners})
        for name, reason in {**failed, **wrong}.items():
            print(f"{name}: not timed: {reason}", flush=True)
        for r in runners:
            print(f"{r.name}: compiled and first call {r.first_call_s:.1f} s, max |difference| "
                  f"from eager {differences[r.name]:.2g}", flush=True)
        try:
            from fusec.runtime.device import select_device

            result["opencl_device"] = select_device("cpu").description
        except Exception as error:  # noqa: BLE001 - only a label
            result["opencl_device"] = f"unknown ({error})"
        print(f"fusec device: {result['opencl_device']}", flush=True)
        rounds = []
        for index in range(args.rounds):
            before = load_average()
            medians = time_round(runners, args.warmup, args.repeat)
            after = load_average()
            rounds.append({"medians_ms": medians, "load_before": before, "load_after": after})
            print(round_line(index, medians, before, after), flush=True)
        result["rounds"] = rounds
        fusec_exe = next((r.extra["exe"] for r in runners if r.name == "fusec_onnx"), None)
        if args.profile and fusec_exe is not None:
            rows = kernel_profile(fusec_exe, model.feeds, args.repeat)
            result["kernels"] = [{"kernel": k, "launches": n, "ms": round(ms, 3)}
                                 for k, n, ms in rows]
            print(f"fusec_onnx kernels (median ms per call, {args.repeat} profiled calls; load "
                  f"{load_average()}):", flush=True)
            for kernel, count, ms in rows:
                print(f"  {ms:9.3f} ms  {count:3d} x {kernel}")
            print(f"  {sum(ms for _, _, ms in rows):9.3f} ms  sum", flush=True)
    return result


def round_line(index: int, medians: dict[str, float], before: str, after: str) -> str:
    cells = [f"{name} {ms:.1f} ms" for name, ms in medians.items()]
    ratios = [f"{ours}/onnxruntime {medians[ours] / medians['onnxruntime']:.2f}"
              for ours in medians if ours.startswith("fusec") and "onnxruntime" in medians]
    return (f"round {index + 1}: {', '.join(cells)}; {', '.join(ratios)} (load average "
            f"{before} -> {after})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusec.bench.bert_ort",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=tuple(SIZES), default="base")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=10, help="calls per runner and round "
                        "(at least; fast runners get more, as fusec-bench does)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--runners", default=",".join(RUNNERS))
    parser.add_argument("--knob-off", action="append", default=[], metavar="NAME",
                        help="also fusec on the ONNX file with this knob off (repeatable)")
    parser.add_argument("--profile", action="store_true",
                        help="also the per-kernel time of fusec on the ONNX file")
    parser.add_argument("--json-out", default=None)
    args = parser.parse_args(argv)
    missing = missing_modules()
    if missing:
        print(f"bert_ort: skipped: {', '.join(missing)} not installed (pip install -e "
              f"'.[bench]')")
        return 0
    result = run(args)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1))
    return 1 if result["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
