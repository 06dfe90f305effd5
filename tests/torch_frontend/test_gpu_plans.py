"""Hugging Face models at their defaults, through the backend's import and fusions, planned for
an H200 as the GPU compile reads it (`DeviceInfo` with tensor cores and wgmma): the GPU's code
paths are exercised without a GPU (CI has none; the GPU machine runs the programs, bench/gpu.sh
models). Each graph is captured where the backend would compile it, then left to PyTorch.

What is held: GPT-2's f16 tanh GELU is recognised (no ``pow`` in its product's epilogue, where a
``pow(x, 3.0f)`` per element took half of 12 layers' kernel time on the H200 before), that
product takes wgmma, and a layer with its cache returned is at most 8 launches; a Llama layer
with its cache returned is at most 9 launches in f16."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import fusec.compiler.torch_compile as torch_compile  # noqa: E402
from fusec.codegen.kernels.common import DeviceInfo  # noqa: E402
from fusec.compiler.context import make_context  # noqa: E402
from fusec.compiler.diagnostics import FusecError  # noqa: E402
from fusec.compiler.driver import fuse_and_fold, lower  # noqa: E402
from fusec.compiler.pipeline import run_pipeline  # noqa: E402

H200 = DeviceInfo("H200 (as the GPU compile reads it)", is_cpu=False, local_mem_size=232448,
                  max_work_group_size=1024, tensor_cores=("f16", "bf16", "tf32"), wgmma=True,
                  compute_units=132)


def gpu_plans(monkeypatch, model, **inputs):
    """The programs planned for `H200`, one per graph the backend would compile."""
    plans = []

    def plan(imported, device, options, weights=None):
        module = imported.module
        pipeline, bound = fuse_and_fold(module, None, options.pipeline, "<graph>",
                                        imported.params)
        if pipeline not in ("", "none"):
            run_pipeline(make_context(), module, pipeline, "<graph>")
        plans.append(lower(module, None, "none", H200, "<graph>", None, True, False,
                           bound=list(bound or {})).plan)
        raise FusecError("planned for the H200 only")  # the partition is left to PyTorch

    monkeypatch.setattr(torch_compile, "compile_imported", plan)
    torch._dynamo.reset()
    fn = torch.compile(model, backend="fusec", options={"device": "cpu"})
    with torch.inference_mode():
        fn(**inputs)
    assert plans
    return plans


def layer_launches(monkeypatch, make, ids) -> int:
    """The launches one more layer adds (2 layers less 1)."""
    counts = [sum(len(p.launches) for p in gpu_plans(monkeypatch, make(n), input_ids=ids))
              for n in (1, 2)]
    return counts[1] - counts[0]


def test_gpt2_f16_on_the_h200(monkeypatch):
    def make(layers):
        torch.manual_seed(0)
        config = transformers.GPT2Config(n_layer=layers, n_embd=256, n_head=4, vocab_size=512,
                                         n_positions=256)
        return transformers.GPT2Model(config).eval().half()

    ids = torch.randint(0, 512, (2, 128))
    (plan,) = gpu_plans(monkeypatch, make(1), input_ids=ids)
    assert "pow(" not in plan.source
    # the MLP's up-projection, whose epilogue is the GELU: 1024 columns, whole wgmma tiles
    (up,) = [line for line in plan.source.split("\n")
             if line.startswith("// ") and "@ [1024x256].T" in line]
    assert "on wgmma" in up, up
    assert "128x128 blocks" in up, up  # 16 blocks of 128 columns: 8 of 256 fill less of the GPU
    assert layer_launches(monkeypatch, make, ids) <= 8


def test_llama_f16_with_its_cache_on_the_h200(monkeypatch):
    def make(layers):
        torch.manual_seed(0)
        config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                          num_hidden_layers=layers, num_attention_heads=4,
                                          num_key_value_heads=2, vocab_size=512)
        return transformers.LlamaModel(config).eval().half()

    ids = torch.randint(0, 512, (2, 128))
    assert layer_launches(monkeypatch, make, ids) <= 9
