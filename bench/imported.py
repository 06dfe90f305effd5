"""Imported-model workloads: one ONNX model file, run by fusec (imported, fused) and by ONNX
Runtime, in the same process, interleaved (``--workload onnx_bert_b1``, ``onnx_gpt2_b1``,
``onnx_llama_b1``).

The models come from `fusec.bench.export_models` (written as the TorchScript exporter writes
them): a BERT-base layer, B=1 S=128, with its int64 attention mask; a GPT-2 block of BERT-base
width, S=128, causal; a Llama-style block of the same width with rotary embeddings. Both
runners get the same model: fusec imports it (weights bound to the device), ONNX Runtime loads
it with every graph optimisation on and its thread pool not spinning between runs (see
`run_imported`). Their outputs are checked
against each other (f32: atol 1e-4, rtol 1e-3) before anything is timed; the row reports each
one's median wall time per call, fusec's kernel time, and the ratio fusec / ONNX Runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fusec.bench import peers
from fusec.bench.export_models import bert_layer, gpt2_block, llama_block
from fusec.bench.harness import Settings
from fusec.bench.peers import first_line
from fusec.bench.timing import interleaved, wall_call

MODELS: dict[str, tuple[str, Callable[[], object]]] = {
    "onnx_bert_b1": ("imported BERT-base layer (ONNX), B=1 S=128",
                     lambda: bert_layer(1, 128, 768, 12, 3072)),
    "onnx_gpt2_b1": ("imported GPT-2 block (ONNX), width 768, B=1 S=128",
                     lambda: gpt2_block(1, 128, 768, 12)),
    "onnx_llama_b1": ("imported Llama block (ONNX, rotary), width 768, B=1 S=128",
                      lambda: llama_block(1, 128, 768, 12, 2048)),
}
ATOL, RTOL = 1e-4, 1e-3


def feeds_for(model: Any, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for v in model.graph.input:
        shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if v.type.tensor_type.elem_type == 7:  # an int64 key mask, one key in eight masked
            mask = (rng.random(shape) > 0.125).astype(np.int64)
            mask[..., 0] = 1
            feeds[v.name] = mask
        else:
            feeds[v.name] = rng.standard_normal(shape, dtype=np.float32)
    return feeds


def run_imported(name: str, settings: Settings) -> dict[str, Any]:
    """Checks and times one imported model; a summary dict (``status`` ok or failed)."""
    import onnxruntime as ort

    import fusec
    from fusec.bench.peer_onnx import session_options

    summary_text, build = MODELS[name]
    result: dict[str, Any] = {"workload": name, "summary": summary_text}
    try:
        model: Any = build()
        feeds = feeds_for(model, settings.seed)
        exe: Any = fusec.compile(model, device=settings.device, pipeline=settings.pipeline)
        session = ort.InferenceSession(model.SerializeToString(),
                                       session_options(peers.THREADS),
                                       providers=["CPUExecutionProvider"])
        ours = exe(**feeds)
        theirs = session.run(None, feeds)
        error = max(float(np.max(np.abs(a - b) - RTOL * np.abs(b))) for a, b in
                    zip(ours, theirs, strict=True))
        result["max_excess_error"] = error
        if error > ATOL:
            result.update(status="wrong", reason=f"fusec differs from onnxruntime by {error:.3g}"
                          f" beyond rtol {RTOL:g} (atol {ATOL:g})")
            return result
        args = exe.exe.arguments((), exe.arguments((), feeds))
        walls = interleaved([lambda: wall_call(lambda: exe.exe(*args)),
                             lambda: wall_call(lambda: session.run(None, feeds))],
                            settings.warmup, settings.repeat)
        kernels = interleaved([lambda: exe.exe.profile(*args)[1].kernel_seconds * 1e3], 0,
                              settings.repeat)[0]
        result.update(status="ok", fusec_ms=walls[0].median_ms, onnxruntime_ms=walls[1].median_ms,
                      fusec_kernels_ms=kernels.median_ms,
                      ratio=walls[0].median_ms / walls[1].median_ms)
    except Exception as e:  # noqa: BLE001 - reported in the summary
        result.update(status="failed", reason=first_line(e))
    return result


def imported_lines(summary: dict[str, Any]) -> list[str]:
    head = f"{summary['workload']}: {summary['summary']}"
    if summary.get("status") != "ok":
        return [f"{head}: {summary.get('status')}: {summary.get('reason', '')}"]
    return [f"{head}: fusec {summary['fusec_ms']:.3f} ms (kernels {summary['fusec_kernels_ms']:.3f}"
            f" ms), onnxruntime {summary['onnxruntime_ms']:.3f} ms, fusec/onnxruntime "
            f"{summary['ratio']:.2f}"]
