"""Where the time of a ``torch.compile(backend="fusec")`` call goes: for each fusec partition of
the compiled graphs, the device time of its kernels (OpenCL profiling events), the wall time of
its executable alone, and the wall time of the partition as the graph calls it (tensor bridge
in and out included); the rest of a call's wall time is PyTorch's ops between the partitions
and the waits at their borders. Used by ``python -m fusec.bench.torch_models --profile``.

Every figure is of one call at a time, each followed by a synchronisation of both PyTorch's
and fusec's queues, so the parts add up to more than a pipelined call's wall time; they say
where the time is, not what a call costs.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def recorded_partitions() -> Iterator[list[tuple[Any, tuple[Any, ...]]]]:
    """Within the block, every call of a fusec partition is recorded as (partition, args)."""
    from fusec.compiler.torch_partition import FusecPartition

    calls: list[tuple[Any, tuple[Any, ...]]] = []
    original = FusecPartition.__call__

    def recording(self: Any, *args: Any) -> Any:
        calls.append((self, args))
        return original(self, *args)

    FusecPartition.__call__ = recording  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        FusecPartition.__call__ = original  # type: ignore[method-assign]


def median_ms(fn: Callable[[], Any], sync: Callable[[], None], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def profile_call(call: Callable[[], Any], sync: Callable[[], None], repeat: int = 5) -> dict:
    """The breakdown of one ``call()`` of a model compiled with the fusec backend."""
    with recorded_partitions() as calls:
        call()
    sync()
    whole = median_ms(call, sync, repeat)
    partitions = []
    kernels: dict[str, float] = defaultdict(float)
    for index, (part, args) in enumerate(calls):
        inputs = part.bridge.to_fusec([args[i] for i in range(len(args)) if i not in part.bound])

        def both() -> None:
            sync()
            part.exe.synchronize()

        exe_ms = median_ms(lambda: part.exe(*inputs), both, repeat)
        part_ms = median_ms(lambda: part(*args), both, repeat)
        device_ms = []
        for _ in range(repeat):
            profile = part.exe.profile(*inputs)[1]
            device_ms.append(profile.kernel_seconds * 1e3)
            for k in profile.kernels:
                kernels[k.kernel] += k.seconds * 1e3 / repeat
        partitions.append({"index": index, "name": part.name, "launches": part.stats.kernel_launches,
                           "kernel_ms": round(statistics.median(device_ms), 4),
                           "executable_ms": round(exe_ms, 4), "partition_ms": round(part_ms, 4),
                           "steps_ms": bridge_ms(part, args, sync, repeat)})
    kernel_total = sum(p["kernel_ms"] for p in partitions)
    partition_total = sum(p["partition_ms"] for p in partitions)
    top = sorted(kernels.items(), key=lambda kv: -kv[1])[:12]
    return {"call_ms": round(whole, 4), "partitions": len(partitions),
            "kernel_ms": round(kernel_total, 4), "partition_ms": round(partition_total, 4),
            "outside_partitions_ms": round(max(0.0, whole - partition_total), 4),
            "by_partition": partitions,
            "top_kernels_ms": [(name, round(ms, 4)) for name, ms in top]}


def bridge_ms(part: Any, args: tuple[Any, ...], sync: Callable[[], None],
              repeat: int = 5) -> dict[str, float]:
    """One partition call taken apart, each step synchronised: the check of its bound inputs,
    the tensors into fusec, the executable's enqueueing, its kernels' completion, the results
    back to tensors."""
    steps: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        sync()
        part.exe.synchronize()
        t0 = time.perf_counter()
        changed = part.states.changed(args)
        t1 = time.perf_counter()
        inputs = part.bridge.to_fusec([args[i] for i in range(len(args)) if i not in part.bound])
        t2 = time.perf_counter()
        results = part.exe(*inputs)
        t3 = time.perf_counter()
        part.exe.synchronize()
        t4 = time.perf_counter()
        outputs = part.bridge.to_torch_all(results, part.dtypes)
        sync()
        t5 = time.perf_counter()
        del outputs, changed
        for name, a, b in (("bound_check", t0, t1), ("to_fusec", t1, t2), ("enqueue", t2, t3),
                           ("finish", t3, t4), ("to_torch", t4, t5)):
            steps[name].append((b - a) * 1e3)
    result = {name: round(statistics.median(v), 4) for name, v in steps.items()}
    result["bound_inputs"] = len(part.bound)
    result["inputs"] = len(args) - len(part.bound)
    return result


def print_profile(title: str, result: dict) -> None:
    print(f"-- profile {title}: call {result['call_ms']} ms (synchronised), "
          f"{result['partitions']} partition calls: kernels {result['kernel_ms']} ms, "
          f"partitions as called {result['partition_ms']} ms, "
          f"outside them {result['outside_partitions_ms']} ms", flush=True)
    for p in result["by_partition"]:
        print(f"   {p['index']:3} {p['name']:12} launches {p['launches']:3}  kernels "
              f"{p['kernel_ms']:8.4f}  executable {p['executable_ms']:8.4f}  "
              f"as called {p['partition_ms']:8.4f}")
        print(f"       steps (ms): {p['steps_ms']}")
    for name, ms in result["top_kernels_ms"]:
        print(f"   kernel {ms:8.4f} ms  {name}")
