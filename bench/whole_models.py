"""Whole Hugging Face models through ``torch.compile(backend="fusec")`` as ``fusec-bench``
workloads (``--workload torch_bert``, ``torch_gpt2``, ``torch_llama``; named only, as the
imported ONNX models are): one row of `fusec.bench.torch_models` each, in its harness (the
model at its library-default attention, every runner checked against eager first, then timed
in turns against eager, Inductor and, on the GPU, reduce-overhead, with each runner's kernel
time and the model's device memory). On the GPU the models run in f16 at the issue-29 shapes
(BERT-base B=32, GPT-2 small B=16, the Llama-style model B=32, S=128), on the CPU in f32.
``python -m fusec.bench.torch_models`` has every option (other types, batches, knobs flipped).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from fusec.bench.harness import Settings
from fusec.bench.peers import first_line

MODELS = {"torch_bert": "bert", "torch_gpt2": "gpt2", "torch_llama": "llama"}
"""Workload name -> `torch_models.build`'s model name."""

OVERRIDES: dict[str, Any] = {}
"""More `torch_models.arguments` for every row (the tests make the models small)."""


def run_whole_model(name: str, settings: Settings) -> dict[str, Any]:
    """Checks and times one model; a summary dict (``status`` ok, wrong or failed, the
    harness's ``row``)."""
    from fusec.bench import torch_models

    gpu = settings.device == "gpu"
    result: dict[str, Any] = {"workload": name}
    try:
        args = torch_models.arguments(
            device="cuda" if gpu else "cpu", models=MODELS[name], dtypes="f16" if gpu else "f32",
            repeat=settings.repeat, turns=3, reduce_overhead=gpu, kernel_time=gpu,
            **OVERRIDES)
        with contextlib.redirect_stdout(sys.stderr):  # its progress: not the table's stream
            (row,) = torch_models.run(args)
    except Exception as e:  # noqa: BLE001 - reported in the summary
        result.update(status="failed", reason=first_line(e))
        return result
    errors = {k: v for k, v in row.items() if k.endswith("error")}
    if "fusec_ms" not in row:
        result.update(status="wrong" if "fusec_maxdiff" in row else "failed",
                      reason="; ".join(f"{k}: {v}" for k, v in errors.items()))
    else:
        result["status"] = "ok"
    result["row"] = row
    return result


def whole_model_lines(summary: dict[str, Any]) -> list[str]:
    """The row as ``python -m fusec.bench.torch_models`` prints it, under its description."""
    from fusec.bench.torch_models import table_lines

    row = summary.get("row", {})
    head = f"{summary['workload']}: {row.get('summary', MODELS[summary['workload']])}"
    if summary.get("status") != "ok":
        return [f"{head}: {summary.get('status')}: {summary.get('reason', '')}"]
    lines = [head, *table_lines([row])]
    extra = [f"{key} {row[key]}" for key in ("inductor-ro_ms", "fusec_kernel_ms",
                                             "inductor_kernel_ms", "fusec_model_device_mib",
                                             "eager_model_device_mib") if key in row]
    return lines + ([", ".join(extra)] if extra else [])
