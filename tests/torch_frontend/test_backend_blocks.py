"""Small modules through ``torch.compile(backend="fusec")`` on the CPU OpenCL device: outputs
equal eager PyTorch's, and the report says what was fused, launched and left to PyTorch."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
from torch_helpers import (  # noqa: E402
    assert_close,
    compiled_run,
    fused_total,
    knob_at_each_call,
)


class MlpBlock(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.down(F.gelu(self.up(x))))


class Attention(nn.Module):
    """A hand-written attention block: q, k, v projections, SDPA, output projection."""

    def __init__(self, width: int = 32, heads: int = 4, kv_heads: int = 4, causal: bool = False,
                 repeat_kv: bool = False):
        super().__init__()
        self.heads, self.kv_heads, self.dim = heads, kv_heads, width // heads
        self.causal, self.repeat_kv = causal, repeat_kv
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, kv_heads * self.dim)
        self.v = nn.Linear(width, kv_heads * self.dim)
        self.o = nn.Linear(width, width)

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv_heads, self.dim).transpose(1, 2)
        gqa = self.kv_heads != self.heads
        if gqa and self.repeat_kv:  # Hugging Face's repeat_kv
            group = self.heads // self.kv_heads
            k = k[:, :, None].expand(b, self.kv_heads, group, s, self.dim).reshape(
                b, self.heads, s, self.dim)
            v = v[:, :, None].expand(b, self.kv_heads, group, s, self.dim).reshape(
                b, self.heads, s, self.dim)
            gqa = False
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal,
                                           enable_gqa=gqa)
        return self.o(a.transpose(1, 2).reshape(b, s, self.heads * self.dim))


def test_linear_gelu_layer_norm_block(tmp_path):
    torch.manual_seed(0)
    block = MlpBlock().eval()
    x = torch.randn(2, 8, 32)
    expected, actual, graphs = compiled_run(block, (x,), tmp_path)
    assert_close(actual, expected)
    (graph,) = graphs
    assert graph["fallback_ops"] == []
    assert graph["kernel_launches"] <= 4
    assert fused_total(graphs, "fused.matmul_bias_act") >= 1


@pytest.mark.parametrize("causal", [False, True])
def test_attention_fused(tmp_path, causal):
    torch.manual_seed(1)
    block = Attention(causal=causal).eval()
    x = torch.randn(2, 8, 32)
    expected, actual, graphs = compiled_run(block, (x,), tmp_path)
    assert_close(actual, expected)
    assert attention_kernels(graphs) == 1
    assert graphs[0]["fallback_ops"] == []
    assert graphs[0]["kernel_launches"] <= 5  # q, k, v, attention, output projection


def test_qkv_projections_merge_into_one_gemm_and_see_weight_changes(tmp_path):
    """nn.Linear weights reach the IR transposed; bound, the q, k and v projections still merge
    into one GEMM of folded weights (fuse-shared-input-matmul), so the block is 3 launches, and
    a projection's weight changed in place afterwards is seen (the merge is compiled again)."""
    torch.manual_seed(4)
    block = Attention().eval()
    x = torch.randn(2, 8, 32)
    expected, actual, graphs = compiled_run(block, (x,), tmp_path)
    assert_close(actual, expected)
    assert graphs[0]["kernel_launches"] == 3  # q, k and v, attention, output projection
    assert fused_total(graphs, "fused.matmul_bias_act") == 2
    compiled = torch.compile(block, backend="fusec", options={"device": "cpu"})
    with torch.inference_mode():
        assert_close(compiled(x), block(x))
        block.k.weight.mul_(-0.5)
        block.v.bias.add_(1.0)
        assert_close(compiled(x), block(x))


def test_a_compile_after_a_weight_change_keeps_the_graphs_knobs(monkeypatch):
    """The knobs in the backend's options hold for every compile of a partition: the first,
    and the one a change to a folded weight makes."""
    seen = knob_at_each_call(monkeypatch, "compile_imported", "skinny_gemm")
    torch.manual_seed(4)
    block = Attention().eval()
    x = torch.randn(2, 8, 32)
    torch._dynamo.reset()
    compiled = torch.compile(block, backend="fusec",
                             options={"device": "cpu", "knobs": {"skinny_gemm": False}})
    with torch.inference_mode():
        compiled(x)
        block.k.weight.mul_(-0.5)  # folded into the q, k and v GEMM: compiled again
        assert_close(compiled(x), block(x))
    assert seen == [False, False]


def attention_kernels(graphs):
    return fused_total(graphs, "nn.attention") + fused_total(graphs, "fused.attention_block")


def test_attention_key_padding_bool_mask(tmp_path):
    torch.manual_seed(2)
    block = Attention().eval()
    x = torch.randn(2, 8, 32)
    keep = torch.ones(2, 1, 1, 8, dtype=torch.bool)
    keep[1, ..., 5:] = False
    expected, actual, graphs = compiled_run(block, (x, keep), tmp_path)
    assert_close(actual, expected)
    assert attention_kernels(graphs) == 1


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_general_masks(tmp_path, kind):
    """A [B, 1, S, S] mask is not a key mask: the math is written out, and still exact."""
    torch.manual_seed(3)
    block = Attention().eval()
    x = torch.randn(2, 8, 32)
    keep = torch.rand(2, 1, 8, 8) > 0.3
    keep[..., 0] = True
    mask = keep if kind == "bool" else torch.where(keep, 0.0, -1e4) + torch.randn(2, 1, 8, 8)
    expected, actual, _ = compiled_run(block, (x, mask), tmp_path)
    assert_close(actual, expected)


@pytest.mark.parametrize("repeat_kv", [False, True])
def test_attention_gqa(tmp_path, repeat_kv):
    torch.manual_seed(4)
    block = Attention(heads=4, kv_heads=2, causal=True, repeat_kv=repeat_kv).eval()
    x = torch.randn(2, 8, 32)
    expected, actual, graphs = compiled_run(block, (x,), tmp_path)
    assert_close(actual, expected)
    assert graphs[0]["fallback_ops"] == []
    assert attention_kernels(graphs) == 1


class NewGelu(nn.Module):
    """GPT-2's ``gelu_new`` as Hugging Face writes it (``NewGELUActivation``)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                           * (x + 0.044715 * torch.pow(x, 3.0))))


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float16, 1e-2),
                                       (torch.bfloat16, 5e-2)])
def test_tanh_gelu_recognised_in_every_float_type(tmp_path, monkeypatch, dtype, tol):
    """The tanh GELU is one ``nn.gelu{tanh}`` whatever the type: in f16 and bf16 the graph's
    constants are rounded to the type (0.044715 is 0.04470825 in f16), and recognising them
    only at f32's precision left a ``pow`` and a ``tanh`` in the product's epilogue."""
    import fusec.compiler.torch_compile as torch_compile

    imported = []
    original = torch_compile.compile_imported

    def capture(graph, device, options, weights=None):
        imported.append(str(graph.module))
        return original(graph, device, options, weights)

    monkeypatch.setattr(torch_compile, "compile_imported", capture)
    torch.manual_seed(4)
    block = nn.Sequential(nn.Linear(32, 128), NewGelu(), nn.Linear(128, 32)).eval().to(dtype)
    x = torch.randn(4, 8, 32).to(dtype)
    expected, actual, graphs = compiled_run(block, (x,), tmp_path)
    assert_close(actual.float(), expected.float(), tol=tol)
    (text,) = imported
    assert "nn.gelu" in text and "nn.pow" not in text and "nn.tanh" not in text
