"""Where the host's time goes in back-to-back calls of a model compiled with the fusec backend
(its defaults: CUDA launches replayed from a CUDA graph), by Python's profiler: a probe for the
GPU machine.

    python -m fusec.bench.torch_host_profile [--model gpt2] [--batch 1] [--dtype f16] [--calls 50]

Builds the model as `torch_models` does (Hugging Face, default attention, CUDA tensors), calls
``torch.compile(model, backend="fusec")`` and ``torch.compile(model, mode="reduce-overhead")``
until warm, then profiles `--calls` calls of each back to back (one synchronisation at the end)
and prints each one's wall time a call and fusec's 25 functions of most time, own and
cumulative. Complements `torch_call_timeline` (the OpenCL path's stamps)."""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time


def main() -> None:
    import torch

    from fusec.bench.torch_models import DTYPES, build

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt2", choices=["bert", "gpt2", "llama"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--dtype", default="f16", choices=sorted(DTYPES))
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    model, kwargs, text = build(args.model, None, getattr(torch, DTYPES[args.dtype]), "cuda",
                                args.batch)
    print(f"== {text}, {args.dtype}", flush=True)
    runners = {"fusec": torch.compile(model, backend="fusec", options={"device": "gpu"}),
               "reduce-overhead": torch.compile(model, mode="reduce-overhead")}
    with torch.inference_mode():
        for name, fn in runners.items():
            for _ in range(5):
                fn(**kwargs)
            torch.cuda.synchronize()
            profiler = cProfile.Profile()
            start = time.perf_counter()
            profiler.enable()
            for _ in range(args.calls):
                fn(**kwargs)
            torch.cuda.synchronize()
            profiler.disable()
            wall = (time.perf_counter() - start) / args.calls * 1e3
            print(f"{name}: {wall:.3f} ms a call under the profiler", flush=True)
            if name != "fusec":
                continue
            for order in ("tottime", "cumulative"):
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(25)
                print("\n".join(line for line in out.getvalue().splitlines()
                                if line.strip())[:6000], flush=True)


if __name__ == "__main__":
    main()
