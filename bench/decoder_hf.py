"""fusec's decoder (`fusec.bench.decoder`) with the sizes and weights of a Hugging Face model:
``decoder_from_hf(model, batch, prompt, cache)`` for a ``GPT2LMHeadModel`` (style `GPT2`) or a
``LlamaForCausalLM`` (style `LLAMA`), any configuration of the architecture those styles
express; anything else is refused with one line (`UnsupportedModel`) naming what differs.

The mapping, from the models' code (transformers 4.x and 5.x name these modules alike):

- GPT-2: ``Conv1D`` weights are already ``[in, out]``, as fusec's ``nn.matmul`` takes them;
  ``c_attn`` packs q, k and v in that order, as ``wqkv``; every projection has a bias; the
  learned positions are ``wpe``'s first ``cache`` rows; the head is ``lm_head.weight``
  transposed (tied to ``wte`` in GPT-2: fusec holds it twice, once per layout); its GELU
  (``gelu_new``) is the tanh form; the norms' epsilon is ``layer_norm_epsilon``.
- Llama: ``nn.Linear`` weights are ``[out, in]``, so every one is transposed; ``wqkv`` is
  ``[q | k | v]`` and ``w1`` ``[gate | up]`` side by side; no biases; the rotary tables are the
  model's own rotary embedding module evaluated at positions ``0 .. cache - 1`` (so its
  ``rope_theta`` and rope scaling are its own), rounded to the model's dtype as the model
  rounds them; the norms' epsilon is ``rms_norm_eps``.

Weights come back in the host representation of ``dtype`` (`fusec.bench.decoder.host_dtype`),
converted from whatever dtype the model holds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from fusec.bench.decoder import GPT2, LLAMA, DecoderSizes, host_dtype

TANH_GELUS = ("gelu_new", "gelu_pytorch_tanh")
"""GPT-2 activations that are the tanh form of GELU (`nn.gelu {approximate = "tanh"}`)."""


class UnsupportedModel(ValueError):
    """A model or configuration this mapping does not express; the message says what."""


def decoder_from_hf(model: Any, batch: int, prompt: int, cache: int,
                    dtype: str = "f32") -> tuple[DecoderSizes, dict[str, np.ndarray]]:
    """The decoder sizes and weights (by argument name) of ``model`` for ``batch`` sequences of
    ``prompt`` tokens and a cache of ``cache`` positions."""
    kind = getattr(model.config, "model_type", type(model).__name__)
    if kind == "gpt2":
        return gpt2_decoder(model, batch, prompt, cache, dtype)
    if kind == "llama":
        return llama_decoder(model, batch, prompt, cache, dtype)
    raise UnsupportedModel(f"no decoder style for a '{kind}' model (gpt2 and llama are mapped)")


def host(tensor: Any, dtype: str, transpose: bool = False) -> np.ndarray:
    """A torch tensor as a host array of ``dtype`` (``transpose``: of a 2-D one, transposed)."""
    value = tensor.detach().float().cpu().numpy()
    return host_dtype(np.ascontiguousarray(value.T if transpose else value), dtype)


def require(condition: bool, what: str) -> None:
    if not condition:
        raise UnsupportedModel(what)


def gpt2_decoder(model: Any, batch: int, prompt: int, cache: int,
                 dtype: str) -> tuple[DecoderSizes, dict[str, np.ndarray]]:
    config = model.config
    activation = config.activation_function
    require(activation in TANH_GELUS,
            f"GPT-2 activation '{activation}' is not a tanh GELU ({', '.join(TANH_GELUS)})")
    require(bool(config.scale_attn_weights) and not config.scale_attn_by_inverse_layer_idx,
            "GPT-2 attention must be scaled by 1/sqrt(head_dim) alone")
    require(cache <= config.n_positions,
            f"a cache of {cache} positions is longer than GPT-2's {config.n_positions}")
    width = config.n_embd
    sizes = DecoderSizes(batch=batch, vocab=config.vocab_size, width=width,
                         heads=config.n_head, kv_heads=config.n_head, layers=config.n_layer,
                         cache=cache, ffn=config.n_inner or 4 * width, prompt=prompt,
                         dtype=dtype, style=replace(GPT2, eps=float(config.layer_norm_epsilon)))
    body = model.transformer
    weights = {"wte": host(body.wte.weight, dtype), "wpe": host(body.wpe.weight[:cache], dtype)}
    for i, block in enumerate(body.h):
        weights |= {
            f"ln1_g{i}": host(block.ln_1.weight, dtype), f"ln1_b{i}": host(block.ln_1.bias, dtype),
            f"wqkv{i}": host(block.attn.c_attn.weight, dtype),
            f"bqkv{i}": host(block.attn.c_attn.bias, dtype),
            f"wo{i}": host(block.attn.c_proj.weight, dtype),
            f"bo{i}": host(block.attn.c_proj.bias, dtype),
            f"ln2_g{i}": host(block.ln_2.weight, dtype), f"ln2_b{i}": host(block.ln_2.bias, dtype),
            f"w1{i}": host(block.mlp.c_fc.weight, dtype),
            f"b1{i}": host(block.mlp.c_fc.bias, dtype),
            f"w2{i}": host(block.mlp.c_proj.weight, dtype),
            f"b2{i}": host(block.mlp.c_proj.bias, dtype)}
    weights |= {"lnf_g": host(body.ln_f.weight, dtype), "lnf_b": host(body.ln_f.bias, dtype),
                "lm_head": host(model.lm_head.weight, dtype, transpose=True)}
    return sizes, weights


def llama_decoder(model: Any, batch: int, prompt: int, cache: int,
                  dtype: str) -> tuple[DecoderSizes, dict[str, np.ndarray]]:
    config = model.config
    width, heads = config.hidden_size, config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or width // heads
    require(head_dim * heads == width,
            f"Llama head_dim {head_dim} x {heads} heads is not the width {width}")
    require(config.hidden_act == "silu", f"Llama activation '{config.hidden_act}' is not silu")
    require(not getattr(config, "attention_bias", False) and not getattr(config, "mlp_bias", False),
            "Llama projections with biases are not mapped")
    kv_heads = config.num_key_value_heads or heads
    sizes = DecoderSizes(batch=batch, vocab=config.vocab_size, width=width, heads=heads,
                         kv_heads=kv_heads, layers=config.num_hidden_layers, cache=cache,
                         ffn=config.intermediate_size, prompt=prompt, dtype=dtype,
                         style=replace(LLAMA, eps=float(config.rms_norm_eps)))
    body = model.model
    cos, sin = rotary_rows(model, cache)
    weights = {"wte": host(body.embed_tokens.weight, dtype), "rope_cos": host_dtype(cos, dtype),
               "rope_sin": host_dtype(sin, dtype)}
    for i, layer in enumerate(body.layers):
        attn, mlp = layer.self_attn, layer.mlp
        weights |= {
            f"ln1_g{i}": host(layer.input_layernorm.weight, dtype),
            f"wqkv{i}": np.concatenate([host(p.weight, dtype, transpose=True)
                                        for p in (attn.q_proj, attn.k_proj, attn.v_proj)], axis=1),
            f"wo{i}": host(attn.o_proj.weight, dtype, transpose=True),
            f"ln2_g{i}": host(layer.post_attention_layernorm.weight, dtype),
            f"w1{i}": np.concatenate([host(p.weight, dtype, transpose=True)
                                      for p in (mlp.gate_proj, mlp.up_proj)], axis=1),
            f"w2{i}": host(mlp.down_proj.weight, dtype, transpose=True)}
    weights |= {"lnf_g": host(body.norm.weight, dtype),
                "lm_head": host(model.lm_head.weight, dtype, transpose=True)}
    return sizes, weights


def rotary_rows(model: Any, cache: int) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` ``[cache, head_dim]`` (float32) from the model's rotary embedding
    module at positions ``0 .. cache - 1``."""
    import torch

    rotary = getattr(model.model, "rotary_emb", None)
    require(rotary is not None, "this Llama has no model-level rotary_emb (transformers < 4.45)")
    probe = torch.zeros(1, dtype=torch.float32, device=model.device)
    positions = torch.arange(cache, device=model.device)[None, :]
    with torch.no_grad():
        cos, sin = rotary(probe, positions)
    return cos[0].float().cpu().numpy(), sin[0].float().cpu().numpy()
