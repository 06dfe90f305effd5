"""Greedy decoding, fusec against Hugging Face in one process: tokens per second, peak device
memory, and whether the tokens and logits agree (issue 30's measurement).

    python -m fusec.bench.decoder_peers --model gpt2|llama [--size full|tiny] [--batch 1,8]
        [--dtype f16] [--prompt 128] [--steps 512] [--device gpu|cpu]
        [--peers fusec,eager,compiled] [--repeats 3] [--json PATH]

The model is `fusec.bench.hf_models.build_model` (random weights, nothing downloaded; ``full``:
GPT-2 small or the Llama-style model of width 2048, 16 heads, 4 key/value heads, 4 layers, ffn
5632, vocabulary 32000), moved to the device (``cuda`` for ``--device gpu``) in ``--dtype``.
Per batch size, on one prompt of random tokens, the runners are:

- ``fusec``: `fusec.generate` over the decoder of `fusec.bench.decoder` with the model's
  weights (`fusec.bench.decoder_hf`), compiled for the OpenCL device; the prefill copies the
  weights to the device (each in the layout its kernels read) and the step shares those copies
  (``share_weights``), so each weight is held once;
- ``eager``: Hugging Face ``generate(do_sample=False)``, eager PyTorch (the model's default
  attention implementation, named in the output);
- ``compiled``: the same with ``cache_implementation="static"`` under ``torch.compile(mode=
  "reduce-overhead")``, Hugging Face's recipe for compiled generation: with transformers that
  has ``CompileConfig`` (4.47 on, 5.x), ``generate(..., compile_config=CompileConfig(mode=
  "reduce-overhead"))``, which compiles the decoding steps (on a CPU only when asked, which this
  bench does); before, ``model.forward = torch.compile(model.forward, mode="reduce-overhead",
  fullgraph=True)``.

Each runner generates ``--steps`` tokens per sequence (the prefill included, no end token)
once or twice to warm up (compiled: three times, for the compilation and the CUDA graphs), then
the runners take turns (`fusec.bench.timing.interleaved`, ``--repeats`` calls each) and the
median call gives tokens per second per sequence and in all (``batch`` sequences), and the
ratio of fusec's to each peer's.

Memory: PyTorch's is ``torch.cuda.max_memory_allocated`` over the runner's timed calls (reset
before; the weights included); fusec's is the device buffers it holds once it has run: the
pool of device arrays (weights, caches, tokens, `BufferPool.allocated_bytes`) plus each
program's own buffers (intermediates, `Executable.held_bytes`), what fusec asked OpenCL for,
not what the driver uses besides (program binaries, its own state). On a CPU there is no
device memory figure for PyTorch.

Checks, against the eager runner in the same dtype (``--dtype f32`` for the float32 token
check): the first ``min(32, steps)`` tokens of fusec and of the compiled runner against eager's
(``equal``, or the first step where some sequence differs), and fusec's logits at those
positions, computed for eager's tokens (teacher forcing, a third program of
`fusec.bench.decoder.function` with ``scores``), against eager's logits: the largest difference
and, for scale, the largest logit. In float32 the tokens should be equal; in 16 bits greedy
paths may part after a near tie, and the logits are what is compared.
"""

from __future__ import annotations

from fusec.bench import idle_threads  # noqa: F401 - before numpy and torch load

# isort: split
import argparse
import gc
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from fusec.bench.decoder import DecoderSizes, decoder_ir, function
from fusec.bench.decoder_hf import UnsupportedModel, decoder_from_hf
from fusec.bench.hf_models import CONFIGS, build_model, greedy
from fusec.bench.timing import interleaved

DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
PEERS = ("fusec", "eager", "compiled")
CHECKED = 32
"""Steps whose tokens and logits are compared with eager's (fewer if fewer are generated)."""


@dataclass
class Runner:
    """One way to generate, its timing and its checks (what the table and the JSON show)."""

    name: str
    what: str
    call: Callable[[], Any] = field(repr=False)
    ms: float = 0.0
    tokens_per_s: float = 0.0
    tokens_per_s_all: float = 0.0
    peak_bytes: int | None = None
    memory: str = ""
    tokens: str = ""
    """Its first tokens against eager's: ``equal``, ``differ from step N`` or ``reference``."""
    logit_difference: float | None = None
    """fusec: the largest difference of its logits from eager's (`logit_check`)."""
    largest_logit: float | None = None


def parse_batches(text: str) -> list[int]:
    try:
        batches = [int(b) for b in text.split(",")]
    except ValueError:
        batches = []
    if not batches or min(batches) < 1:
        raise argparse.ArgumentTypeError(f"expected batch sizes like 1,8, got '{text}'")
    return batches


def parse_peers(text: str) -> list[str]:
    peers = text.split(",")
    unknown = [p for p in peers if p not in PEERS]
    if unknown or "eager" not in peers:
        raise argparse.ArgumentTypeError(
            f"peers are {', '.join(PEERS)} and must include eager, got '{text}'")
    return peers


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m fusec.bench.decoder_peers",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", choices=tuple(CONFIGS), required=True)
    parser.add_argument("--size", choices=("full", "tiny"), default="full")
    parser.add_argument("--batch", type=parse_batches, default=[1, 8])
    parser.add_argument("--dtype", choices=tuple(DTYPES), default="f16")
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--steps", type=int, default=512)
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--peers", type=parse_peers, default=list(PEERS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.prompt < 1 or args.steps < 1 or args.repeats < 1:
        parser.error("--prompt, --steps and --repeats must be at least 1")
    return args


def torch_setup(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """torch, the torch device and the torch dtype name; one line and exit 2 without them."""
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as error:
        sys.exit(f"decoder_peers: needs torch and transformers ({error}); pip install "
                 "'fusec[bench]'")
    device = "cuda" if args.device == "gpu" else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("decoder_peers: --device gpu needs a CUDA device for PyTorch; none is visible")
    return torch, torch.device(device), DTYPES[args.dtype]


def compiled_recipe(torch: Any, model: Any, on_cpu: bool) -> tuple[dict[str, Any], Any]:
    """The ``generate`` arguments of Hugging Face's compiled static-cache recipe for the
    installed transformers (see the module docstring), and the compiled forward to install on
    the model while it generates (None when ``generate`` compiles by itself)."""
    import transformers

    config_class = getattr(transformers, "CompileConfig", None)
    if config_class is None:  # transformers < 4.47: the forward compiled by hand
        forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
        return {"cache_implementation": "static"}, forward
    config = config_class(mode="reduce-overhead")
    if on_cpu:
        config._compile_all_devices = True  # generate compiles on CUDA alone unless told
    return {"cache_implementation": "static", "compile_config": config}, None


def first_difference(got: np.ndarray, expected: np.ndarray) -> str:
    """``equal`` or the first step where some sequence differs."""
    differs = np.nonzero((got != expected).any(axis=0))[0]
    return "equal" if differs.size == 0 else f"differ from step {int(differs[0])}"


def fusec_runner(model: Any, prompt: np.ndarray, args: argparse.Namespace,
                 eager_tokens: np.ndarray, eager_logits: np.ndarray) -> Runner:
    """fusec's runner, after its checks; see the module docstring."""
    import fusec
    from fusec.runtime.device import select_device
    from fusec.runtime.device_array import device_queue

    batch, length = prompt.shape
    sizes, weights = decoder_from_hf(model, batch, length, length + args.steps, args.dtype)
    device = select_device(args.device)
    pool = device_queue(device).pool
    gc.collect()
    pool.release_free()
    before = pool.allocated_bytes
    text = decoder_ir(sizes)
    prefill = fusec.compile(text, "prefill", device=args.device, params=weights)
    step = fusec.compile(text, "step", device=args.device, params=weights,
                         share_weights=prefill)

    def call() -> np.ndarray:
        return fusec.generate(prefill, step, prompt, args.steps)

    tokens = call()
    held = pool.allocated_bytes - before + prefill.held_bytes() + step.held_bytes()
    runner = Runner("fusec", f"fusec.generate on {step.device.description}, "
                    f"{len(step.plan.launches)} launches per step", call)
    runner.peak_bytes = held
    runner.memory = "device buffers held (pool + programs)"
    checked = min(CHECKED, args.steps)
    runner.tokens = first_difference(tokens[:, :checked], eager_tokens[:, :checked])
    runner.logit_difference, runner.largest_logit = logit_check(
        sizes, weights, prompt, eager_tokens[:, :checked], eager_logits[:, :checked],
        args.device)
    return runner


def logit_check(sizes: DecoderSizes, weights: dict[str, Any], prompt: np.ndarray,
                eager_tokens: np.ndarray, eager_logits: np.ndarray,
                device: str) -> tuple[float, float]:
    """The largest difference of fusec's logits for the prompt and eager's tokens from eager's
    logits, and the largest of eager's logits."""
    import fusec

    checked = eager_tokens.shape[1]
    sequence = np.concatenate([prompt, eager_tokens], axis=1).astype(np.int32)[:, :-1]
    seq = sequence.shape[1]
    scores = fusec.compile(function(sizes, "score", seq, scores=True), "score", device=device,
                           params=weights)
    caches = [np.zeros(scores.inputs[name].spec.shape, scores.inputs[name].spec.dtype)
              for name in scores.donated]
    logits = np.asarray(scores(sequence, np.array(0, np.int32), *caches)[-1])
    if sizes.dtype == "bf16":
        from fusec.dtypes import bf16_to_f32

        logits = bf16_to_f32(logits)
    got = logits.astype(np.float32)[:, seq - checked:]
    return float(np.abs(got - eager_logits).max()), float(np.abs(eager_logits).max())


def hf_runner(name: str, model: Any, prompt: Any, steps: int, torch: Any, warmups: int,
              extra: dict[str, Any] | None = None,
              forward: Any = None) -> tuple[Runner, np.ndarray]:
    """A Hugging Face runner after ``warmups`` calls, and its tokens; ``extra`` goes to
    ``generate``, ``forward`` replaces the model's during it."""

    def call() -> Any:
        if forward is not None:
            model.forward = forward
        try:
            with torch.no_grad():
                out = model.generate(prompt, attention_mask=torch.ones_like(prompt),
                                     max_new_tokens=steps, min_new_tokens=steps,
                                     do_sample=False, **(extra or {}))
        finally:
            if forward is not None:
                del model.forward  # the class's again
        return out[:, prompt.shape[1]:].cpu()

    tokens = None
    for _ in range(warmups):
        tokens = call()
    assert tokens is not None
    attention = getattr(model.config, "_attn_implementation", "?")
    what = {"eager": f"HF generate, eager PyTorch ({attention} attention)",
            "compiled": "HF generate, static cache, torch.compile(mode='reduce-overhead')"}[name]
    runner = Runner(name, what, call)
    return runner, tokens.numpy()


def measure(runners: list[Runner], args: argparse.Namespace, batch: int, torch: Any,
            on_cuda: bool) -> None:
    """Times the runners in turns and fills in their figures."""

    def timed(runner: Runner) -> Callable[[], float]:
        def once() -> float:
            import time

            start = time.perf_counter()
            runner.call()
            return (time.perf_counter() - start) * 1e3

        return once

    peaks: dict[str, int] = {}

    def tracked(runner: Runner) -> Callable[[], float]:
        once = timed(runner)
        if not on_cuda or runner.name == "fusec":
            return once

        def with_peak() -> float:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            ms = once()
            peaks[runner.name] = max(peaks.get(runner.name, 0), torch.cuda.max_memory_allocated())
            return ms

        return with_peak

    timings = interleaved([tracked(r) for r in runners], warmup=1, repeat=args.repeats,
                          min_time_s=0.0, balanced=True)
    for runner, timing in zip(runners, timings, strict=True):
        runner.ms = timing.median_ms
        runner.tokens_per_s = args.steps / (runner.ms / 1e3)
        runner.tokens_per_s_all = runner.tokens_per_s * batch
        if runner.name in peaks:
            runner.peak_bytes = peaks[runner.name]
            runner.memory = "torch.cuda.max_memory_allocated"
        elif runner.name != "fusec":
            runner.memory = "no device memory figure on a CPU"


def run_batch(args: argparse.Namespace, batch: int, torch: Any, device: Any,
              dtype: str) -> dict[str, Any]:
    model = build_model(args.model, args.size, seed=args.seed).to(device=device,
                                                                   dtype=getattr(torch, dtype))
    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(args.seed + batch)
    prompt = torch.randint(0, vocab, (batch, args.prompt), generator=generator).to(device)
    checked = min(CHECKED, args.steps)
    eager_tokens, eager_logits = greedy(model, prompt, checked)
    eager_tokens = eager_tokens.cpu().numpy()
    eager_logits = eager_logits.cpu().numpy()
    runners: list[Runner] = []
    if "fusec" in args.peers:
        runners.append(fusec_runner(model, prompt.cpu().numpy().astype(np.int32), args,
                                    eager_tokens, eager_logits))
    eager, _ = hf_runner("eager", model, prompt, args.steps, torch, warmups=1)
    eager.tokens = "reference"
    runners.append(eager)
    if "compiled" in args.peers:
        extra, forward = compiled_recipe(torch, model, on_cpu=device.type == "cpu")
        compiled, tokens = hf_runner("compiled", model, prompt, args.steps, torch, warmups=3,
                                     extra=extra, forward=forward)
        compiled.tokens = first_difference(tokens[:, :checked], eager_tokens)
        runners.append(compiled)
    measure(runners, args, batch, torch, device.type == "cuda")
    fusec = next((r for r in runners if r.name == "fusec"), None)
    return {
        "batch": batch,
        "runners": [{k: v for k, v in asdict(r).items() if k != "call"} for r in runners],
        "ratios": {r.name: fusec.tokens_per_s / r.tokens_per_s
                   for r in runners if fusec is not None and r is not fusec},
    }


def table(result: dict[str, Any]) -> str:
    """The results of one batch size as a text table."""
    lines = [f"batch {result['batch']}:",
             f"  {'runner':<9} {'ms/call':>10} {'tok/s/seq':>10} {'tok/s all':>10} "
             f"{'fusec/it':>8} {'peak MiB':>9}  tokens (first {CHECKED}) / logits vs eager"]
    for r in result["runners"]:
        ratio = result["ratios"].get(r["name"])
        peak = "-" if r["peak_bytes"] is None else f"{r['peak_bytes'] / 2**20:.1f}"
        check = r["tokens"]
        if r["logit_difference"] is not None:
            check += (f"; logits differ by {r['logit_difference']:.3g} at most (largest "
                      f"{r['largest_logit']:.3g})")
        lines.append(f"  {r['name']:<9} {r['ms']:>10.2f} {r['tokens_per_s']:>10.1f} "
                     f"{r['tokens_per_s_all']:>10.1f} "
                     f"{'-' if ratio is None else f'{ratio:.2f}':>8} {peak:>9}  {check}")
    lines += [f"  {r['name']}: {r['what']}; memory: {r['memory']}" for r in result["runners"]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(argv)
    torch, device, dtype = torch_setup(args)
    import transformers

    header = {
        "model": args.model, "size": args.size, "config": CONFIGS[args.model][args.size],
        "dtype": args.dtype, "prompt": args.prompt, "steps": args.steps,
        "device": args.device, "torch_device": str(device), "repeats": args.repeats,
        "weights": f"random (fusec.bench.hf_models.spread_weights, seed {args.seed})",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "timing": "median of the interleaved calls; each call generates `steps` tokens per "
                  "sequence, the prefill included",
    }
    print(f"{args.model} ({args.size}, random weights), {args.dtype}, prompt {args.prompt}, "
          f"{args.steps} new tokens; torch {torch.__version__} on {device}, transformers "
          f"{transformers.__version__}")
    results = []
    for batch in args.batch:
        try:
            result = run_batch(args, batch, torch, device, dtype)
        except UnsupportedModel as error:
            print(f"decoder_peers: {error}", file=sys.stderr)
            return 2
        print(table(result), flush=True)
        results.append(result)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({**header, "results": results}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
