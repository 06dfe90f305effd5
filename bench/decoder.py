"""A GPT-style decoder with a static KV cache in ``nn`` IR, and its greedy decoding speed:
``python -m fusec.bench.decoder [--write FILE] [--device gpu] [sizes...]``.

`decoder_ir` writes the two programs of `fusec.generate` (docs/generation.md) for any sizes:
``@prefill`` (the prompt) and ``@step`` (one token), pre-LN layers of grouped-query attention
over donated caches and a tanh-GELU MLP, learned positions, the greedy next token by
``nn.argmax``. ``examples/tiny_decoder.mlir`` is its output at the default sizes (``--write
examples/tiny_decoder.mlir``). Without ``--write`` it compiles both on ``--device`` with random
weights (`random_weights`), generates ``--steps`` tokens once to warm up, then times
``--repeats`` generations: tokens per second per sequence and in all (``batch`` sequences),
the prefill included, as the issue's measurement counts them.

A Llama-sized run (issue 30's GPU measurement; not run here, no GPU):
``--vocab 32000 --width 2048 --heads 16 --kv-heads 4 --layers 4 --ffn 5632 --batch 1
--prompt 128 --steps 512 --dtype f16 --device gpu``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fusec.dtypes import bf16_bits


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

    @property
    def head_dim(self) -> int:
        return self.width // self.heads


def tensor(*shape: int, element: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def weight_shapes(s: DecoderSizes) -> dict[str, tuple[int, ...]]:
    """The weights in argument order."""
    d, qkv = s.head_dim, (s.heads + 2 * s.kv_heads) * s.head_dim
    shapes: dict[str, tuple[int, ...]] = {"wte": (s.vocab, s.width), "wpe": (s.cache, s.width)}
    for i in range(s.layers):
        shapes |= {f"ln1_g{i}": (s.width,), f"ln1_b{i}": (s.width,),
                   f"wqkv{i}": (s.width, qkv), f"wo{i}": (s.heads * d, s.width),
                   f"ln2_g{i}": (s.width,), f"ln2_b{i}": (s.width,),
                   f"w1{i}": (s.width, s.ffn), f"w2{i}": (s.ffn, s.width)}
    return shapes | {"lnf_g": (s.width,), "lnf_b": (s.width,), "lm_head": (s.width, s.vocab)}


def function(s: DecoderSizes, name: str, seq: int) -> str:
    """``@name`` over ``seq`` new tokens."""
    e, d = s.dtype, s.head_dim
    qkv_width, kv_width = (s.heads + 2 * s.kv_heads) * d, s.kv_heads * d
    cache, x = tensor(s.batch, s.cache, kv_width, element=e), tensor(s.batch, seq, s.width, element=e)
    ints, pos = tensor(s.batch, seq, element="i32"), tensor(element="i32")
    args = [f"%tokens: {ints}", f"%pos: {pos}"]
    for i in range(s.layers):
        args += [f"%k_cache{i}: {cache} {{fusec.aliasing_output = {2 * i} : i64}}",
                 f"%v_cache{i}: {cache} {{fusec.aliasing_output = {2 * i + 1} : i64}}"]
    args += [f"%{n}: {tensor(*shape, element=e)}" for n, shape in weight_shapes(s).items()]
    results = [cache] * (2 * s.layers) + [tensor(s.batch, 1, element="i32"), pos]
    qkv, q = tensor(s.batch, seq, qkv_width, element=e), tensor(s.batch, seq, s.width, element=e)
    new, vec = tensor(s.batch, seq, kv_width, element=e), tensor(s.width, element=e)
    hidden = tensor(s.batch, seq, s.ffn, element=e)
    offsets = tensor(seq, element="i32")
    lines = [f"func.func @{name}(" + ",\n    ".join(args) + ")\n    -> ("
             + ", ".join(results) + ") {",
             f"  %offsets = nn.constant {{value = dense<[{', '.join(map(str, range(seq)))}]> : "
             f"{offsets}}} : {offsets}",
             f"  %positions = nn.add %pos, %offsets : {pos}, {offsets} -> {offsets}",
             f"  %tok_emb = nn.gather %wte, %tokens : {tensor(s.vocab, s.width, element=e)}, "
             f"{ints} -> {x}",
             f"  %pos_emb = nn.gather %wpe, %positions : {tensor(s.cache, s.width, element=e)}, "
             f"{offsets} -> {tensor(seq, s.width, element=e)}",
             f"  %x0 = nn.add %tok_emb, %pos_emb : {x}, {tensor(seq, s.width, element=e)} -> {x}"]
    attention = (f"{{num_heads = {s.heads} : i64, num_kv_heads = {s.kv_heads} : i64, "
                 f"head_dim = {d} : i64}}")
    for i in range(s.layers):
        lines += [
            f"  %h{i} = nn.layer_norm %x{i}, %ln1_g{i}, %ln1_b{i} : {x}, {vec}, {vec} -> {x}",
            f"  %qkv{i} = nn.matmul %h{i}, %wqkv{i} : {x}, "
            f"{tensor(s.width, qkv_width, element=e)} -> {qkv}",
            f"  %q{i} = nn.narrow %qkv{i} {{axis = 2 : i64, start = 0 : i64, length = {s.width} "
            f": i64}} : {qkv} -> {q}",
            f"  %k{i} = nn.narrow %qkv{i} {{axis = 2 : i64, start = {s.width} : i64, length = "
            f"{kv_width} : i64}} : {qkv} -> {new}",
            f"  %v{i} = nn.narrow %qkv{i} {{axis = 2 : i64, start = {s.width + kv_width} : i64, "
            f"length = {kv_width} : i64}} : {qkv} -> {new}",
            f"  %kc{i} = nn.cache_update %k_cache{i}, %k{i}, %pos : {cache}, {new}, {pos} -> "
            f"{cache}",
            f"  %vc{i} = nn.cache_update %v_cache{i}, %v{i}, %pos : {cache}, {new}, {pos} -> "
            f"{cache}",
            f"  %ctx{i} = nn.cache_attention %q{i}, %kc{i}, %vc{i}, %pos {attention} : {q}, "
            f"{cache}, {cache}, {pos} -> {q}",
            f"  %attn{i} = nn.matmul %ctx{i}, %wo{i} : {q}, "
            f"{tensor(s.width, s.width, element=e)} -> {x}",
            f"  %r{i} = nn.add %x{i}, %attn{i} : {x}, {x} -> {x}",
            f"  %g{i} = nn.layer_norm %r{i}, %ln2_g{i}, %ln2_b{i} : {x}, {vec}, {vec} -> {x}",
            f"  %up{i} = nn.matmul %g{i}, %w1{i} : {x}, {tensor(s.width, s.ffn, element=e)} -> "
            f"{hidden}",
            f"  %act{i} = nn.gelu %up{i} {{approximate = \"tanh\"}} : {hidden} -> {hidden}",
            f"  %down{i} = nn.matmul %act{i}, %w2{i} : {hidden}, "
            f"{tensor(s.ffn, s.width, element=e)} -> {x}",
            f"  %x{i + 1} = nn.add %r{i}, %down{i} : {x}, {x} -> {x}"]
    row = tensor(s.batch, 1, s.width, element=e)
    logits = tensor(s.batch, 1, s.vocab, element=e)
    caches = [f"%{kind}c{i}" for i in range(s.layers) for kind in ("k", "v")]
    lines += [
        f"  %last = nn.narrow %x{s.layers} {{axis = 1 : i64, start = {seq - 1} : i64, length = 1 "
        f": i64}} : {x} -> {row}",
        f"  %hf = nn.layer_norm %last, %lnf_g, %lnf_b : {row}, {vec}, {vec} -> {row}",
        f"  %logits = nn.matmul %hf, %lm_head : {row}, {tensor(s.width, s.vocab, element=e)} -> "
        f"{logits}",
        f"  %next = nn.argmax %logits : {logits} -> {tensor(s.batch, 1, element='i32')}",
        f"  %count = nn.constant {{value = dense<{seq}> : {pos}}} : {pos}",
        f"  %next_pos = nn.add %pos, %count : {pos}, {pos} -> {pos}",
        "  func.return " + ", ".join([*caches, "%next", "%next_pos"]) + " : " + ", ".join(results),
        "}"]
    return "\n".join(lines)


def decoder_ir(s: DecoderSizes) -> str:
    """Both programs, with a header saying what they are."""
    header = (
        "// A GPT-style decoder for text generation with a static KV cache (docs/generation.md),\n"
        f"// written by python -m fusec.bench.decoder: vocabulary {s.vocab}, width {s.width}, "
        f"{s.layers} pre-LN\n// layers of grouped-query attention ({s.heads} query heads, "
        f"{s.kv_heads} key/value heads of {s.head_dim}), a\n// tanh-GELU MLP of {s.ffn}, learned "
        f"positions, batch {s.batch}, a cache of {s.cache} positions per layer.\n"
        f"// @prefill reads a {s.prompt}-token prompt, @step one token; both write the new keys "
        "and values\n// at %pos into the donated caches (updated in place) and return the "
        "caches, the greedy\n// next token (nn.argmax on the device) and the next position: one "
        "compiled @step serves\n// every position. Weights are arguments, bound at compile time "
        "(tests/runtime/test_generation.py).\n")
    return header + function(s, "prefill", s.prompt) + "\n\n" + function(s, "step", 1) + "\n"


def random_weights(s: DecoderSizes, seed: int = 0) -> dict[str, np.ndarray]:
    """Weights in the host dtype of ``s.dtype``: matrices ``N(0, 1/rows)`` (the embedding and
    the head 4 times that, so that the logits are far apart), norms' gains near 1, biases near
    0."""
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in weight_shapes(s).items():
        if len(shape) == 2:
            scale = 4.0 if name in ("wte", "lm_head") else 1.0
            value = rng.standard_normal(shape) / np.sqrt(shape[0]) * scale
        else:
            value = (1.0 if "_g" in name else 0.0) + 0.1 * rng.standard_normal(shape)
        value = value.astype(np.float32)
        weights[name] = (bf16_bits(value) if s.dtype == "bf16"
                         else value.astype(np.float16) if s.dtype == "f16" else value)
    return weights


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fusec.bench.decoder",
                                     description=__doc__.splitlines()[0])
    defaults = DecoderSizes()
    for field in ("batch", "vocab", "width", "heads", "kv_heads", "layers", "cache", "ffn",
                  "prompt"):
        parser.add_argument(f"--{field.replace('_', '-')}", type=int,
                            default=getattr(defaults, field))
    parser.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="f32")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--write", metavar="FILE", help="write the IR and stop")
    args = parser.parse_args(argv)
    sizes = DecoderSizes(args.batch, args.vocab, args.width, args.heads, args.kv_heads,
                         args.layers, max(args.cache, args.prompt + args.steps), args.ffn,
                         args.prompt, args.dtype)
    text = decoder_ir(sizes)
    if args.write:
        with open(args.write, "w") as out:
            out.write(text)
        return
    import fusec

    weights = random_weights(sizes)
    prefill = fusec.compile(text, "prefill", device=args.device, params=weights)
    step = fusec.compile(text, "step", device=args.device, params=weights)
    prompt = np.random.default_rng(1).integers(0, sizes.vocab, (sizes.batch, sizes.prompt))
    prompt = prompt.astype(np.int32)
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


if __name__ == "__main__":
    main()
