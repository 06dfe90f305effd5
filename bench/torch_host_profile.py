"""Where the host's time goes in back-to-back calls of a model compiled with the fusec backend
(its defaults: CUDA launches replayed from a CUDA graph), by Python's profiler: a probe for the
GPU machine.

    python -m fusec.bench.torch_host_profile [--model gpt2] [--batch 1] [--dtype f16] [--calls 50]
        [--lines 40] [--device cuda|cpu] [--layers N] [--seq S]

Builds the model as `torch_models` does (Hugging Face, default attention, tensors on the
device), calls ``torch.compile(model, backend="fusec")`` and, on CUDA,
``torch.compile(model, mode="reduce-overhead")`` until warm, then profiles `--calls` calls of
each back to back (one synchronisation at the end) and prints each one's wall time a call and
fusec's `--lines` functions of most time, own and cumulative. Complements
`torch_call_timeline` (the OpenCL path's stamps).

On the H200 (2026-12-03, session 17, bench/results/h200-2026-12-03-s17-host-profile.log) it
found GPT-2 small's batch-1 call spending most of fusec's share in cutting the CUDA graph's
block of outputs into its 25 tensors (`cuda_launch.OutputArena.views`), since worked out once."""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time


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
