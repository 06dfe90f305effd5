"""Where the host's time goes in back-to-back calls of a model compiled with the fusec backend
(its defaults: CUDA launches replayed from a CUDA graph), by Python's profiler: a probe for the
GPU machine.

    python -m fusec.bench.torch_host_profile [--model gpt2] [--batch 1] [--dtype f16] [--calls 50]
        [--lines 40] [--device cuda|cpu] [--layers N] [--seq S] [--steps]

Builds the model as `torch_models` does (Hugging Face, default attention, tensors on the
device), calls ``torch.compile(model, backend="fusec")`` and, on CUDA,
``torch.compile(model, mode="reduce-overhead")`` until warm, then profiles `--calls` calls of
each back to back (one synchronisation at the end) and prints each one's wall time a call and
fusec's `--lines` functions of most time, own and cumulative. Complements
`torch_call_timeline` (the OpenCL path's stamps).

`--steps`: instead of the profiler (whose own cost blurs calls this short), the host's time a
call in each of fusec's steps (`STEPS`: the partition's call, the bound weights' check, the
inputs' bounds read by PyTorch's ops and the wait for them, or the wait for the graph's own read
of them, the launches, the graph's replay, the outputs' views), each step's function wrapped in
a clock, and each runner's wall time a call with nothing wrapped.

On the H200 (2026-12-03, session 17, bench/results/h200-2026-12-03-s17-host-profile.log) it
found GPT-2 small's batch-1 call spending most of fusec's share in cutting the CUDA graph's
block of outputs into its 25 tensors (`cuda_launch.OutputArena.views`), since worked out once."""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

STEPS = (("fusec.compiler.torch_partition", "FusecPartition", "__call__", "partition"),
         ("fusec.compiler.torch_partition", "BoundTensors", "changed", "bound weights' check"),
         ("fusec.compiler.torch_partition", "TensorBridge", "cuda_bounds", "inputs' bounds"),
         ("fusec.compiler.torch_partition", "PendingBounds", "check", "bounds' wait"),
         ("fusec.runtime.cuda_launch", "CudaLaunches", "bounds", "graph's bounds' wait"),
         ("fusec.runtime.cuda_launch", "CudaLaunches", "__call__", "launches"),
         ("fusec.runtime.cuda_launch", "CudaLaunches", "replay", "replay"),
         ("fusec.runtime.cuda_launch", "OutputArena", "views", "outputs' views"))
"""Each step `--steps` times: module, class, method, and what it is called in the table."""


def clocked(totals: Counter[str], name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """`method`, adding the seconds each call of it takes to ``totals[name]``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            totals[name] += time.perf_counter() - start
    return wrapper


def time_steps(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> None:
    """Prints the host's time a call in each of `STEPS`, over `calls` calls of `fn`."""
    import importlib

    totals: Counter[str] = Counter()
    saved = []
    for module, cls, method, name in STEPS:
        owner = getattr(importlib.import_module(module), cls)
        saved.append((owner, method, getattr(owner, method)))
        setattr(owner, method, clocked(totals, name, getattr(owner, method)))
    try:
        fn()
        sync()
        totals.clear()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        wall = time.perf_counter() - start
    finally:
        for owner, method, original in saved:
            setattr(owner, method, original)
    print(f"  {'wall, steps clocked':24s} {wall / calls * 1e3:8.4f} ms a call")
    for *_, name in STEPS:
        print(f"  {name:24s} {totals[name] / calls * 1e3:8.4f} ms a call")
    print(f"  {'outside the partition':24s} "
          f"{(wall - totals['partition']) / calls * 1e3:8.4f} ms a call", flush=True)


def main(argv: list[str] | None = None) -> None:
    import torch

    from fusec.bench.torch_models import DTYPES, build

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2", choices=["bert", "gpt2", "llama"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--dtype", default="f16", choices=sorted(DTYPES))
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--lines", type=int, default=40, help="functions listed per order")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--layers", type=int, help="layers of the model (default: its own)")
    parser.add_argument("--seq", type=int, help="sequence length (default 128)")
    parser.add_argument("--steps", action="store_true",
                        help="clock fusec's steps (STEPS) instead of profiling")
    args = parser.parse_args(argv)
    cuda = args.device == "cuda"
    model, kwargs, text = build(args.model, args.layers, getattr(torch, DTYPES[args.dtype]),
                                args.device, args.batch, args.seq)
    print(f"== {text}, {args.dtype}", flush=True)
    runners = {"fusec": torch.compile(model, backend="fusec",
                                      options={"device": "gpu" if cuda else "cpu"})}
    if cuda:
        runners["reduce-overhead"] = torch.compile(model, mode="reduce-overhead")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    with torch.inference_mode():
        for name, fn in runners.items():
            for _ in range(5):
                fn(**kwargs)
            sync()
            if args.steps:
                start = time.perf_counter()
                for _ in range(args.calls):
                    fn(**kwargs)
                sync()
                wall = (time.perf_counter() - start) / args.calls * 1e3
                print(f"{name}: {wall:.4f} ms a call", flush=True)
                if name == "fusec":
                    time_steps(lambda: fn(**kwargs), args.calls, sync)
                continue
            profiler = cProfile.Profile()
            start = time.perf_counter()
            profiler.enable()
            for _ in range(args.calls):
                fn(**kwargs)
            sync()
            profiler.disable()
            wall = (time.perf_counter() - start) / args.calls * 1e3
            print(f"{name}: {wall:.3f} ms a call under the profiler", flush=True)
            if name != "fusec":
                continue
            for order in ("tottime", "cumulative"):
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(args.lines)
                print("\n".join(line for line in out.getvalue().splitlines()
                                if line.strip()), flush=True)


if __name__ == "__main__":
    main()
