"""Hugging Face models at their defaults, through the backend's import and fusions, planned for
an H200 as the GPU compile reads it (`DeviceInfo` with tensor cores and wgmma): the GPU's code
paths are exercised without a GPU (CI has none; the GPU machine runs the programs, bench/gpu.sh
models). Each graph is captured where the backend would compile it, then left to PyTorch.

What is held: GPT-2's f16 tanh GELU is recognised (no ``pow`` in its product's epilogue, where a
``pow(x, 3.0f)`` per element took half of 12 layers' kernel time on the H200 before), that
product takes wgmma, and a layer with its cache returned is at most 8 launches; a Llama layer
with its cache returned is at most 9 launches in f16.

Where the weights lie in the buffers of the bound inputs (`fusec.compiler.weight_placement`:
the folded weights' origins composed with the stored layout), which the backend holds once on
CUDA (`fusec.compiler.torch_weights`): every ``nn.Linear`` weight of BERT and Llama is one range
of a buffer stored ``[N, K]`` (the q, k and v projections one after the other in the merged
one), its bytes there those of the parameter (f16, and bf16 for BERT); Llama's gate and up,
interleaved for the SwiGLU epilogue, and GPT-2's ``Conv1D`` weights (``[K, N]``, stored
transposed), are not."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import fusec.compiler.torch_compile as torch_compile  # noqa: E402
from fusec.codegen.kernels.common import DeviceInfo  # noqa: E402
from fusec.compiler.context import make_context  # noqa: E402
from fusec.compiler.diagnostics import FusecError  # noqa: E402
from fusec.compiler.driver import fuse_and_fold, fuse_and_fold_with_origins, lower  # noqa: E402
from fusec.compiler.pipeline import run_pipeline  # noqa: E402
from fusec.compiler.weight_placement import placements  # noqa: E402
from fusec.frontends.torch_fx import host_array  # noqa: E402

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
    # 16 blocks of 64 columns (one wave of them fills more of the GPU than 8 of 128: the knob
    # wgmma_64_blocks), 64 rows high: 32 blocks of 128 rows would occupy less than half of the
    # H200 (the knob wgmma_short_blocks)
    assert "64x64 blocks" in up, up
    # 8, and the sum of the MLP's down projection split along K (the knob wgmma_split_k: a
    # product of 256 x 256 outputs fills few units); issue 26's bound is 10
    assert layer_launches(monkeypatch, make, ids) <= 9


def test_llama_f16_with_its_cache_on_the_h200(monkeypatch):
    def make(layers):
        torch.manual_seed(0)
        config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                          num_hidden_layers=layers, num_attention_heads=4,
                                          num_key_value_heads=2, vocab_size=512)
        return transformers.LlamaModel(config).eval().half()

    ids = torch.randint(0, 512, (2, 128))
    assert layer_launches(monkeypatch, make, ids) <= 9


def placed_weights(monkeypatch, model, as_held=False, **inputs):
    """Per parameter of `model` (by name) in the programs planned for `H200`: its placements
    (`weight_placement.placements`), each with the bytes of the buffer it lies in (the folded
    or bound value as stored, `ValueSpec.stored`). `as_held`: the plan asked to keep the
    layout of each tensor bound as it is, as the backend asks for CUDA tensors
    (`torch_weights.layouts_as_held`)."""
    names = {id(p): n for n, p in model.named_parameters()}
    found = {}

    def plan(imported, device, options, weights):
        module = imported.module
        _, folded = fuse_and_fold_with_origins(module, None, options.pipeline, "<graph>",
                                               imported.params)
        bound = folded.params
        layouts = {name: (None, None) for name in bound if name in weights.tensors}
        program = lower(module, None, "none", H200, "<graph>", None, True, False,
                        bound=list(bound), layouts=layouts if as_held else None).plan
        specs = {spec.name: spec for spec in program.inputs}
        for source, where in placements(program.inputs, bound, folded.origins).items():
            name = names.get(id(weights.tensors.get(source)))
            if name is not None:
                found[name] = [(p, specs[p.buffer].stored(bound[p.buffer])) for p in where]
        raise FusecError("planned for the H200 only")

    monkeypatch.setattr(torch_compile, "compile_imported", plan)
    torch._dynamo.reset()
    fn = torch.compile(model, backend="fusec", options={"device": "cpu"})
    with torch.inference_mode():
        fn(**inputs)
    assert found
    return found


def perturbed(model):
    """`model` with every parameter perturbed (no two alike: a wrong range cannot match)."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    return model


def assert_one_range(placed, model, name):
    """Parameter `name` lies in one buffer as one range of it, holding its bytes."""
    ((placement, stored),) = placed[name]
    assert placement.contiguous, (name, placement)
    bytes_of = stored.reshape(-1).view(np.uint8)
    got = bytes_of[placement.offset:placement.offset + placement.nbytes]
    np.testing.assert_array_equal(got, host_array(model.get_parameter(name)).reshape(-1)
                                  .view(np.uint8))
    return placement


def linears(model):
    return [n + ".weight" for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_bert_linear_weights_are_ranges_of_their_buffers(monkeypatch, dtype):
    """f32 too: its products take the ``wgmma`` kernel in split TF32 (the knob
    `wgmma_split_tf32`) or the FFMA kernel, both reading a bound B ``[N, K]`` (the knob
    `ffma_b_k_major`, on here), at 2048 rows (fewer, a 256-column product is split along K on
    the portable kernel, which reads B as it is)."""
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=512, hidden_size=256, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=512,
                                     max_position_embeddings=256)
    model = perturbed(transformers.BertModel(config).eval().to(dtype))
    batch = 16 if dtype == torch.float32 else 2
    monkeypatch.setenv("FUSEC_KNOB_FFMA_B_K_MAJOR", "1")
    placed = placed_weights(monkeypatch, model, input_ids=torch.randint(0, 512, (batch, 128)))
    assert len(linears(model)) == 13
    for name in linears(model):
        assert_one_range(placed, model, name)
    for layer in range(2):
        attention = f"encoder.layer.{layer}.attention.self."
        q, k, v = (assert_one_range(placed, model, attention + p + ".weight")
                   for p in ("query", "key", "value"))
        assert q.buffer == k.buffer == v.buffer
        size = model.dtype.itemsize
        assert (q.offset, k.offset, v.offset) == (0, 256 * 256 * size, 2 * 256 * 256 * size)
        q, k, v = (assert_one_range(placed, model, attention + p + ".bias")
                   for p in ("query", "key", "value"))  # the biases' concatenation, as it is
        assert q.buffer == k.buffer == v.buffer
        assert (k.offset, v.offset) == (256 * size, 512 * size)
        dense = assert_one_range(placed, model, f"encoder.layer.{layer}.output.dense.weight")
        assert dense.offset == 0 and dense.buffer.startswith("fusec_folded")


def test_llama_f16_linear_weights_are_ranges_gate_and_up_too(monkeypatch):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=512)
    model = perturbed(transformers.LlamaModel(config).eval().half())
    placed = placed_weights(monkeypatch, model, input_ids=torch.randint(0, 512, (2, 128)))
    for layer in range(2):
        prefix = f"layers.{layer}."
        q, k, v = (assert_one_range(placed, model, f"{prefix}self_attn.{p}_proj.weight")
                   for p in "qkv")
        assert q.buffer == k.buffer == v.buffer
        assert (q.offset, k.offset, v.offset) == (0, 256 * 256 * 2, (256 + 128) * 256 * 2)
        for p in ("self_attn.o_proj", "mlp.down_proj"):
            assert assert_one_range(placed, model, f"{prefix}{p}.weight").offset == 0
        # the SwiGLU epilogue's B: both weights as they are, paired as the kernel reads them
        gate, up = (assert_one_range(placed, model, f"{prefix}mlp.{p}_proj.weight")
                    for p in ("gate", "up"))
        assert gate.buffer == up.buffer
        assert {gate.offset, up.offset} == {0, 512 * 256 * 2}
    assert_one_range(placed, model, "embed_tokens.weight")  # bound as it is


def test_llama_f32_linear_weights_are_ranges_in_split_tf32(monkeypatch):
    """f32 products take split TF32 on wgmma (the knob `wgmma_split_tf32`), which reads every
    ``nn.Linear`` weight as PyTorch holds it: each one range of a buffer, gate and up each
    their own product (the SwiGLU epilogue is 16-bit only). With the knob off, they take the
    FFMA kernel, which stores them ``[K, N]``: no longer ranges."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512,
                                      num_hidden_layers=1, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=512)
    model = perturbed(transformers.LlamaModel(config).eval())
    ids = torch.randint(0, 512, (16, 128))
    placed = placed_weights(monkeypatch, model, input_ids=ids)
    names = linears(model)
    assert len(names) == 7
    for name in names:
        assert_one_range(placed, model, name)
    monkeypatch.setenv("FUSEC_KNOB_WGMMA_SPLIT_TF32", "0")
    placed = placed_weights(monkeypatch, model, input_ids=ids)
    assert not any(placement.contiguous for name in names
                   for placement, _ in placed[name])


def test_gpt2_f16_conv1d_weights_are_strided_in_their_buffers(monkeypatch):
    """``Conv1D`` holds ``[K, N]``, bound as it is and stored ``[N, K]``: a strided placement,
    not a range (the embedding table, read as it is, is one)."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=256, n_head=4, vocab_size=512,
                                     n_positions=256)
    model = perturbed(transformers.GPT2Model(config).eval().half())
    placed = placed_weights(monkeypatch, model, input_ids=torch.randint(0, 512, (2, 128)))
    for p in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"):
        ((placement, _),) = placed[f"h.0.{p}.weight"]
        k = model.get_parameter(f"h.0.{p}.weight").shape[0]
        assert placement.strides == (1, k) and not placement.contiguous
    assert_one_range(placed, model, "wte.weight")


@pytest.mark.parametrize("split", [True, False], ids=["split-tf32", "ffma"])
@pytest.mark.parametrize("as_held", [True, False], ids=["as-held", "transposed"])
def test_gpt2_f32_conv1d_weights_as_held(monkeypatch, as_held, split):
    """Asked to keep GPT-2's ``Conv1D`` weights as PyTorch holds them (``[K, N]``), the f32
    plan does, each one range of its buffer; else it stores them ``[N, K]``, strided. In split
    TF32 (the knob `wgmma_split_tf32`), which reads B only K-major, a weight held so is
    transposed each call into a buffer of the call's (`templates.reads_bound_b_as_is`); the
    FFMA kernel reads it as it is."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=256, n_head=4, vocab_size=512,
                                     n_positions=256)
    model = perturbed(transformers.GPT2Model(config).eval())
    monkeypatch.setenv("FUSEC_KNOB_FFMA_B_K_MAJOR", "1")
    monkeypatch.setenv("FUSEC_KNOB_WGMMA_SPLIT_TF32", "1" if split else "0")
    placed = placed_weights(monkeypatch, model, as_held=as_held,
                            input_ids=torch.randint(0, 512, (16, 128)))
    for p in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"):
        name = f"h.0.{p}.weight"
        if as_held:
            assert assert_one_range(placed, model, name).offset == 0
        else:
            ((placement, _),) = placed[name]
            k = model.get_parameter(name).shape[0]
            assert placement.strides == (1, k) and not placement.contiguous
