"""The benchmark workloads: each one a fusec program written by a small function of its sizes.

A `Workload` holds the IR text (what fusec compiles and what every peer is translated from),
how to draw its inputs, the tolerance of the check against the reference, and the devices it
runs on. `WORKLOADS` lists them in table order; `select` filters them by name.

The programs are float32 and written the way a user (or an exporter) would write them in ``nn``
ops: a linear layer is ``matmul`` then ``add`` of the bias, attention projections are one
packed ``[E, 3E]`` matmul split with ``narrow``, and so on. The fusion pipeline is free to fuse
them; the peers see the same unfused program.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from fusec.bench.program import ProgramWriter, Value

MIB = 1 << 20


@dataclass(frozen=True)
class Init:
    """How to draw one input: ``normal`` (``offset + scale * N(0, 1)``) or a 0/1 key ``mask``."""

    kind: str = "normal"
    scale: float = 1.0
    offset: float = 0.0

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if self.kind == "mask":
            # About one key in eight is masked; key 0 always attends, so no row is empty.
            mask = (rng.random(shape) > 0.125).astype(np.float32)
            mask[..., 0] = 1.0
            return mask
        values = rng.standard_normal(shape, dtype=np.float32)
        return (values * np.float32(self.scale) + np.float32(self.offset)).astype(np.float32)


def aligned_copy(array: np.ndarray, alignment: int) -> np.ndarray:
    from fusec.runtime.host_memory import aligned_empty

    out = aligned_empty(array.shape, array.dtype, alignment)
    out[...] = array
    return out


NORMAL = Init()
GAMMA = Init(scale=0.1, offset=1.0)
MASK = Init("mask")


def weight(fan_in: int) -> Init:
    """A weight matrix scaled so that activations keep unit variance."""
    return Init(scale=1.0 / math.sqrt(fan_in))


@dataclass(frozen=True)
class Workload:
    """One row of the benchmark table."""

    name: str
    summary: str
    text: str
    """The fusec IR (one ``func.func``)."""
    inits: dict[str, Init] = field(default_factory=dict)
    """Input name -> how to draw it; inputs not named are standard normal."""
    devices: tuple[str, ...] = ("cpu", "gpu")
    tolerance: float = 1e-4
    """Largest accepted ``||out - ref|| / ||ref||`` per output."""
    group: str = ""
    """The issue's workload number, for the table."""
    params: tuple[str, ...] = ()
    """Inputs held fixed from call to call (weights): fusec binds them to the device, ONNX
    Runtime gets them as initializers; PyTorch holds every input as a tensor anyway."""
    pipeline: str | None = None
    """fusec's fusion pipeline for this workload (``"none"``: every op lowered on its own);
    None: the run's (``fusec-bench -p``)."""
    launch_fusion: bool = True
    """Whether ``lower-opencl`` merges adjacent launches (``fuse-launches``)."""
    element: str = "f32"
    """The element type of every input: ``f32``, ``f16`` or ``bf16`` (drawn in float32, then
    rounded; bf16 inputs are uint16 bit patterns, see `fusec.dtypes`)."""
    tf32: bool = False
    """f32 matmuls may use TF32 tensor cores: fusec's ``allow_tf32`` and PyTorch's."""

    def inputs(self, arg_names: Sequence[str], shapes: Sequence[tuple[int, ...]], seed: int = 0,
               alignment: int | None = None) -> list[np.ndarray]:
        """The inputs drawn from `seed`; with `alignment`, each placed in an array whose data
        starts at a multiple of that many bytes (numpy itself aligns large arrays to 16)."""
        rng = np.random.default_rng(seed)
        drawn = [self.typed(self.inits.get(name, NORMAL).draw(rng, shape))
                 for name, shape in zip(arg_names, shapes, strict=True)]
        return drawn if alignment is None else [aligned_copy(a, alignment) for a in drawn]


    def typed(self, drawn: np.ndarray) -> np.ndarray:
        """A float32 draw as an input of this workload's element type."""
        if self.element == "f16":
            return drawn.astype(np.float16)
        if self.element == "bf16":
            from fusec.dtypes import bf16_bits

            return bf16_bits(drawn)
        return drawn


# --- program writers -------------------------------------------------------------------------


def elementwise_chain(n: int) -> ProgramWriter:
    """``relu((a + b) * c)``."""
    p = ProgramWriter("elementwise")
    a, b, c = (p.arg(name, [n]) for name in "abc")
    p.ret(p.relu(p.mul(p.add(a, b), c)))
    return p


def eight_op_chain(rows: int, cols: int) -> ProgramWriter:
    """``where(x > y, gelu_tanh(x + bias) * sigmoid(y), x) - y) * bias``: eight ops, one bias."""
    p = ProgramWriter("chain8")
    x, y, bias = p.arg("x", [rows, cols]), p.arg("y", [rows, cols]), p.arg("bias", [cols])
    h = p.gelu(p.add(x, bias), "tanh")
    m = p.mul(h, p.sigmoid(y))
    w = p.where(p.cmp("gt", x, y), m, x)
    p.ret(p.mul(p.sub(w, y), bias))
    return p


def launch_chain(ops: int, rows: int, cols: int) -> ProgramWriter:
    """``ops`` elementwise ops in a chain, cycling ``x * scale``, ``+ shift``, ``tanh``,
    ``neg`` (bounded values); run with ``-p none`` it is ``ops`` small kernels, which launch
    fusion merges into one launch."""
    p = ProgramWriter("launch_chain")
    x, scale, shift = p.arg("x", [rows, cols]), p.arg("scale", [cols]), p.arg("shift", [cols])
    steps = (lambda v: p.mul(v, scale), lambda v: p.add(v, shift),
             lambda v: p.unary("tanh", v), lambda v: p.unary("neg", v))
    for i in range(ops):
        x = steps[i % len(steps)](x)
    p.ret(x)
    return p


def residual_norm(kind: str, rows: int, cols: int) -> ProgramWriter:
    """``layer_norm(x + residual)`` or ``rms_norm(x + residual)``."""
    p = ProgramWriter(f"residual_{kind}")
    x, res, gamma = p.arg("x", [rows, cols]), p.arg("residual", [rows, cols]), p.arg(
        "gamma", [cols])
    h = p.add(x, res)
    if kind == "layer_norm":
        p.ret(p.layer_norm(h, gamma, p.arg("beta", [cols])))
    else:
        p.ret(p.rms_norm(h, gamma))
    return p


def softmax_rows(rows: int, cols: int) -> ProgramWriter:
    p = ProgramWriter("softmax")
    p.ret(p.softmax(p.arg("x", [rows, cols])))
    return p


def sum_all(n: int) -> ProgramWriter:
    p = ProgramWriter("sum")
    p.ret(p.reduce_sum(p.arg("x", [n]), [0]))
    return p


def matmul_bias_gelu(m: int, k: int, n: int) -> ProgramWriter:
    p = ProgramWriter("matmul_bias_gelu")
    x, w, b = p.arg("x", [m, k]), p.arg("w", [k, n]), p.arg("b", [n])
    p.ret(p.gelu(p.linear(x, w, b)))
    return p


def sgemm(m: int, k: int, n: int, element: str = "f32") -> ProgramWriter:
    p = ProgramWriter("sgemm" if element == "f32" else f"gemm_{element}")
    p.ret(p.matmul(p.arg("a", [m, k], element), p.arg("b", [k, n], element)))
    return p


def row_stat(p: ProgramWriter, kind: str, x: Value) -> Value:
    """``kind`` over the last axis of ``x``, keeping it."""
    rank = len(x.shape)
    return p.op(f"nn.reduce_{kind}", [x], [*x.shape[:-1], 1],
                f"axes = array<i64: {rank - 1}>, keepdims = true")


def row_softmax(rows: int, cols: int) -> ProgramWriter:
    """Softmax written out: ``exp(x - max) / sum(exp(x - max))`` (fuse-row-reduce: 1 kernel)."""
    p = ProgramWriter("row_softmax")
    x = p.arg("x", [rows, cols])
    e = p.unary("exp", p.sub(x, row_stat(p, "max", x)))
    p.ret(p.binary("div", e, row_stat(p, "sum", e)))
    return p


def row_layernorm(rows: int, cols: int) -> ProgramWriter:
    """LayerNorm written out: centre, mean of squares, ``/ sqrt(var + eps)``, gain, bias."""
    p = ProgramWriter("row_layernorm")
    x, eps = p.arg("x", [rows, cols]), p.arg("eps", [])
    gamma, beta = p.arg("gamma", [cols]), p.arg("beta", [cols])
    d = p.sub(x, row_stat(p, "mean", x))
    var = row_stat(p, "mean", p.mul(d, d))
    n = p.binary("div", d, p.unary("sqrt", p.add(var, eps)))
    p.ret(p.add(p.mul(n, gamma), beta))
    return p


def multi_output_chain(rows: int, cols: int) -> ProgramWriter:
    """``t = a * b + c`` returned, and ``tanh(t) * a`` (fuse-multi-output: 1 kernel)."""
    p = ProgramWriter("multi_output")
    a, b, c = p.arg("a", [rows, cols]), p.arg("b", [rows, cols]), p.arg("c", [cols])
    t = p.add(p.mul(a, b), c)
    p.ret(p.mul(p.unary("tanh", t), a), t)
    return p


def gemm_epilogue(m: int, k: int, n: int) -> ProgramWriter:
    """``clamp((alpha * (A @ B) + beta * C) * rows * cols, lo, hi)`` (one GEMM + epilogue)."""
    p = ProgramWriter("gemm_epilogue")
    a, b, c = p.arg("a", [m, k]), p.arg("b", [k, n]), p.arg("c", [m, n])
    alpha, beta, lo, hi = (p.arg(name, []) for name in ("alpha", "beta", "lo", "hi"))
    row_scale, col_scale = p.arg("row_scale", [m, 1]), p.arg("col_scale", [n])
    y = p.add(p.mul(p.matmul(a, b), alpha), p.mul(c, beta))
    y = p.mul(p.mul(y, row_scale), col_scale)
    p.ret(p.binary("min", p.binary("max", y, lo), hi))
    return p


def cast_chain(rows: int, cols: int) -> ProgramWriter:
    """``f16(gelu_tanh(f32(x)) * f32(g))``: f16 in and out, computed in f32 (casts fused into
    the region: one kernel)."""
    p = ProgramWriter("cast_chain")
    x, g = p.arg("x", [rows, cols], "f16"), p.arg("g", [cols], "f16")
    h, s = p.op("nn.cast", [x], x.shape), p.op("nn.cast", [g], g.shape)
    y = p.mul(p.gelu(h, "tanh"), s)
    p.ret(p.op("nn.cast", [y], y.shape, element="f16"))
    return p


def image_normalize(n: int, c: int, h: int, w: int) -> ProgramWriter:
    """Per image and channel: ``(x - mean) * rsqrt(var + eps) * gain + bias``, clamped to
    [0, 6], the statistics over H and W (fuse-image-normalize: 1 kernel)."""
    p = ProgramWriter("image_normalize")
    x = p.arg("x", [n, c, h, w])
    gain, bias = p.arg("gain", [c, 1, 1]), p.arg("bias", [c, 1, 1])
    eps, lo, hi = (scalar_constant(p, v) for v in (1e-5, 0.0, 6.0))

    def plane_mean(v: Value) -> Value:
        return p.op("nn.reduce_mean", [v], [n, c, 1, 1], "axes = array<i64: 2, 3>, keepdims = true")

    d = p.sub(x, plane_mean(x))
    var = plane_mean(p.mul(d, d))
    y = p.add(p.mul(p.mul(d, p.unary("rsqrt", p.add(var, eps))), gain), bias)
    p.ret(p.binary("min", p.binary("max", y, lo), hi))
    return p


def scalar_constant(p: ProgramWriter, value: float) -> Value:
    """A rank-0 f32 ``nn.constant`` appended to ``p``."""
    result = Value(str(len(p.lines)), ())
    p.lines.append(f"  %{result.name} = nn.constant {{value = dense<{value:e}> : tensor<f32>}} "
                   ": tensor<f32>")
    return result


def centered_gram(n: int, d: int) -> ProgramWriter:
    """Sample covariance ``(x - mean(x, 0))^T (x - mean(x, 0)) / (n - 1)`` (fuse-centered-gram:
    2 kernels, the nn ops 5)."""
    p = ProgramWriter("centered_gram")
    x = p.arg("x", [n, d])
    mean = p.op("nn.reduce_mean", [x], [1, d], "axes = array<i64: 0>, keepdims = true")
    c = p.sub(x, mean)
    t = p.op("nn.transpose", [c], [d, n], "perm = array<i64: 1, 0>")
    p.ret(p.binary("div", p.matmul(t, c), scalar_constant(p, float(n - 1))))
    return p


def power_step(m: int, k: int, c: int) -> ProgramWriter:
    """``y = a @ q``, each column over its norm plus eps (fuse-power-step-normalize: 2
    kernels)."""
    p = ProgramWriter("power_step")
    a, q = p.arg("a", [m, k]), p.arg("q", [k, c])
    y = p.matmul(a, q)
    total = p.op("nn.reduce_sum", [p.mul(y, y)], [1, c], "axes = array<i64: 0>, keepdims = true")
    norm = p.add(p.unary("sqrt", total), scalar_constant(p, 1e-6))
    p.ret(p.binary("div", y, norm))
    return p


def explained_variance(d: int, k: int) -> ProgramWriter:
    """``diag(q^T g q)`` as ``sum(q * (g @ q), 0)`` (fuse-explained-variance: 2 kernels)."""
    p = ProgramWriter("explained_variance")
    g, q = p.arg("g", [d, d]), p.arg("q", [d, k])
    p.ret(p.reduce_sum(p.mul(q, p.matmul(g, q)), [0]))
    return p


def bert_layer_ops(
    p: ProgramWriter, x: Value, mask: Value, prefix: str, hidden: int, heads: int, ffn: int
) -> Value:
    """One post-LN BERT encoder layer on ``x: [B, S, hidden]``; its weights become arguments."""

    def arg(name: str, shape: list[int]) -> Value:
        return p.arg(f"{prefix}{name}", shape, x.element)

    qkv = p.linear(x, arg("qkv_w", [hidden, 3 * hidden]), arg("qkv_b", [3 * hidden]))
    q, k, v = (p.narrow(qkv, 2, i * hidden, hidden) for i in range(3))
    ctx = p.attention(q, k, v, heads, mask=mask)
    attn = p.linear(ctx, arg("out_w", [hidden, hidden]), arg("out_b", [hidden]))
    h1 = p.layer_norm(p.add(attn, x), arg("ln1_g", [hidden]), arg("ln1_b", [hidden]))
    up = p.gelu(p.linear(h1, arg("fc1_w", [hidden, ffn]), arg("fc1_b", [ffn])))
    down = p.linear(up, arg("fc2_w", [ffn, hidden]), arg("fc2_b", [hidden]))
    return p.layer_norm(p.add(down, h1), arg("ln2_g", [hidden]), arg("ln2_b", [hidden]))


BERT_WEIGHTS = ("qkv_w", "qkv_b", "out_w", "out_b", "ln1_g", "ln1_b", "fc1_w", "fc1_b", "fc2_w",
                "fc2_b", "ln2_g", "ln2_b")
"""The weights of one `bert_layer_ops` layer (each name after its layer's prefix)."""


def bert_params(layers: int) -> tuple[str, ...]:
    """The weight inputs of a `bert` program of `layers` layers."""
    prefixes = [f"l{i}_" for i in range(layers)] if layers > 1 else [""]
    return tuple(prefix + name for prefix in prefixes for name in BERT_WEIGHTS)


def bert_inits(layers: int, hidden: int, ffn: int) -> dict[str, Init]:
    inits: dict[str, Init] = {"mask": MASK}
    for i in range(layers):
        prefix = f"l{i}_" if layers > 1 else ""
        inits |= {
            f"{prefix}qkv_w": weight(hidden), f"{prefix}out_w": weight(hidden),
            f"{prefix}fc1_w": weight(hidden), f"{prefix}fc2_w": weight(ffn),
            f"{prefix}ln1_g": GAMMA, f"{prefix}ln2_g": GAMMA,
            f"{prefix}qkv_b": Init(scale=0.1), f"{prefix}out_b": Init(scale=0.1),
            f"{prefix}fc1_b": Init(scale=0.1), f"{prefix}fc2_b": Init(scale=0.1),
            f"{prefix}ln1_b": Init(scale=0.1), f"{prefix}ln2_b": Init(scale=0.1),
        }
    return inits


def bert(batch: int, seq: int, layers: int = 1, hidden: int = 768, heads: int = 12,
         ffn: int = 3072, element: str = "f32") -> ProgramWriter:
    """``layers`` BERT-base encoder layers (post-LN, erf GELU, a ``[B, S]`` key mask); every
    input, weight and result of `element` (f16/bf16: f32 accumulation inside each op)."""
    p = ProgramWriter("bert" if element == "f32" else f"bert_{element}")
    x = p.arg("hidden", [batch, seq, hidden], element)
    mask = p.arg("mask", [batch, seq], element)
    for i in range(layers):
        prefix = f"l{i}_" if layers > 1 else ""
        x = bert_layer_ops(p, x, mask, prefix, hidden, heads, ffn)
    p.ret(x)
    return p


def llama(batch: int, seq: int, hidden: int = 768, heads: int = 12, ffn: int = 2048,
          element: str = "f32") -> ProgramWriter:
    """A Llama-style block: pre-RMSNorm causal attention (no biases, no rotary embedding) and a
    SwiGLU FFN whose gate and up projections are one packed ``[E, 2F]`` matmul; every input,
    weight and result of `element` (f16/bf16: f32 accumulation inside each op)."""
    p = ProgramWriter("llama" if element == "f32" else f"llama_{element}")
    x = p.arg("hidden", [batch, seq, hidden], element)
    h = p.rms_norm(x, p.arg("norm1_g", [hidden], element))
    qkv = p.matmul(h, p.arg("qkv_w", [hidden, 3 * hidden], element))
    q, k, v = (p.narrow(qkv, 2, i * hidden, hidden) for i in range(3))
    ctx = p.attention(q, k, v, heads, causal=True)
    r1 = p.add(x, p.matmul(ctx, p.arg("out_w", [hidden, hidden], element)))
    h2 = p.rms_norm(r1, p.arg("norm2_g", [hidden], element))
    gate_up = p.matmul(h2, p.arg("gate_up_w", [hidden, 2 * ffn], element))
    gate, up = p.narrow(gate_up, 2, 0, ffn), p.narrow(gate_up, 2, ffn, ffn)
    down = p.matmul(p.mul(p.silu(gate), up), p.arg("down_w", [ffn, hidden], element))
    p.ret(p.add(r1, down))
    return p


def llama_inits(hidden: int, ffn: int) -> dict[str, Init]:
    return {
        "qkv_w": weight(hidden), "out_w": weight(hidden), "gate_up_w": weight(hidden),
        "down_w": weight(ffn), "norm1_g": GAMMA, "norm2_g": GAMMA,
    }


LLAMA_INITS = llama_inits(768, 2048)


# --- the table -------------------------------------------------------------------------------

F16_LAYER_TOLERANCE = 5e-3
BF16_LAYER_TOLERANCE = 4e-2
"""``||out - ref|| / ||ref||`` accepted for a whole f16 / bf16 layer: the output's rounding
(f16 2^-11, bf16 2^-8) times the few ops whose roundings differ between runners (the
reference rounds each op's result, torch's fused kernels keep some in f32 and round others
inside, e.g. the attention probabilities)."""
HALF_LAYER_TOLERANCES = {"f16": F16_LAYER_TOLERANCE, "bf16": BF16_LAYER_TOLERANCE}



def _workload(
    group: str, name: str, summary: str, build: Callable[[], ProgramWriter], **kwargs: object
) -> Workload:
    return Workload(name=name, summary=summary, text=build().text(), group=group,
                    **kwargs)  # type: ignore[arg-type]


def all_workloads() -> list[Workload]:
    """Every workload, in table order (the text is built here: a few ms)."""
    m16 = 16 * MIB
    return [
        _workload("1", "elementwise", "relu((a+b)*c), 16M", lambda: elementwise_chain(m16)),
        _workload("2", "chain8", "8-op chain + bias, 4096x4096",
                  lambda: eight_op_chain(4096, 4096)),
        _workload("3", "residual_layernorm", "x+res -> LayerNorm, 512x768",
                  lambda: residual_norm("layer_norm", 512, 768), inits={"gamma": GAMMA}),
        _workload("3", "residual_rmsnorm", "x+res -> RMSNorm, 512x768",
                  lambda: residual_norm("rms_norm", 512, 768), inits={"gamma": GAMMA}),
        _workload("4", "softmax", "softmax rows, 6144x128", lambda: softmax_rows(6144, 128)),
        # A sum of 16M standard normals cancels: |sum| ~ 4e3 while sum|x| ~ 1.3e7, so float32
        # rounding of 1e-7 relative to sum|x| is ~3e-4 relative to the result.
        _workload("4", "sum", "sum of 16M", lambda: sum_all(m16), tolerance=2e-3),
        _workload("5", "matmul_bias_gelu", "gelu(x@w+b), 512x768x3072",
                  lambda: matmul_bias_gelu(512, 768, 3072), inits={"w": weight(768)},
                  params=("w", "b")),
        _workload("5", "sgemm1024", "SGEMM 1024^3", lambda: sgemm(1024, 1024, 1024)),
        _workload("5", "sgemm4096", "SGEMM 4096^3", lambda: sgemm(4096, 4096, 4096),
                  devices=("gpu",)),
        # 16-bit and TF32 products (tensor cores on NVIDIA): f32 accumulation, the result
        # rounded once; the tolerance is the output's rounding (bf16: 2^-9) plus TF32's.
        _workload("5", "hgemm1024", "GEMM 1024^3 f16", lambda: sgemm(1024, 1024, 1024, "f16"),
                  element="f16", tolerance=2e-3),
        _workload("5", "hgemm4096", "GEMM 4096^3 f16", lambda: sgemm(4096, 4096, 4096, "f16"),
                  element="f16", tolerance=2e-3, devices=("gpu",)),
        _workload("5", "bgemm4096", "GEMM 4096^3 bf16",
                  lambda: sgemm(4096, 4096, 4096, "bf16"), element="bf16", tolerance=8e-3,
                  devices=("gpu",)),
        _workload("5", "tf32gemm4096", "GEMM 4096^3 f32, TF32 allowed",
                  lambda: sgemm(4096, 4096, 4096), tf32=True, tolerance=2e-3,
                  devices=("gpu",)),
        _workload("6", "bert_b1", "BERT-base layer, B=1 S=128", lambda: bert(1, 128),
                  inits=bert_inits(1, 768, 3072), tolerance=1e-3, params=bert_params(1)),
        _workload("6", "bert_b32", "BERT-base layer, B=32 S=128", lambda: bert(32, 128),
                  inits=bert_inits(1, 768, 3072), tolerance=1e-3, devices=("gpu",),
                  params=bert_params(1)),
        # f16 layers: every input and weight f16, each op accumulating in f32 and rounding its
        # result to f16 once, as the reference does (torch runs them in f16, on CUDA with its
        # f16 kernels); the tolerance is a few f16 roundings of the output (2^-11) per op.
        _workload("6", "bert_b1_f16", "BERT-base layer f16, B=1 S=128",
                  lambda: bert(1, 128, element="f16"), inits=bert_inits(1, 768, 3072),
                  element="f16", tolerance=F16_LAYER_TOLERANCE, params=bert_params(1)),
        _workload("6", "bert_b32_f16", "BERT-base layer f16, B=32 S=128",
                  lambda: bert(32, 128, element="f16"), inits=bert_inits(1, 768, 3072),
                  element="f16", tolerance=F16_LAYER_TOLERANCE, devices=("gpu",),
                  params=bert_params(1)),
        _workload("6", "bert_b32_bf16", "BERT-base layer bf16, B=32 S=128",
                  lambda: bert(32, 128, element="bf16"), inits=bert_inits(1, 768, 3072),
                  element="bf16", tolerance=BF16_LAYER_TOLERANCE, devices=("gpu",),
                  params=bert_params(1)),
        _workload("7", "llama_b1", "Llama block, B=1 S=128", lambda: llama(1, 128),
                  inits=LLAMA_INITS, tolerance=1e-3, params=tuple(LLAMA_INITS)),
        _workload("7", "llama_b32", "Llama block, B=32 S=128", lambda: llama(32, 128),
                  inits=LLAMA_INITS, tolerance=1e-3, devices=("gpu",),
                  params=tuple(LLAMA_INITS)),
        _workload("7", "llama_b1_f16", "Llama block f16, B=1 S=128",
                  lambda: llama(1, 128, element="f16"), inits=LLAMA_INITS, element="f16",
                  tolerance=F16_LAYER_TOLERANCE, params=tuple(LLAMA_INITS)),
        _workload("7", "llama_b32_f16", "Llama block f16, B=32 S=128",
                  lambda: llama(32, 128, element="f16"), inits=LLAMA_INITS, element="f16",
                  tolerance=F16_LAYER_TOLERANCE, devices=("gpu",), params=tuple(LLAMA_INITS)),
        _workload("7", "llama_b32_bf16", "Llama block bf16, B=32 S=128",
                  lambda: llama(32, 128, element="bf16"), inits=LLAMA_INITS, element="bf16",
                  tolerance=BF16_LAYER_TOLERANCE, devices=("gpu",), params=tuple(LLAMA_INITS)),
        # Issue 13: numeric fusions written out in nn ops.
        _workload("13", "row_softmax", "exp(x-max)/sum(exp(x-max)), 6144x128",
                  lambda: row_softmax(6144, 128)),
        _workload("13", "row_layernorm", "LayerNorm written out, 512x768",
                  lambda: row_layernorm(512, 768),
                  inits={"eps": Init(scale=0.0, offset=1e-5), "gamma": GAMMA}),
        _workload("13", "multi_output", "t=a*b+c returned, tanh(t)*a, 2048x2048",
                  lambda: multi_output_chain(2048, 2048)),
        _workload("13", "gemm_epilogue", "clamp((1.5AB-0.5C)*r*c), 512x768x768",
                  lambda: gemm_epilogue(512, 768, 768),
                  inits={"b": weight(768), "alpha": Init(scale=0.0, offset=1.5),
                         "beta": Init(scale=0.0, offset=-0.5), "lo": Init(scale=0.0, offset=-2),
                         "hi": Init(scale=0.0, offset=2)}),
        _workload("13", "image_normalize", "per-channel normalize, gain, bias, clamp, 32x3x128x128",
                  lambda: image_normalize(32, 3, 128, 128),
                  inits={"x": Init(scale=2.0, offset=0.5), "gain": GAMMA}),
        _workload("13", "cast_chain", "f16 -> f32 gelu(x)*g -> f16, 4096x4096",
                  lambda: cast_chain(4096, 4096), element="f16", tolerance=2e-3),
        _workload("13", "centered_gram", "(x-mean)^T(x-mean)/(n-1), 4096x256",
                  lambda: centered_gram(4096, 256), tolerance=1e-3),
        _workload("13", "power_step", "a@q, columns / (norm + eps), 1024x1024x16",
                  lambda: power_step(1024, 1024, 16), inits={"a": weight(1024)}),
        _workload("13", "explained_variance", "diag(q^T g q), 1024x1024, k=16",
                  lambda: explained_variance(1024, 16), inits={"g": weight(1024)},
                  tolerance=1e-3),
        # Issue 14: 64 small kernels (-p none) as one launch and as 64.
        _workload("14", "launch_chain64", "64-op chain, 16x256, -p none: 1 launch",
                  lambda: launch_chain(64, 16, 256), pipeline="none"),
        _workload("14", "launch_chain64_unfused", "64-op chain, 16x256, -p none: 64 launches",
                  lambda: launch_chain(64, 16, 256), pipeline="none", launch_fusion=False),
    ]


def tiny_workloads() -> list[Workload]:
    """Small versions for the smoke test (``--workload tiny_*``): milliseconds each."""
    return [
        _workload("t", "tiny_elementwise", "relu((a+b)*c), 4K", lambda: elementwise_chain(4096)),
        _workload("t", "tiny_cast_chain", "f16 -> f32 gelu(x)*g -> f16, 64x64",
                  lambda: cast_chain(64, 64), element="f16", tolerance=2e-3),
        _workload("t", "tiny_bert", "BERT layer, hidden 64, 4 heads, S=8",
                  lambda: bert(1, 8, hidden=64, heads=4, ffn=128),
                  inits=bert_inits(1, 64, 128), tolerance=1e-3, params=bert_params(1)),
        *(_workload("t", f"tiny_bert_{element}", f"BERT layer {element}, hidden 64, 4 heads, S=8",
                    lambda element=element: bert(1, 8, hidden=64, heads=4, ffn=128,
                                                 element=element),
                    inits=bert_inits(1, 64, 128), element=element, tolerance=tolerance,
                    params=bert_params(1))
          for element, tolerance in HALF_LAYER_TOLERANCES.items()),
        *(_workload("t", f"tiny_llama_{element}", f"Llama block {element}, hidden 64, 4 heads, "
                    "S=8", lambda element=element: llama(1, 8, hidden=64, heads=4, ffn=96,
                                                         element=element),
                    inits=llama_inits(64, 96), element=element, tolerance=tolerance,
                    params=tuple(LLAMA_INITS))
          for element, tolerance in HALF_LAYER_TOLERANCES.items()),
    ]


def mixed_host_gpu(n: int, host_elements: int, logits: tuple[int, int]) -> ProgramWriter:
    """Large GPU work beside host-side work: ``x @ w`` (``n^3``), ``relu((a + b) * a)`` over
    host arrays of `host_elements` and a softmax of small `logits`, every result returned to
    the host. The matmul is worth its transfers on a GPU; the elementwise and softmax are not
    (their inputs and outputs live on the host), so a placement that splits them, running both
    devices at once, can beat either device alone (``fusec.bench.offload``)."""
    p = ProgramWriter("mixed_host_gpu")
    x, w = p.arg("x", [n, n]), p.arg("w", [n, n])
    a, b = p.arg("a", [host_elements]), p.arg("b", [host_elements])
    scores = p.arg("scores", list(logits))
    p.ret(p.matmul(x, w), p.relu(p.mul(p.add(a, b), a)), p.softmax(scores))
    return p


def offload_workloads() -> list[Workload]:
    """The workloads designed for CPU/GPU placement (``fusec.bench.offload``), not in the
    peers' table."""
    return [
        _workload("15", "mixed_host_gpu", "2048^3 matmul beside relu((a+b)*a) 4M and softmax "
                  "64x128", lambda: mixed_host_gpu(2048, 4 * MIB, (64, 128)),
                  inits={"w": weight(2048)}, tolerance=1e-4),
        _workload("t", "tiny_mixed_host_gpu", "64^3 matmul beside relu((a+b)*a) 4K and softmax "
                  "8x16", lambda: mixed_host_gpu(64, 4096, (8, 16)), inits={"w": weight(64)}),
    ]


def select(names: Sequence[str], device: str) -> list[Workload]:
    """The workloads for `device` whose name matches one of `names` (all if none is given).

    A name matches exactly or as a prefix (``bert`` selects ``bert_b1`` and ``bert_b32``);
    an unknown name raises ValueError listing the known ones.
    """
    table = all_workloads() + tiny_workloads()
    if not names:
        return [w for w in all_workloads() if device in w.devices]
    chosen: list[Workload] = []
    for name in names:
        hits = [w for w in table if w.name == name] or [
            w for w in table if w.name.startswith(name)]
        if not hits:
            known = ", ".join(w.name for w in table)
            raise ValueError(f"unknown workload '{name}' (known: {known}, overhead, compile)")
        chosen.extend(w for w in hits if device in w.devices and w not in chosen)
    return chosen
