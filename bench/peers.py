"""The runners a workload is timed with: fusec's peers (and, in `fusec_runner`, fusec itself).

A peer turns a workload's `Graph` and inputs into a `Prepared` call, or raises `Unavailable`
with the reason the table shows ("not installed", "no CUDA device", a compiler error). Peers
are optional: each imports its library only inside `prepare`, so fusec never needs them.

| peer | devices | what runs |
| --- | --- | --- |
| numpy | cpu | the program op by op in numpy |
| torch | cpu, gpu | PyTorch eager, ``torch.nn.functional`` for norms and attention |
| torch.compile | cpu, gpu | the same function through ``torch.compile`` (Inductor) |
| onnxruntime | cpu | an ONNX model of the program, all graph optimisations on |

On the GPU, PyTorch runs with ``torch.backends.cuda.matmul.allow_tf32 = False`` (and cuDNN's
TF32 off), so its float32 matmuls are true float32 like fusec's.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from fusec.bench.graph import Graph, Unsupported
from fusec.bench.interpret import make_forward

BENCH_EXTRA_HINT = "pip install 'fusec[bench]'"

THREADS: int | None = None
"""CPU threads for PyTorch and ONNX Runtime (`set_threads`); None keeps each library's default."""


def set_threads(count: int | None) -> None:
    """Run the CPU peers with `count` threads (numpy's BLAS only through threadpoolctl)."""
    global THREADS
    THREADS = count
    if count is not None and importlib.util.find_spec("threadpoolctl") is not None:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]

        threadpool_limits(count)


class Unavailable(Exception):
    """A runner that cannot run here; the message is the reason shown in the table."""


@dataclass
class Prepared:
    """A runner made ready for one workload."""

    call: Callable[[], object]
    """One call that returns only when its work is done (this is what is timed)."""
    outputs: Callable[[], list[np.ndarray]]
    """One call whose results are brought back to the host, for the check."""
    device_call: Callable[[], float] | None = None
    """One call timed on the device (ms), where the runner can do so."""
    details: dict[str, Any] = field(default_factory=dict)
    """Facts for the JSON report (fusec: ``kernels`` per call and the ``device``)."""


class Peer(Protocol):
    name: str
    devices: tuple[str, ...]

    def prepare(self, graph: Graph, inputs: Sequence[np.ndarray], device: str) -> Prepared: ...


def require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise Unavailable(f"{module} not installed ({BENCH_EXTRA_HINT})")


def host_list(values: Sequence[Any]) -> list[np.ndarray]:
    return [np.asarray(v) for v in values]


class NumpyPeer:
    name = "numpy"
    devices = ("cpu",)

    def prepare(self, graph: Graph, inputs: Sequence[np.ndarray], device: str) -> Prepared:
        from fusec.bench.peer_numpy import NUMPY_OPS

        forward = make_forward(graph, NUMPY_OPS, "numpy")
        return Prepared(call=lambda: forward(*inputs),
                        outputs=lambda: host_list(forward(*inputs)))


def torch_device(device: str) -> str:
    """``cpu`` or ``cuda``; configures PyTorch for a fair float32 comparison."""
    require("torch")
    import torch

    if device == "cpu":
        if THREADS is not None:
            torch.set_num_threads(THREADS)
        return "cpu"
    if not torch.cuda.is_available():
        raise Unavailable("no CUDA device visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return "cuda"


def tensor_of(array: np.ndarray, dtype: str, where: str) -> Any:
    """A torch tensor of a workload input; bf16 inputs (uint16 bit patterns) as bfloat16."""
    import torch

    array = np.ascontiguousarray(array)
    if dtype == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16).to(where)
    return torch.from_numpy(array).to(where)


def host_array(tensor: Any) -> np.ndarray:
    """A torch result as the numpy array fusec returns (bfloat16: uint16 bit patterns)."""
    import torch

    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).cpu().numpy().view(np.uint16)
    return tensor.cpu().numpy()


class TorchPeer:
    """PyTorch eager, or ``torch.compile`` of the same function when `compiled`."""

    devices = ("cpu", "gpu")

    def __init__(self, compiled: bool = False):
        self.compiled = compiled
        self.name = "torch.compile" if compiled else "torch"

    def prepare(self, graph: Graph, inputs: Sequence[np.ndarray], device: str,
                allow_tf32: bool = False) -> Prepared:
        """With `allow_tf32`, float32 matmuls run in TF32 on CUDA (as the workload allows
        fusec too); otherwise in float32."""
        where = torch_device(device)
        import torch

        from fusec.bench.peer_torch import TORCH_OPS

        forward = make_forward(graph, TORCH_OPS, "PyTorch")
        if self.compiled:
            # Every workload's forward shares one code object; without a reset, dynamo would
            # count each workload as a recompilation and, past its limit, silently run eager.
            torch._dynamo.reset()
            forward = torch.compile(forward)
        args = [tensor_of(a, t.dtype, where) for a, t in zip(inputs, graph.inputs, strict=True)]

        def call() -> object:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
            with torch.inference_mode():
                out = forward(*args)
            if where == "cuda":
                torch.cuda.synchronize()
            return out

        def outputs() -> list[np.ndarray]:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
            with torch.inference_mode():
                return [host_array(t) for t in forward(*args)]

        def device_call() -> float:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.inference_mode():
                start.record()
                forward(*args)
                end.record()
            end.synchronize()
            return float(start.elapsed_time(end))

        try:
            outputs()  # compiles now, so that a compiler failure reads as "n/a (why)"
        except Unsupported:
            raise
        except Exception as error:  # noqa: BLE001 - any compiler failure is a reason to report
            if not self.compiled:
                raise
            raise Unavailable(f"torch.compile failed: {first_line(error)}") from error
        return Prepared(call=call, outputs=outputs,
                        device_call=device_call if where == "cuda" else None)


class OnnxRuntimePeer:
    name = "onnxruntime"
    devices = ("cpu",)

    def prepare(self, graph: Graph, inputs: Sequence[np.ndarray], device: str) -> Prepared:
        require("onnx")
        require("onnxruntime")
        from fusec.bench.peer_onnx import session

        arrays = {t.name: a for t, a in zip(graph.inputs, inputs, strict=True)}
        sess = session(graph, THREADS, {n: a for n, a in arrays.items() if n in graph.params})
        feed = {n: a for n, a in arrays.items() if n not in graph.params}
        return Prepared(call=lambda: sess.run(None, feed),
                        outputs=lambda: host_list(sess.run(None, feed)))


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:160]


ALL_PEERS: tuple[Peer, ...] = (NumpyPeer(), TorchPeer(), TorchPeer(compiled=True),
                               OnnxRuntimePeer())


def peers_for(device: str, names: Sequence[str] | None = None) -> list[Peer]:
    """The peers that run on `device`, restricted to `names` when given (ValueError if unknown)."""
    known = {p.name: p for p in ALL_PEERS}
    if names:
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown peer '{unknown[0]}' (known: {', '.join(known)})")
        chosen = [known[n] for n in names]
    else:
        chosen = list(ALL_PEERS)
    return [p for p in chosen if device in p.devices]
