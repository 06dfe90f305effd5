"""A GPT-2- or Llama-style decoder with a static KV cache in ``nn`` IR, and its greedy decoding
speed: ``python -m fusec.bench.decoder [--style gpt2|llama] [--write FILE] [--device gpu]
[sizes...]``.

`decoder_ir` writes the two programs of `fusec.generate` (docs/generation.md) for any sizes:
``@prefill`` (the prompt) and ``@step`` (one token), pre-norm layers of grouped-query attention
over donated caches and an MLP, the greedy next token by ``nn.argmax``. What the families do
differently is declared by a `DecoderStyle`: `GPT2` (LayerNorm, learned positions, tanh-GELU,
biases) or `LLAMA` (RMSNorm, rotary positions, SwiGLU, no biases); `fusec.bench.decoder_hf`
maps Hugging Face models onto them. ``examples/tiny_decoder.mlir`` is its output at the default
sizes (``--write examples/tiny_decoder.mlir``). Without ``--write`` it compiles both on
``--device`` with random weights (`random_weights`), generates ``--steps`` tokens once to warm
up, then times ``--repeats`` generations: tokens per second per sequence and in all (``batch``
sequences), the prefill included, as the issue's measurement counts them.

A Llama-sized run (issue 30's GPU measurement; not run here, no GPU): ``--style llama
--vocab 32000 --width 2048 --heads 16 --kv-heads 4 --layers 4 --ffn 5632 --batch 1
--prompt 128 --steps 512 --dtype f16 --device gpu``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fusec.dtypes import bf16_bits


@dataclass(frozen=True)
class DecoderStyle:
    """How a decoder family builds its layers: the one declared difference between a GPT-2 and
    a Llama in `decoder_ir` (the sizes are `DecoderSizes`)."""

    name: str
    norm: str
    """``layer_norm`` (a gain and a bias) or ``rms_norm`` (a gain)."""
    eps: float
    """The norms' epsilon."""
    positions: str
    """``learned`` (a table ``wpe`` added to the token embeddings) or ``rotary`` (q and k
    rotated by the ``rope_cos``/``rope_sin`` rows of their positions, HF's ``rotate_half``)."""
    mlp: str
    """``gelu`` (tanh GELU between two projections) or ``swiglu`` (``silu(gate) * up``, gate
    and up one ``[width, 2 ffn]`` projection, gate first)."""
    biases: bool
    """Whether every projection but the head adds a bias."""
    tied: bool = False
    """Whether the embedding table is the head's transposed (GPT-2's ``lm_head`` tied to
    ``wte``): then ``lm_head`` ``[width, vocab]`` alone is an argument, and a token's embedding
    is its column (``nn.gather`` along axis 1, transposed), so the table is held once."""
    rope_theta: float = 10000.0
    """The rotary base, for the tables `random_weights` makes (HF models give their own)."""


GPT2 = DecoderStyle("gpt2", norm="layer_norm", eps=1e-5, positions="learned", mlp="gelu",
                    biases=True)
LLAMA = DecoderStyle("llama", norm="rms_norm", eps=1e-6, positions="rotary", mlp="swiglu",
                     biases=False)
STYLES = {style.name: style for style in (GPT2, LLAMA)}


@dataclass(frozen=True)
class DecoderSizes:
    batch: int = 2
    vocab: int = 64
    width: int = 32
    heads: int = 4
    kv_heads: int = 2
    layers: int = 2
    cache: int = 48
    ffn: int = 64
    prompt: int = 8
    dtype: str = "f32"
    style: DecoderStyle = GPT2

    @property
    def head_dim(self) -> int:
        return self.width // self.heads


def tensor(*shape: int, element: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def weight_shapes(s: DecoderSizes) -> dict[str, tuple[int, ...]]:
    """The weights in argument order: matrices ``[in, out]``, norms' gains ``*_g`` and biases
    ``*_b``, ``b*`` of the projections."""
    d, qkv, c, style = s.head_dim, (s.heads + 2 * s.kv_heads) * s.head_dim, s.width, s.style
    shapes: dict[str, tuple[int, ...]] = {} if style.tied else {"wte": (s.vocab, c)}
    if style.positions == "learned":
        shapes["wpe"] = (s.cache, c)
    else:
        shapes |= {"rope_cos": (s.cache, d), "rope_sin": (s.cache, d)}
    up = 2 * s.ffn if style.mlp == "swiglu" else s.ffn

    def norm(name: str, layer: int | str = "") -> dict[str, tuple[int, ...]]:
        gain = {f"{name}_g{layer}": (c,)}
        return gain | {f"{name}_b{layer}": (c,)} if style.norm == "layer_norm" else gain

    def projection(name: str, bias: str, rows: int, cols: int) -> dict[str, tuple[int, ...]]:
        weight = {name: (rows, cols)}
        return weight | {bias: (cols,)} if style.biases else weight

    for i in range(s.layers):
        shapes |= (norm("ln1", i) | projection(f"wqkv{i}", f"bqkv{i}", c, qkv)
                   | projection(f"wo{i}", f"bo{i}", s.heads * d, c) | norm("ln2", i)
                   | projection(f"w1{i}", f"b1{i}", c, up)
                   | projection(f"w2{i}", f"b2{i}", s.ffn, c))
    return shapes | norm("lnf") | {"lm_head": (c, s.vocab)}
class FunctionWriter:
    """The ``nn`` ops of one function of `decoder_ir` over ``seq`` new tokens: one method per
    piece of the model, each appending its ops and returning the name of its result; the
    methods read `DecoderStyle` where the families differ."""

    def __init__(self, s: DecoderSizes, seq: int):
        self.s, self.seq = s, seq
        self.lines: list[str] = []

    def t(self, *shape: int) -> str:
        """A tensor of the model's element type."""
        return tensor(*shape, element=self.s.dtype)

    def op(self, result: str, text: str, types: str, result_type: str) -> str:
        self.lines.append(f"  %{result} = {text} : {types} -> {result_type}")
        return result

    def narrow(self, result: str, value: str, value_type: str, axis: int, start: int,
               length: int, result_type: str) -> str:
        return self.op(result, f"nn.narrow %{value} {{axis = {axis} : i64, start = {start} : "
                       f"i64, length = {length} : i64}}", value_type, result_type)

    def embeddings(self) -> str:
        """``%x0``, the token embeddings (plus the learned positions'); for rotary positions
        also ``%cos``/``%sin``, the tables' rows of the new tokens as ``[seq, 1, head_dim]``."""
        s, seq, x = self.s, self.seq, self.t(self.s.batch, self.seq, self.s.width)
        ints, pos, offsets = (tensor(s.batch, seq, element="i32"), tensor(element="i32"),
                              tensor(seq, element="i32"))
        values = ", ".join(map(str, range(seq)))
        self.lines.append(f"  %offsets = nn.constant {{value = dense<[{values}]> : {offsets}}} : "
                          f"{offsets}")
        self.op("positions", "nn.add %pos, %offsets", f"{pos}, {offsets}", offsets)
        if s.style.positions == "rotary":
            d = s.head_dim
            for name in ("cos", "sin"):
                self.op(f"{name}_rows", f"nn.gather %rope_{name}, %positions",
                        f"{self.t(s.cache, d)}, {offsets}", self.t(seq, d))
                self.op(name, f"nn.reshape %{name}_rows", self.t(seq, d), self.t(seq, 1, d))
            return self.token_embeddings("x0")
        self.token_embeddings("tok_emb")
        self.op("pos_emb", "nn.gather %wpe, %positions", f"{self.t(s.cache, s.width)}, {offsets}",
                self.t(seq, s.width))
        return self.op("x0", "nn.add %tok_emb, %pos_emb", f"{x}, {self.t(seq, s.width)}", x)

    def token_embeddings(self, result: str) -> str:
        """``[B, seq, width]``: the rows of ``wte``, or with a tied head the columns of
        ``lm_head``."""
        s, seq = self.s, self.seq
        ints, x = tensor(s.batch, seq, element="i32"), self.t(s.batch, seq, s.width)
        if not s.style.tied:
            return self.op(result, "nn.gather %wte, %tokens", f"{self.t(s.vocab, s.width)}, {ints}",
                           x)
        columns = self.t(s.width, s.batch, seq)
        self.op("columns", "nn.gather %lm_head, %tokens {axis = 1 : i64}",
                f"{self.t(s.width, s.vocab)}, {ints}", columns)
        return self.op(result, "nn.transpose %columns {perm = array<i64: 1, 2, 0>}", columns, x)

    def norm(self, result: str, value: str, value_type: str, gain: str, bias: str) -> str:
        s = self.s
        vec, eps = self.t(s.width), f"{{eps = {s.style.eps:.6e} : f32}}"
        if s.style.norm == "rms_norm":
            return self.op(result, f"nn.rms_norm %{value}, %{gain} {eps}", f"{value_type}, {vec}",
                           value_type)
        return self.op(result, f"nn.layer_norm %{value}, %{gain}, %{bias} {eps}",
                       f"{value_type}, {vec}, {vec}", value_type)

    def projection(self, result: str, value: str, rows: int, cols: int, weight: str,
                   bias: str) -> str:
        """``value [B, seq, rows] @ weight [rows, cols]`` (plus the bias, if the style has)."""
        s, seq = self.s, self.seq
        into, out = self.t(s.batch, seq, rows), self.t(s.batch, seq, cols)
        product = f"{result}_w" if s.style.biases else result
        self.op(product, f"nn.matmul %{value}, %{weight}", f"{into}, {self.t(rows, cols)}", out)
        if not s.style.biases:
            return result
        return self.op(result, f"nn.add %{product}, %{bias}", f"{out}, {self.t(cols)}", out)

    def rotary(self, i: int, qkv: str) -> tuple[str, str]:
        """q and k of ``qkv`` rotated (HF's ``x * cos + rotate_half(x) * sin``, ``rotate_half(x)
        = concat(-x[D/2:], x[:D/2])``), as one region over ``[B, seq, H + KV, D]`` that
        ``fuse-elementwise`` makes one kernel."""
        s, seq, d = self.s, self.seq, self.s.head_dim
        heads, half = s.heads + s.kv_heads, d // 2
        flat, split = self.t(s.batch, seq, heads * d), self.t(s.batch, seq, heads, d)
        halves, table = self.t(s.batch, seq, heads, half), self.t(seq, 1, d)
        self.narrow(f"qk{i}", qkv, self.t(s.batch, seq, (heads + s.kv_heads) * d), 2, 0,
                    heads * d, flat)
        self.op(f"heads{i}", f"nn.reshape %qk{i}", flat, split)
        self.narrow(f"lo{i}", f"heads{i}", split, 3, 0, half, halves)
        self.narrow(f"hi{i}", f"heads{i}", split, 3, half, half, halves)
        self.op(f"neg{i}", f"nn.neg %hi{i}", halves, halves)
        self.op(f"rot{i}", f"nn.concat %neg{i}, %lo{i} {{axis = 3 : i64}}",
                f"({halves}, {halves})", split)
        self.op(f"qk_cos{i}", f"nn.mul %heads{i}, %cos", f"{split}, {table}", split)
        self.op(f"rot_sin{i}", f"nn.mul %rot{i}, %sin", f"{split}, {table}", split)
        self.op(f"turned{i}", f"nn.add %qk_cos{i}, %rot_sin{i}", f"{split}, {split}", split)
        self.op(f"qk_rot{i}", f"nn.reshape %turned{i}", split, flat)
        q = self.narrow(f"q{i}", f"qk_rot{i}", flat, 2, 0, s.width, self.t(s.batch, seq, s.width))
        k = self.narrow(f"k{i}", f"qk_rot{i}", flat, 2, s.width, s.kv_heads * d,
                        self.t(s.batch, seq, s.kv_heads * d))
        return q, k

    def attention(self, i: int, h: str) -> str:
        """The attention block's output (before the residual); writes ``%kc{i}``/``%vc{i}``,
        the updated caches."""
        s, seq, d = self.s, self.seq, self.s.head_dim
        kv_width, qkv_width = s.kv_heads * d, (s.heads + 2 * s.kv_heads) * d
        qkv, q_type = self.t(s.batch, seq, qkv_width), self.t(s.batch, seq, s.width)
        new, cache = self.t(s.batch, seq, kv_width), self.t(s.batch, s.cache, kv_width)
        pos = tensor(element="i32")
        self.projection(f"qkv{i}", h, s.width, qkv_width, f"wqkv{i}", f"bqkv{i}")
        if s.style.positions == "rotary":
            q, k = self.rotary(i, f"qkv{i}")
        else:
            q = self.narrow(f"q{i}", f"qkv{i}", qkv, 2, 0, s.width, q_type)
            k = self.narrow(f"k{i}", f"qkv{i}", qkv, 2, s.width, kv_width, new)
        v = self.narrow(f"v{i}", f"qkv{i}", qkv, 2, s.width + kv_width, kv_width, new)
        self.op(f"kc{i}", f"nn.cache_update %k_cache{i}, %{k}, %pos", f"{cache}, {new}, {pos}",
                cache)
        self.op(f"vc{i}", f"nn.cache_update %v_cache{i}, %{v}, %pos", f"{cache}, {new}, {pos}",
                cache)
        heads = (f"{{num_heads = {s.heads} : i64, num_kv_heads = {s.kv_heads} : i64, "
                 f"head_dim = {d} : i64}}")
        self.op(f"ctx{i}", f"nn.cache_attention %{q}, %kc{i}, %vc{i}, %pos {heads}",
                f"{q_type}, {cache}, {cache}, {pos}", q_type)
        return self.projection(f"attn{i}", f"ctx{i}", s.width, s.width, f"wo{i}", f"bo{i}")

    def mlp(self, i: int, g: str) -> str:
        s, seq, f = self.s, self.seq, self.s.ffn
        hidden = self.t(s.batch, seq, f)
        if s.style.mlp == "swiglu":
            both = self.t(s.batch, seq, 2 * f)
            self.projection(f"up{i}", g, s.width, 2 * f, f"w1{i}", f"b1{i}")
            self.narrow(f"gate{i}", f"up{i}", both, 2, 0, f, hidden)
            self.narrow(f"lin{i}", f"up{i}", both, 2, f, f, hidden)
            self.op(f"silu{i}", f"nn.silu %gate{i}", hidden, hidden)
            self.op(f"act{i}", f"nn.mul %silu{i}, %lin{i}", f"{hidden}, {hidden}", hidden)
        else:
            self.projection(f"up{i}", g, s.width, f, f"w1{i}", f"b1{i}")
            self.op(f"act{i}", f"nn.gelu %up{i} {{approximate = \"tanh\"}}", hidden, hidden)
        return self.projection(f"down{i}", f"act{i}", f, s.width, f"w2{i}", f"b2{i}")

    def layer(self, i: int) -> str:
        """``%x{i + 1}``: pre-norm attention and MLP, each added to the residual."""
        x = self.t(self.s.batch, self.seq, self.s.width)
        h = self.norm(f"h{i}", f"x{i}", x, f"ln1_g{i}", f"ln1_b{i}")
        self.op(f"r{i}", f"nn.add %x{i}, %{self.attention(i, h)}", f"{x}, {x}", x)
        g = self.norm(f"g{i}", f"r{i}", x, f"ln2_g{i}", f"ln2_b{i}")
        return self.op(f"x{i + 1}", f"nn.add %r{i}, %{self.mlp(i, g)}", f"{x}, {x}", x)

    def logits(self, x: str, rows: int) -> str:
        """``%logits``, ``[B, rows, vocab]``: the head over the last ``rows`` new positions."""
        s, seq = self.s, self.seq
        tail, logits = self.t(s.batch, rows, s.width), self.t(s.batch, rows, s.vocab)
        if rows < seq:
            x = self.narrow("last", x, self.t(s.batch, seq, s.width), 1, seq - rows, rows, tail)
        self.norm("hf", x, tail, "lnf_g", "lnf_b")
        return self.op("logits", "nn.matmul %hf, %lm_head", f"{tail}, {self.t(s.width, s.vocab)}",
                       logits)

    def head(self, x: str) -> str:
        """The greedy next token of the last new position: ``%next``."""
        logits = self.t(self.s.batch, 1, self.s.vocab)
        self.logits(x, 1)
        return self.op("next", "nn.argmax %logits", logits,
                       tensor(self.s.batch, 1, element="i32"))


def function(s: DecoderSizes, name: str, seq: int, scores: bool = False) -> str:
    """``@name`` over ``seq`` new tokens; with ``scores`` it returns every new position's logits
    ``[B, seq, vocab]`` after the caches, instead of the next token and position (what a check
    of the logits against another implementation reads)."""
    kv_width = s.kv_heads * s.head_dim
    cache, pos = tensor(s.batch, s.cache, kv_width, element=s.dtype), tensor(element="i32")
    args = [f"%tokens: {tensor(s.batch, seq, element='i32')}", f"%pos: {pos}"]
    for i in range(s.layers):
        args += [f"%k_cache{i}: {cache} {{fusec.aliasing_output = {2 * i} : i64}}",
                 f"%v_cache{i}: {cache} {{fusec.aliasing_output = {2 * i + 1} : i64}}"]
    args += [f"%{n}: {tensor(*shape, element=s.dtype)}" for n, shape in weight_shapes(s).items()]
    caches = [f"%{kind}c{i}" for i in range(s.layers) for kind in ("k", "v")]
    writer = FunctionWriter(s, seq)
    x = writer.embeddings()
    for i in range(s.layers):
        x = writer.layer(i)
    if scores:
        writer.logits(x, seq)
        values, results = [*caches, "%logits"], [cache] * (2 * s.layers) + [
            tensor(s.batch, seq, s.vocab, element=s.dtype)]
    else:
        writer.head(x)
        writer.lines.append(f"  %count = nn.constant {{value = dense<{seq}> : {pos}}} : {pos}")
        writer.op("next_pos", "nn.add %pos, %count", f"{pos}, {pos}", pos)
        values = [*caches, "%next", "%next_pos"]
        results = [cache] * (2 * s.layers) + [tensor(s.batch, 1, element="i32"), pos]
    return "\n".join([
        f"func.func @{name}(" + ",\n    ".join(args) + ")\n    -> (" + ", ".join(results) + ") {",
        *writer.lines,
        "  func.return " + ", ".join(values) + " : " + ", ".join(results),
        "}"])


DESCRIPTIONS = {
    "gpt2": ("A GPT-style decoder", "pre-LN", "tanh-GELU MLP of {ffn}, learned positions, "
             "biases"),
    "llama": ("A Llama-style decoder", "pre-RMSNorm", "SwiGLU MLP of {ffn}, rotary positions, "
              "no biases"),
}


def decoder_ir(s: DecoderSizes) -> str:
    """Both programs, with a header saying what they are."""
    what, norm, rest = DESCRIPTIONS[s.style.name]
    header = (
        f"// {what} for text generation with a static KV cache (docs/generation.md),\n"
        f"// written by python -m fusec.bench.decoder: vocabulary {s.vocab}, width {s.width}, "
        f"{s.layers} {norm}\n// layers of grouped-query attention ({s.heads} query heads, "
        f"{s.kv_heads} key/value heads of {s.head_dim}), a\n// {rest.format(ffn=s.ffn)}, "
        f"batch {s.batch}, a cache of {s.cache} positions per layer.\n"
        f"// @prefill reads a {s.prompt}-token prompt, @step one token; both write the new keys "
        "and values\n// at %pos into the donated caches (updated in place) and return the "
        "caches, the greedy\n// next token (nn.argmax on the device) and the next position: one "
        "compiled @step serves\n// every position. Weights are arguments, bound at compile time "
        "(tests/runtime/test_generation.py).\n")
    return header + function(s, "prefill", s.prompt) + "\n\n" + function(s, "step", 1) + "\n"


def rotary_tables(positions: int, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` ``[positions, head_dim]`` in float32, computed as Hugging Face's
    default rotary embedding computes them (float32 frequencies, each repeated in both
    halves)."""
    exponents = np.arange(0, head_dim, 2, dtype=np.float32) / np.float32(head_dim)
    inverse = (np.float32(1.0) / np.float32(theta) ** exponents).astype(np.float32)
    angles = np.arange(positions, dtype=np.float32)[:, None] * inverse[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles), np.sin(angles)


def host_dtype(value: np.ndarray, dtype: str) -> np.ndarray:
    """A float32 array in the host representation of ``dtype`` (bf16 as its bits)."""
    value = value.astype(np.float32)
    return (bf16_bits(value) if dtype == "bf16"
            else value.astype(np.float16) if dtype == "f16" else value)


def random_weights(s: DecoderSizes, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights in the host dtype of ``s.dtype``: matrices ``N(0, 1/rows)`` (the embedding and
    the head 4 times that, so that the logits are far apart), norms' gains near 1, biases near
    0; the rotary tables those of `rotary_tables`."""
    rng = np.random.default_rng(seed)
    weights = {}
    if s.style.positions == "rotary":
        cos, sin = rotary_tables(s.cache, s.head_dim, s.style.rope_theta)
        weights = {"rope_cos": host_dtype(cos, s.dtype), "rope_sin": host_dtype(sin, s.dtype)}
    for name, shape in weight_shapes(s).items():
        if name in weights:
            continue
        if len(shape) == 2:
            scale = 4.0 if name in ("wte", "lm_head") else 1.0
            value = rng.standard_normal(shape) / np.sqrt(shape[0]) * scale
        else:
            value = (1.0 if "_g" in name else 0.0) + 0.1 * rng.standard_normal(shape)
        weights[name] = host_dtype(value, s.dtype)
    return {name: weights[name] for name in weight_shapes(s)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fusec.bench.decoder",
                                     description=__doc__.splitlines()[0])
    defaults = DecoderSizes()
    for field in ("batch", "vocab", "width", "heads", "kv_heads", "layers", "cache", "ffn",
                  "prompt"):
        parser.add_argument(f"--{field.replace('_', '-')}", type=int,
                            default=getattr(defaults, field))
    parser.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="f32")
    parser.add_argument("--style", choices=tuple(STYLES), default=defaults.style.name)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--write", metavar="FILE", help="write the IR and stop")
    parser.add_argument("--write-inputs", metavar="FILE.npz",
                        help="with --write: also write random weights (seed 0) and a random "
                        "prompt ('tokens', seed 1), what fusec-run --generate takes")
    parser.add_argument("--profile", action="store_true",
                        help="also time one step call: wall time (waited), enqueue time (not "
                        "waited) and each kernel's device time (median of --repeats)")
    args = parser.parse_args(argv)
    sizes = DecoderSizes(args.batch, args.vocab, args.width, args.heads, args.kv_heads,
                         args.layers, max(args.cache, args.prompt + args.steps), args.ffn,
                         args.prompt, args.dtype, STYLES[args.style])
    text = decoder_ir(sizes)
    if args.write_inputs and not args.write:
        parser.error("--write-inputs goes with --write")
    weights = random_weights(sizes)
    prompt = np.random.default_rng(1).integers(0, sizes.vocab, (sizes.batch, sizes.prompt))
    prompt = prompt.astype(np.int32)
    if args.write:
        with open(args.write, "w") as out:
            out.write(text)
        if args.write_inputs:
            np.savez(args.write_inputs, tokens=prompt, **weights)
        return
    import fusec

    prefill = fusec.compile(text, "prefill", device=args.device, params=weights)
    step = fusec.compile(text, "step", device=args.device, params=weights, share_weights=prefill)
    fusec.generate(prefill, step, prompt, args.steps)
    seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        fusec.generate(prefill, step, prompt, args.steps)
        seconds.append(time.perf_counter() - start)
    best = min(seconds)
    print(f"{step.device.description}: {sizes}")
    print(f"{args.steps} tokens x {sizes.batch} sequences in {best * 1e3:.1f} ms (best of "
          f"{args.repeats}): {args.steps / best:.0f} tokens/s per sequence, "
          f"{args.steps * sizes.batch / best:.0f} in all; {len(step.plan.launches)} launches "
          "per step")
    if args.profile:
        profile_step(step, prefill, prompt, args.repeats)


def profile_step(step: Any, prefill: Any, prompt: np.ndarray, repeats: int) -> None:
    """One step's wall time (waited for), the host time to enqueue it (not waited for), and
    each launch's device time, medians of `repeats` calls at the position after the prompt."""
    from fusec.runtime.generation import decode_signature

    signature = decode_signature(prefill, "prefill")
    then = decode_signature(step, "step")
    specs = {p.spec.name: p.spec for p in step.call_inputs}
    values = {name: step.to_device(np.zeros(specs[name].shape, specs[name].dtype))
              for name in then.caches}
    values["tokens"] = step.to_device(np.ascontiguousarray(prompt, np.int32))
    values["pos"] = step.to_device(np.zeros((), np.int32))
    outputs = prefill(*(values[name] for name in signature.inputs))
    values["tokens"] = outputs[signature.token]
    values["pos"] = outputs[signature.position]
    args = [values[name] for name in then.inputs]
    for _ in range(3):
        step(*args)
    step.synchronize()
    walls, enqueues = [], []
    for _ in range(max(repeats, 5)):
        start = time.perf_counter()
        step(*args)
        enqueued = time.perf_counter()
        step.synchronize()
        walls.append((time.perf_counter() - start) * 1e3)
        enqueues.append((enqueued - start) * 1e3)
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(max(repeats, 5)):
        for i, kernel in enumerate(step.profile(*args)[1].kernels):
            times.setdefault((i, kernel.kernel), []).append(kernel.seconds * 1e3)
    medians = {key: statistics.median(v) for key, v in times.items()}
    print(f"step: wall {statistics.median(walls):.4f} ms, enqueue {statistics.median(enqueues):.4f}"
          f" ms, kernels {sum(medians.values()):.4f} ms in {len(medians)} launches")
    kinds: dict[str, list[float]] = {}
    for (_, kernel), ms in medians.items():
        kinds.setdefault(re.sub(r"_\d+$", "", kernel), []).append(ms)
    print("  by kernel: " + "; ".join(
        f"{kind} {len(v)}x {sum(v):.4f} ms" for kind, v in
        sorted(kinds.items(), key=lambda item: -sum(item[1]))))
    sizes = [(launch.global_size, launch.local_size) for launch in step.plan.launches]
    for (i, kernel), ms in sorted(medians.items(), key=lambda item: -item[1])[:25]:
        print(f"  {i:03d} {ms:8.4f} ms  {kernel}  global {sizes[i][0]} local {sizes[i][1]}")


if __name__ == "__main__":
    main()
