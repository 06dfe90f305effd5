"""A small f16 Llama block and BERT layer lowered for an NVIDIA GPU with 16-bit tensor cores, so
that their attention is the tensor-core kernel (`attention_mma`), then run on the test device
with its PTX emulated (``mma="emulated"``), fused (the default pipeline: q/k/v read in place
from the packed QKV product) and unfused (``none``), against the numpy reference and each
other. The GEMMs are kept portable here (their ``mma.sync`` kernels have their own tests), so
that only the attention differs from the plain GPU layout. With ``FUSEC_TEST_MMA=ptx`` (on the
GPU machine, ``FUSEC_TEST_DEVICE=gpu``) the real instructions run instead.

Llama: B=2, S=70 (a ragged 64-query block, a ragged 64-key tile), 4 heads of 16, causal, q/k/v
narrowed from one packed product. BERT: B=2, S=70, 4 heads of 16, an f16 key mask.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

from fusec.bench.workloads import bert, llama
from fusec.codegen import templates
from fusec.codegen.kernels import attention_mma as module
from fusec.codegen.kernels import gemm
from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.check import compare
from fusec.compiler.driver import load, lower
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.device import select_device
from fusec.runtime.executable import Executable

DEVICE = os.environ.get("FUSEC_TEST_DEVICE", "cpu")
MMA = os.environ.get("FUSEC_TEST_MMA", "emulated")
NVIDIA = DeviceInfo("NVIDIA GPU layout with f16/bf16 mma.sync", is_cpu=False,
                    local_mem_size=49152, max_work_group_size=1024,
                    tensor_cores=("f16", "bf16"))

RTOL = 4e-3
"""max |out - reference| / max |reference|: a few f16 roundings (7e-4 is seen on the CPU, with
the tensor-core attention and with the tiled one alike)."""

PROGRAMS = {
    "llama": lambda: llama(2, 70, hidden=64, heads=4, ffn=96, element="f16").text(),
    "bert": lambda: bert(2, 70, hidden=64, heads=4, ffn=128, element="f16").text(),
}


@pytest.fixture
def tensor_core_attention(monkeypatch, set_knobs):
    # the norms' warp shuffles are real PTX on this device (their emulation: test_row_combine)
    set_knobs(attention_mma=True, row_warp_shuffles=MMA != "emulated")
    monkeypatch.setattr(templates, "attention_mma",
                        functools.partial(module.attention_mma, mma=MMA))
    if MMA == "emulated":  # portable GEMMs: only the attention is on (emulated) tensor cores
        monkeypatch.setattr(gemm, "mma_kind", lambda dtype: "none")


def layer_inputs(fn, seed: int) -> list[np.ndarray]:
    """`random_inputs`, with the weights scaled as `fusec.bench.workloads` draws them (a
    weight ``[K, N]`` by 1/sqrt(K), gammas near 1, biases near 0), so that the attention's share
    of the output is not lost under the residual's rounding."""
    args = random_inputs(fn, seed)
    for i, param in enumerate(fn.body.block.args):
        name = param.name_hint or ""
        value = args[i].astype(np.float32)
        if name.endswith("_w"):
            value = value / np.sqrt(value.shape[0])
        elif name.endswith("_g"):
            value = 1.0 + 0.1 * value
        elif name.endswith("_b"):
            value = 0.1 * value
        else:
            continue
        args[i] = value.astype(np.float16)
    return args


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_f16_layer_with_tensor_core_attention_matches_reference(tensor_core_attention, program):
    source = PROGRAMS[program]()
    module_ = load(source)
    args = layer_inputs(find_function(module_, None), 4)
    expected = run_function(module_, args, None)
    device = select_device(DEVICE)  # type: ignore[arg-type]
    results = {}
    for pipeline in ("default", "none"):
        plan = lower(load(source), pipeline=pipeline, device_info=NVIDIA).plan
        assert plan.source.count("tensor-core attention") == 1
        assert "register-tiled attention" not in plan.source
        results[pipeline] = Executable(plan, device)(*args)
        for result in compare(results[pipeline], expected, atol=0.0, rtol=RTOL, normwise=True):
            assert result.ok, f"{pipeline}: {result.describe()}"
    fused, unfused = (np.asarray(results[p][0], np.float32) for p in ("default", "none"))
    scale = float(np.abs(expected[0].astype(np.float32)).max())
    assert float(np.abs(fused - unfused).max()) <= RTOL * scale
