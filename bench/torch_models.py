"""Whole Hugging Face models through ``torch.compile(backend="fusec")`` against PyTorch eager and
``torch.compile`` (Inductor), in one process, with tensors on the device.

    python -m fusec.bench.torch_models [--device cuda|cpu] [--models bert,gpt2,llama]
        [--dtypes f32,f16,bf16] [--layers N] [--batch N] [--seq N] [--repeat N] [--profile]
        [--reduce-overhead] [--autotune] [--kernel-time] [--kernel-table N] [--flip-knob KNOB]
        [--flip-option OPTION] [--json-out PATH]

The models are built from their configurations with random weights (no download): BERT-base (12
layers, B=32, S=128), GPT-2 small (12 layers, B=16, S=128) and a Llama-style model (width 2048,
GQA 32/4, intermediate 5632, 4 layers (issue 29) unless ``--layers``, B=32, S=128), each at its
library-default attention (``sdpa``). Every runner is checked against eager first (f32: atol
1e-4 scaled by the output's largest magnitude; f16: 2e-2; bf16, whose rounding step is 8 times
f16's: 5e-2), then the runners are timed in turns: each turn is ``repeat`` back-to-back calls
followed by one device synchronisation, and a runner's figure is the median over turns of the
wall time per call. Peak device memory is the largest ``torch.cuda.max_memory_allocated`` seen
over a runner's calls (``*_torch_peak_mib``); fusec's OpenCL buffers are not PyTorch's and are
not in that figure, so the fusec runner also has ``fusec_device_mib``: its torch peak (the
model's parameters that PyTorch still holds, and what PyTorch allocates between partitions) plus
what fusec holds on the device after its calls (`fusec_held_bytes`: the pool of device arrays
and each partition's own buffers, bound weights among them). A weight fusec stores as it is was
moved into that pool, PyTorch's copy freed (`fusec.compiler.torch_weights`), so it is counted
once; ``fusec_weights_shared_mib`` and ``fusec_weights_copied_mib`` (from the report) say how
many of the bound weights' bytes are held once and how many fusec holds a copy of;
``fusec_launch_decisions`` what each partition's CUDA graph decided at its first call with the
knob `cuda_dependent_launch` on (its replays timed with dependent launches and without), and
``fusec_graph_ms`` the device time a call of the graphs as kept (`graph_ms`): with dependent
launches each kernel starts before the one before it ends and waits for it, so the profiler's
sum of their times (``fusec_kernel_ms``) counts the overlaps twice and exceeds the wall time;
the graphs' replay time is the kernel time a call that the wall time is compared with
(``fusec_wall_per_graph``; issue 29 asks at most 1.1 at batch 1).

The torch peaks include what the other runners keep alive (Inductor's and the CUDA graphs'
memory pools), so the model's own figures leave it out: ``fusec_model_device_mib`` is what
PyTorch holds of the model's parameters and buffers (those fusec did not move), what fusec
holds, what its CUDA launches keep in PyTorch's memory (constants, the CUDA graphs' input
and output tensors: `launch_bytes`), and the most fusec's calls allocated in PyTorch beyond
what was live before them; ``eager_model_device_mib`` is the model's parameters and buffers,
wherever they lie, and the most eager's calls allocated beyond what was live.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from fusec import knobs
from fusec.compiler.torch_partition import Options

FLIPPABLE = ("cuda_launch", "cuda_graphs", "overlap", "hold_weights_once")
"""The backend's True/False options that ``--flip-option`` takes."""

DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def build(name: str, layers: int | None, dtype: Any, device: str, batch: int | None = None,
          seq: int | None = None) -> tuple[Any, dict, str]:
    """(model, call kwargs, description) for one architecture at its default attention;
    `batch` and `seq` replace the model's default shape (B=32 or 16, S=128)."""
    import torch
    from transformers import (BertConfig, BertModel, GPT2Config, GPT2Model, LlamaConfig,
                              LlamaModel)

    torch.manual_seed(0)
    if name == "bert":
        n = layers or 12
        cfg = BertConfig(num_hidden_layers=n)
        model, batch, seq, vocab = BertModel(cfg), batch or 32, seq or 128, cfg.vocab_size
        text = f"BERT-base, {n} layers, B={batch} S={seq}"
    elif name == "gpt2":
        n = layers or 12
        cfg = GPT2Config(n_layer=n)
        model, batch, seq, vocab = GPT2Model(cfg), batch or 16, seq or 128, cfg.vocab_size
        text = f"GPT-2 small, {n} layers, B={batch} S={seq}"
    elif name == "llama":
        n = layers or 4
        cfg = LlamaConfig(hidden_size=2048, num_attention_heads=32, num_key_value_heads=4,
                          intermediate_size=5632, num_hidden_layers=n, vocab_size=32000)
        model, batch, seq, vocab = LlamaModel(cfg), batch or 32, seq or 128, cfg.vocab_size
        text = f"Llama-style (2048, GQA 32/4, 5632), {n} layers, B={batch} S={seq}"
    else:
        raise SystemExit(f"torch_models: unknown model '{name}' (known: bert, gpt2, llama)")
    model = model.to(device=device, dtype=dtype).eval()
    ids = torch.randint(0, vocab, (batch, seq), device=device)
    mask = torch.ones(batch, seq, dtype=torch.int64, device=device)
    mask[1::2, seq - seq // 8:] = 0  # every other sequence padded by an eighth
    kwargs = {"input_ids": ids, "attention_mask": mask}
    if name != "bert":
        kwargs = {"input_ids": ids}  # decoders: causal, no padding
    return model, kwargs, text + f", {model.config._attn_implementation} attention"


def torch_kernel_ms(call: Callable[[], Any], sync: Callable[[], None], repeat: int,
                    top: int = 0) -> tuple[float | str, list[list]]:
    """The device time per call of PyTorch's work in `call` (``torch.profiler``, CUDA activity:
    kernels, copies and fills), over `repeat` calls, and the `top` kernels by device time
    (``[name, ms a call, launches a call]``, names with their digits as ``#`` so one kernel
    of every layer counts once); the profiler's error as text where it fails (the row keeps
    its other figures). fusec's kernels count where they launch through CUDA
    (`fusec.runtime.cuda_launch`, the backend's default on NVIDIA's OpenCL): they run in
    PyTorch's context; through OpenCL (``cuda_launch=False``) the profiler does not see them,
    and ``--profile`` times them instead."""
    try:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        sync()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(repeat):
                call()
            sync()
        total_us = 0.0
        by_kernel: dict[str, list[float]] = {}
        for event in prof.events():
            if event.device_type == DeviceType.CUDA:
                us = getattr(event, "device_time", None) or getattr(event, "cuda_time", 0)
                total_us += us
                entry = by_kernel.setdefault(re.sub(r"\d+", "#", event.name)[:90], [0.0, 0])
                entry[0] += us
                entry[1] += 1
        table = sorted(([name, round(us / repeat / 1e3, 4), round(n / repeat, 1)]
                        for name, (us, n) in by_kernel.items()), key=lambda r: -r[1])
        return round(total_us / repeat / 1e3, 4), table[:top]
    except Exception as exc:  # noqa: BLE001 - a figure that cannot be taken is reported
        return f"error: {type(exc).__name__}: {str(exc)[:200]}", []


def graph_ms(launches: Sequence[Any]) -> float | None:
    """The device ms a call of the partitions' CUDA graphs (`cuda_launch.CudaLaunches`) as
    their first calls timed them, with the launches they kept (dependent or plain); None where
    one was not timed (no graphs, or the knob `cuda_dependent_launch` off)."""
    kept = [launch.timings.get(launch.dependent) for launch in launches]
    if not kept or any(ms is None for ms in kept):
        return None
    return sum(kept)


def fusec_held_bytes(call: Callable[[], Any]) -> int:
    """The device bytes fusec holds for a model compiled with its backend, after one `call`
    (`held_bytes`)."""
    executables, pools, _ = fusec_memory(call)
    return held_bytes(executables, pools)


def held_bytes(executables: Sequence[Any], pools: Sequence[Any]) -> int:
    """What fusec holds on the device for the partitions' `executables`: their own buffers
    (`Executable.held_bytes`: intermediates, copies of bound weights) and their contexts'
    `pools` of device arrays (`BufferPool.allocated_bytes`: inputs, outputs, CUDA weights moved
    there, the intermediates of CUDA-launched partitions). Weights bound over a CPU tensor's
    own memory are PyTorch's, not counted; so is what CUDA launches hold in PyTorch's memory
    (`launch_bytes`), which PyTorch's figures have."""
    return sum(e.held_bytes() for e in executables) + sum(p.allocated_bytes for p in pools)


def live_pool_bytes() -> int:
    """What the buffers in use of the pools of device arrays that fusec has opened in this
    process hold now (`BufferPool.allocated_bytes` less its free buffers): a row's figures
    leave out what rows before it still use (weights moved into the CUDA-shared pool by a
    model that is still alive). The free buffers they left count against the row: the row
    may take them again, and fusec keeps them on the device either way."""
    from fusec.runtime.device_array import opened_pools

    return sum(pool.allocated_bytes - pool.free_bytes for pool in opened_pools())


def launch_bytes(call: Callable[[], Any]) -> int:
    """The bytes the CUDA launches of the partitions one `call` runs hold in PyTorch's memory
    (`CudaLaunches.torch_bytes`)."""
    return sum(launches.torch_bytes() for launches in fusec_memory(call)[2])


def fusec_memory(call: Callable[[], Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """The executables of the fusec partitions one `call` runs, their contexts' pools, and
    their CUDA launches (`fusec.runtime.cuda_launch`) where they have them."""
    from fusec.bench.torch_partition_profile import recorded_partitions
    from fusec.runtime.device_array import device_queue

    with recorded_partitions() as calls:
        call()
    executables = {id(part.exe): part.exe for part, _ in calls}
    launches = {id(part.launches): part.launches for part, _ in calls
                if part.launches is not None}
    pools = {id(device_queue(e.device).pool): device_queue(e.device).pool
             for e in executables.values()}
    return list(executables.values()), list(pools.values()), list(launches.values())


def model_torch_bytes(model: Any, pools: Sequence[Any] = ()) -> int:
    """The bytes of CUDA memory that `model`'s parameters and buffers hold now, each storage
    once, none that lies in one of fusec's CUDA-shared `pools` (a weight fusec moved there
    is fusec's, counted by `fusec_held_bytes`)."""
    spans = [(a.pointer.value, a.pointer.value + a.size) for pool in pools
             for a in getattr(pool, "allocations_by_pointer", {}).values()]
    storages: dict[int, int] = {}
    for tensor in [*model.parameters(), *model.buffers()]:
        if not tensor.is_cuda:
            continue
        storage = tensor.untyped_storage()
        pointer = storage.data_ptr()
        if not any(low <= pointer < high for low, high in spans):
            storages[pointer] = storage.nbytes()
    return sum(storages.values())


def wall_per_call(fn: Callable[[], Any], sync: Callable[[], None], repeat: int) -> float:
    sync()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    sync()
    return (time.perf_counter() - start) / repeat * 1e3


def run(args: argparse.Namespace) -> list[dict]:
    import torch

    cuda = args.device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    fusec_device = "gpu" if cuda else "cpu"
    rows = []
    for name in args.models.split(","):
        for dt in args.dtypes.split(","):
            dtype = getattr(torch, DTYPES[dt])
            row: dict[str, Any] = {"model": name, "dtype": dt}
            try:
                model, kwargs, text = build(name, args.layers, dtype, args.device, args.batch,
                                            args.seq)
            except Exception as exc:  # noqa: BLE001 - a row that cannot be built is reported
                row["error"] = f"build: {exc}"
                rows.append(row)
                continue
            row["summary"] = text
            print(f"== {name} {dt}: {text}", flush=True)
            report = f"/tmp/fusec_report_{name}_{dt}.json"
            if os.path.exists(report):  # the report appends: a run before this one's graphs
                os.remove(report)
            baseline = live_pool_bytes()  # what the rows before this one still use
            backend = {"device": fusec_device, "hold_weights_once": not args.copy_cuda_weights}
            runners = {
                "eager": model,
                "inductor": torch.compile(model),
                "fusec": torch.compile(model, backend="fusec",
                                       options={**backend, "report": report}),
            }
            flips = [(name, {"knobs": {name: not knobs.value(name)}}, not knobs.value(name))
                     for name in args.flip_knob]  # the same backend, one knob or option flipped
            flips += [(name, {name: not getattr(Options(), name)}, not getattr(Options(), name))
                      for name in args.flip_option]
            for name_flipped, changed, value in flips:
                runners[f"fusec[{name_flipped}={int(value)}]"] = torch.compile(
                    model, backend="fusec", options={**backend, **changed})
            if args.reduce_overhead and cuda:
                runners["inductor-ro"] = torch.compile(model, mode="reduce-overhead")
            if args.autotune:
                runners["inductor-at"] = torch.compile(model, mode="max-autotune-no-cudagraphs")
            with torch.inference_mode():
                ref = model(**kwargs).last_hidden_state.float()
                scale = ref.abs().max().item()
                tol = {"f32": 1e-4, "f16": 2e-2, "bf16": 5e-2}[dt] * max(scale, 1.0)
                live = {}
                for rname, fn in runners.items():
                    try:
                        if cuda:
                            torch.cuda.reset_peak_memory_stats()
                        t0 = time.perf_counter()
                        out = fn(**kwargs).last_hidden_state.float()
                        sync()
                        row[f"{rname}_first_call_s"] = round(time.perf_counter() - t0, 2)
                        if cuda:  # eager's, before fusec's first call may move the weights
                            row[f"{rname}_first_call_peak_mib"] = round(
                                torch.cuda.max_memory_allocated() / 2**20, 1)
                        diff = (out - ref).abs().max().item()
                        row[f"{rname}_maxdiff"] = diff
                        if not diff <= tol:
                            row[f"{rname}_error"] = f"differs from eager by {diff:.3g} (tol {tol:.3g})"
                            continue
                        live[rname] = fn
                    except Exception as exc:  # noqa: BLE001
                        row[f"{rname}_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                for fn in live.values():  # warm-up
                    for _ in range(3):
                        fn(**kwargs)
                sync()
                samples: dict[str, list[float]] = {r: [] for r in live}
                peaks: dict[str, int] = {}
                call_peaks: dict[str, int] = {}  # what a runner's calls allocate beyond
                for _ in range(args.turns):      # what is live before them
                    for rname, fn in live.items():
                        if cuda:
                            torch.cuda.reset_peak_memory_stats()
                            before = torch.cuda.memory_allocated()
                        samples[rname].append(
                            wall_per_call(lambda fn=fn: fn(**kwargs), sync, args.repeat))
                        if cuda:
                            peak = torch.cuda.max_memory_allocated()
                            peaks[rname] = max(peaks.get(rname, 0), peak)
                            call_peaks[rname] = max(call_peaks.get(rname, 0), peak - before)
                for rname, s in samples.items():
                    row[f"{rname}_ms"] = round(statistics.median(s), 4)
                    if rname in peaks:
                        row[f"{rname}_torch_peak_mib"] = round(peaks[rname] / 2**20, 1)
                if cuda and args.kernel_time:
                    for rname, fn in live.items():  # fusec's through OpenCL: not CUDA's
                        if rname != "fusec[cuda_launch=0]":
                            row[f"{rname}_kernel_ms"], table = torch_kernel_ms(
                                lambda fn=fn: fn(**kwargs), sync, args.repeat,
                                args.kernel_table)
                            if table:
                                row[f"{rname}_kernels"] = table
                                print(f"-- {rname}: {row[f'{rname}_kernel_ms']} ms of kernels "
                                      "a call; the largest (ms a call, launches a call):")
                                for kname, ms, count in table:
                                    print(f"   {ms:8.4f} {count:6} {kname}")
                if cuda and "fusec" in live and "fusec" in peaks:
                    compiled = live["fusec"]
                    executables, pools, launches = fusec_memory(lambda: compiled(**kwargs))
                    held = held_bytes(executables, pools) - baseline
                    row["fusec_held_mib"] = round(held / 2**20, 1)
                    row["fusec_device_mib"] = round((peaks["fusec"] + held) / 2**20, 1)
                    # The model's own (the other runners' memory left out): what PyTorch holds
                    # of the model, what fusec holds, what a call allocates beyond both.
                    launched = sum(launch.torch_bytes() for launch in launches)
                    # What each partition's graph decided at its first call (the knob
                    # cuda_dependent_launch): its replays' ms with dependent launches and without.
                    row["fusec_launch_decisions"] = [
                        {"dependent": launch.dependent,
                         "replay_ms": {("dependent" if k else "plain"): round(v, 4)
                                       for k, v in launch.timings.items()}}
                        for launch in launches]
                    graphs = graph_ms(launches)
                    if graphs is not None and "fusec_ms" in row:
                        row["fusec_graph_ms"] = round(graphs, 4)
                        row["fusec_wall_per_graph"] = round(row["fusec_ms"] / graphs, 3)
                    row["fusec_model_device_mib"] = round(
                        (model_torch_bytes(model, pools) + held + launched
                         + call_peaks["fusec"]) / 2**20, 1)
                    if "eager" in call_peaks:
                        row["eager_model_device_mib"] = round(
                            (model_torch_bytes(model) + call_peaks["eager"]) / 2**20, 1)
                if args.profile and "fusec" in live:
                    from fusec.bench.torch_partition_profile import print_profile, profile_call

                    fn = live["fusec"]
                    row["fusec_profile"] = profile_call(lambda: fn(**kwargs), sync)
                    print_profile(f"{name} {dt}", row["fusec_profile"])
            try:
                with open(report) as f:
                    graphs = json.load(f).get("graphs", [])
                row["fusec_report"] = [{k: g.get(k) for k in ("kernel_launches", "fused_ops",
                                        "fallback_ops", "fallback_reasons", "compile_seconds",
                                        "device", "weights_shared_bytes",
                                        "weights_copied_bytes")} for g in graphs]
                row["fusec_weights_shared_mib"] = round(
                    sum(g.get("weights_shared_bytes", 0) for g in graphs) / 2**20, 1)
                row["fusec_weights_copied_mib"] = round(
                    sum(g.get("weights_copied_bytes", 0) for g in graphs) / 2**20, 1)
            except (OSError, ValueError):
                pass
            for peer in ("inductor", "eager", "inductor-ro", "inductor-at",
                         *(r for r in runners if r.startswith("fusec["))):
                if "fusec_ms" in row and f"{peer}_ms" in row:
                    row[f"fusec/{peer}"] = round(row["fusec_ms"] / row[f"{peer}_ms"], 3)
            print(json.dumps(row), flush=True)
            rows.append(row)
            del runners, live
            torch._dynamo.reset()
            if cuda:
                torch.cuda.empty_cache()
    return rows


def parser_of() -> argparse.ArgumentParser:
    """The command line's parser (its defaults are `arguments`' too)."""
    parser = argparse.ArgumentParser(prog="python -m fusec.bench.torch_models",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--models", default="bert,gpt2,llama")
    parser.add_argument("--dtypes", default="f32,f16")
    parser.add_argument("--layers", type=int, default=None, help="layers of every model")
    parser.add_argument("--batch", type=int, default=None,
                        help="batch of every model (default: BERT 32, GPT-2 16, Llama 32)")
    parser.add_argument("--seq", type=int, default=None, help="sequence length (default 128)")
    parser.add_argument("--autotune", action="store_true",
                        help="also torch.compile(mode='max-autotune-no-cudagraphs') (long "
                             "compiles)")
    parser.add_argument("--kernel-time", action="store_true",
                        help="also each runner's device time per call (torch.profiler; CUDA; "
                             "fusec's where its kernels launch through CUDA; with dependent "
                             "launches, the knob cuda_dependent_launch, a kernel counts from "
                             "its early start, its wait for the kernel before included)")
    parser.add_argument("--kernel-table", type=int, default=0, metavar="N",
                        help="with --kernel-time, also print each runner's N largest kernels "
                             "by device time a call (and keep them in the JSON)")
    parser.add_argument("--repeat", type=int, default=10, help="back-to-back calls per turn")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--reduce-overhead", action="store_true",
                        help="also torch.compile(mode='reduce-overhead') (CUDA graphs)")
    parser.add_argument("--profile", action="store_true",
                        help="also break the fusec runner's call down by partition and kernel "
                             "(bench/torch_partition_profile.py)")
    parser.add_argument("--copy-cuda-weights", action="store_true",
                        help="the fusec backend's option hold_weights_once off (CUDA tensors: "
                             "fusec holds copies of the parameters; on, the default, they are "
                             "moved into fusec's memory and held once: then compare "
                             "fusec_device_mib with eager_first_call_peak_mib, since the "
                             "weights no longer count in PyTorch's peaks after the move)")
    parser.add_argument("--flip-knob", action="append", default=[], metavar="KNOB",
                        help="also the fusec backend with this code-generation knob flipped "
                             "(fusec.knobs; runner 'fusec[KNOB=0|1]', timed in the same turns; "
                             "repeatable)")
    parser.add_argument("--flip-option", action="append", default=[], metavar="OPTION",
                        help="also the fusec backend with this True/False option flipped "
                             f"({', '.join(FLIPPABLE)}; runner 'fusec[OPTION=0|1]', timed in "
                             "the same turns; repeatable)")
    parser.add_argument("--json-out", default=None)
    return parser


def arguments(**values: Any) -> argparse.Namespace:
    """The command line's defaults with `values` instead (``models="bert"``, ``dtypes="f16"``):
    what `run` takes when another tool runs it (``fusec-bench -w torch_bert``)."""
    args = parser_of().parse_args([])
    for name, value in values.items():
        if not hasattr(args, name):
            raise ValueError(f"torch_models has no option '{name}'")
        setattr(args, name, value)
    return args


def table_lines(rows: Sequence[dict]) -> list[str]:
    """The rows as the command prints them: a line a model and type."""
    lines = ["model  dtype  eager_ms  inductor_ms  fusec_ms  fusec/inductor  fusec/eager  errors"]
    for r in rows:
        errs = "; ".join(f"{k}: {v}" for k, v in r.items() if k.endswith("error"))
        lines.append(f"{r['model']:6} {r['dtype']:5} {r.get('eager_ms', '-')!s:9} "
                     f"{r.get('inductor_ms', '-')!s:12} {r.get('fusec_ms', '-')!s:9} "
                     f"{r.get('fusec/inductor', '-')!s:15} {r.get('fusec/eager', '-')!s:12} "
                     f"{errs}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = parser_of()
    args = parser.parse_args(argv)
    for name in args.flip_option:
        if name not in FLIPPABLE:
            parser.error(f"option '{name}' cannot be flipped (these can: "
                         f"{', '.join(FLIPPABLE)})")
    for name in args.flip_knob:
        if name not in knobs.KNOBS:
            parser.error(f"unknown knob '{name}' (known: {', '.join(sorted(knobs.KNOBS))})")
    rows = run(args)
    print("\n" + "\n".join(table_lines(rows)))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
