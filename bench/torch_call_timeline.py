"""Where the host's time goes in back-to-back calls of a model compiled with the fusec backend,
and how long the GPU takes to order PyTorch's stream after fusec's OpenCL queue.

    python -m fusec.bench.torch_call_timeline [--models bert,gpt2] [--dtype f16] [--batch N]
        [--calls 20] [--options JSON] [--probe]

Unlike `torch_partition_profile` (each step synchronised on its own), the calls here run as a
user runs them, one after another with no synchronisation between them; each step of each
partition call is stamped on the host (``time.perf_counter``): the tensors into fusec
(`TensorBridge.to_fusec`, which holds the call's one host wait), the executable's enqueueing,
the outputs back (`TensorBridge.to_torch_all`), and the time outside partitions (PyTorch's
guards and ops). The medians over the later calls are printed, in ms. These are the steps of
the OpenCL path, so the backend runs with ``cuda_launch`` off unless ``--options`` turns it
on (then only ``call`` and ``outside`` are stamped: the launches through CUDA,
`fusec.runtime.cuda_launch`, have no steps of their own here).

``--probe`` also times the hand-over alone (`StreamOrder`): one small kernel on the OpenCL
queue, PyTorch's stream ordered after it (``cuStreamWaitValue64``), the host waiting for the
stream; against the same kernel waited for with ``clFinish``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def stamped(stamps: list[tuple[str, float, float]]) -> Iterator[None]:
    """Within the block, each call of the stamped steps appends (step, start, end)."""
    from fusec.compiler import torch_partition
    from fusec.runtime.executable import Executable

    import torch

    targets = [(torch_partition.FusecPartition, "__call__", "partition"),
               (torch_partition.TensorBridge, "to_fusec", "to_fusec"),
               (Executable, "run_device", "enqueue"),
               (torch_partition.TensorBridge, "to_torch_all", "to_torch"),
               (torch.Tensor, "tolist", "host_wait")]
    saved = [(cls, attr, getattr(cls, attr)) for cls, attr, _ in targets]

    def wrap(original: Callable[..., Any], step: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                result = original(*args, **kwargs)
            finally:
                stamps.append((step, start, time.perf_counter()))
            if step == "enqueue" and result[0] and result[0][0].event is not None:
                watch(result[0][0].event)
            return result
        return timed

    def watch(event: Any) -> None:
        """Stamps, from a thread of its own, when the call's last command has finished."""
        def wait() -> None:
            event.wait()
            now = time.perf_counter()
            stamps.append(("kernels_done", now, now))
        threading.Thread(target=wait, daemon=True).start()

    for (cls, attr, step), (_, _, original) in zip(targets, saved, strict=True):
        setattr(cls, attr, wrap(original, step))
    try:
        yield
    finally:
        for cls, attr, original in saved:
            setattr(cls, attr, original)


def timeline(call: Callable[[], Any], sync: Callable[[], None], calls: int) -> dict[str, float]:
    """Medians (ms) over the second half of `calls` back-to-back calls of each step, of the
    whole call and of the time outside partitions."""
    stamps: list[tuple[str, float, float]] = []
    ends: list[float] = []
    sync()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the watching threads stamp soon after their wait ends
    start = time.perf_counter()
    with stamped(stamps):
        for _ in range(calls):
            call()
            ends.append(time.perf_counter())
    sync()
    total = time.perf_counter() - start
    sys.setswitchinterval(interval)
    time.sleep(0.05)
    by_call: list[dict[str, float]] = [defaultdict(float) for _ in range(calls)]
    begins = [start, *ends[:-1]]
    waits_end = sorted(b for step, _, b in stamps if step == "host_wait")
    done = sorted(a for step, a, _ in stamps if step == "kernels_done")
    for step, a, b in stamps:
        if step == "kernels_done":
            continue
        index = next((i for i, end in enumerate(ends) if b <= end), calls - 1)
        by_call[index][step] += (b - a) * 1e3
    for i in range(calls):
        by_call[i]["call"] = (ends[i] - begins[i]) * 1e3
        by_call[i]["outside"] = by_call[i]["call"] - by_call[i]["partition"]
    # From the end of a call's host wait to its kernels' end (stamped by a thread), and from
    # there to the next call's host wait's end: where the GPU's time goes.
    if len(waits_end) == calls and len(done) == calls:
        for i in range(calls - 1):
            by_call[i]["wait_end_to_kernels_done"] = (done[i] - waits_end[i]) * 1e3
            by_call[i]["kernels_done_to_next_wait_end"] = (waits_end[i + 1] - done[i]) * 1e3
    later = by_call[calls // 2:-1]
    result = {step: round(statistics.median(c[step] for c in later), 4)
              for step in ("call", "outside", "partition", "to_fusec", "host_wait", "enqueue",
                           "to_torch", "wait_end_to_kernels_done",
                           "kernels_done_to_next_wait_end")}
    result["wall_per_call"] = round(total / calls * 1e3, 4)
    return result


def probe(repeat: int = 200) -> dict[str, float]:
    """The hand-over's latency (see the module docstring), medians in us."""
    import numpy as np
    import pyopencl as cl
    import torch

    from fusec.runtime.cuda_interop import enable_cuda_sharing, stream_order
    from fusec.runtime.device import select_device
    from fusec.runtime.device_array import device_queue, empty

    device = select_device("gpu")
    enable_cuda_sharing(device)
    order = stream_order(device)
    queue = device_queue(device).queue
    program = cl.Program(device.context, """
        __kernel void k(__global float* a, int n) {
          float x = a[get_global_id(0)];
          for (int i = 0; i < n; ++i) x = x * 0.999f + 1.0f;
          a[get_global_id(0)] = x;
        }""").build()
    array = empty(device, (132 * 128,), np.float32)
    kernel = program.k
    kernel.set_arg(0, array.buffer)
    stream = torch.cuda.current_stream()
    times: dict[str, list[float]] = defaultdict(list)
    for n in (0, 200000):  # the kernel's loop: a few us, then about 0.5 ms
        kernel.set_arg(1, np.int32(n))
        for _ in range(repeat if n == 0 else repeat // 10):
            queue.finish()
            stream.synchronize()
            t0 = time.perf_counter()
            cl.enqueue_nd_range_kernel(queue, kernel, (132 * 128,), (128,))
            queue.finish()
            t1 = time.perf_counter()
            cl.enqueue_nd_range_kernel(queue, kernel, (132 * 128,), (128,))
            if order is not None:
                order.after_queue(stream)
            t2 = time.perf_counter()
            stream.synchronize()
            t3 = time.perf_counter()
            times[f"loop{n}_clFinish"].append((t1 - t0) * 1e6)
            times[f"loop{n}_after_queue_enqueue"].append((t2 - t1) * 1e6)
            times[f"loop{n}_stream_wait"].append((t3 - t1) * 1e6)
    # A call's worth of launches (90 of about 50 us), PyTorch's stream waiting on the GPU
    # for them from the end of their enqueueing on (as a call's hand-over has it), against
    # the same launches waited for by the host: does the wait slow the kernels?
    kernel.set_arg(1, np.int32(20000))
    for _ in range(10):
        for how in ("many_clFinish", "many_stream_wait"):
            queue.finish()
            stream.synchronize()
            t0 = time.perf_counter()
            for _ in range(90):
                cl.enqueue_nd_range_kernel(queue, kernel, (132 * 128,), (128,))
            if how == "many_clFinish" or order is None:
                queue.finish()
            else:
                order.after_queue(stream)
                stream.synchronize()
            times[how].append((time.perf_counter() - t0) * 1e6)
    return {name: round(statistics.median(v), 1) for name, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    import torch

    from fusec.bench.torch_models import DTYPES, build

    parser = argparse.ArgumentParser(prog="python -m fusec.bench.torch_call_timeline",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="bert,gpt2")
    parser.add_argument("--dtype", default="f16", choices=sorted(DTYPES))
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--options", default="{}",
                        help="more backend options, as JSON (e.g. '{\"overlap\": false}')")
    args = parser.parse_args(argv)
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        parser.error("PyTorch has no CUDA device here (--device cpu, or the GPU machine: "
                     "sh bench/gpu.sh timeline)")
    try:
        options = json.loads(args.options)
    except ValueError as e:
        parser.error(f"--options is not JSON: {e}")
    if not isinstance(options, dict):
        parser.error("--options takes a JSON object of backend options")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    rows = []
    for name in args.models.split(","):
        model, kwargs, text = build(name, None, getattr(torch, DTYPES[args.dtype]), args.device,
                                    args.batch, None)
        fn = torch.compile(model, backend="fusec", options={
            "device": "gpu" if cuda else "cpu", "cuda_launch": False, **options})
        with torch.inference_mode():
            for _ in range(3):
                fn(**kwargs)
            row = {"model": text, "options": args.options, **timeline(lambda: fn(**kwargs), sync, args.calls)}
        print(json.dumps(row), flush=True)
        rows.append(row)
        torch._dynamo.reset()
    if args.probe and cuda:
        print(json.dumps({"probe_us": probe()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
