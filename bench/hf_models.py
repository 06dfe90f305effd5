"""The Hugging Face decoders that `fusec.bench.decoder_peers` and its tests compare fusec with,
built from configurations with random weights (nothing is downloaded), and their greedy
generation.

`build_model` makes a ``GPT2LMHeadModel`` or ``LlamaForCausalLM`` at a size of `CONFIGS`:
``full`` is GPT-2 small (vocabulary 50257, width 768, 12 heads, 12 layers, 1024 positions) or
issue 30's Llama-style model (width 2048, 16 heads, 4 key/value heads, 4 layers, ffn 5632,
vocabulary 32000); ``tiny`` is the same architecture at width 32 for the CPU (vocabulary 96,
2 layers, 4 heads; Llama with 2 key/value heads). `spread_weights` replaces the library's
initialisation (``N(0, 0.02)``, unit gains, zero biases) so that every weight matters and the
logits are far apart: matrices ``N(0, 1/fan_in)``, an untied head 4 times that, gains
``1 + N(0, 0.1)``, biases ``N(0, 0.1)``. With the library's initialisation the best and second
logits of a random model are close enough that rounding alone may change the greedy token, and
zero biases would hide a bias mapped wrongly.

`greedy` is Hugging Face's own greedy ``generate`` (no end-of-sequence token: every sequence
gets ``steps`` tokens), with the logits of each step.
"""

from __future__ import annotations

from typing import Any

CONFIGS: dict[str, dict[str, dict[str, Any]]] = {
    "gpt2": {
        "full": {},
        "tiny": {"vocab_size": 96, "n_embd": 32, "n_head": 4, "n_layer": 2, "n_positions": 64},
    },
    "llama": {
        "full": {"vocab_size": 32000, "hidden_size": 2048, "num_attention_heads": 16,
                 "num_key_value_heads": 4, "num_hidden_layers": 4, "intermediate_size": 5632,
                 "max_position_embeddings": 2048},
        "tiny": {"vocab_size": 96, "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 64,
                 "max_position_embeddings": 64},
    },
}
"""Configuration arguments per model and size (on top of the library's defaults)."""


def build_model(kind: str, size: str = "tiny", seed: int = 0, **overrides: Any) -> Any:
    """The model (float32, on the CPU, in eval mode) with `spread_weights`; ``overrides`` go
    into its configuration."""
    import transformers

    config_class, model_class = {
        "gpt2": (transformers.GPT2Config, transformers.GPT2LMHeadModel),
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
    }[kind]
    config = config_class(**(CONFIGS[kind][size] | {"bos_token_id": None, "eos_token_id": None}
                             | overrides))
    model = model_class(config).eval()
    spread_weights(model, seed)
    model.generation_config.eos_token_id = None
    model.generation_config.bos_token_id = None
    model.generation_config.pad_token_id = 0
    return model


def spread_weights(model: Any, seed: int) -> None:
    """Every parameter of ``model`` drawn again (see the module docstring)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    head = model.get_output_embeddings()  # None for an encoder without a head (BertModel)
    tied = head is not None and head.weight is model.get_input_embeddings().weight
    with torch.no_grad():
        for module in model.modules():
            for name, parameter in module.named_parameters(recurse=False):
                noise = torch.randn(parameter.shape, generator=generator)
                if parameter.ndim == 1:
                    parameter.copy_((1.0 if name == "weight" else 0.0) + 0.1 * noise)
                    continue
                # nn.Linear and nn.Embedding hold [out, in] / [rows, width]; Conv1D [in, out].
                by_rows = isinstance(module, torch.nn.Linear | torch.nn.Embedding)
                fan_in = parameter.shape[1] if by_rows else parameter.shape[0]
                scale = 4.0 if module is head and not tied else 1.0
                parameter.copy_(noise * scale / fan_in ** 0.5)


def greedy(model: Any, prompt: Any, steps: int, **generate: Any) -> tuple[Any, Any]:
    """The ``[B, steps]`` tokens Hugging Face's greedy ``generate`` adds to ``prompt`` (a
    ``[B, S]`` tensor on the model's device) and the ``[B, steps, vocab]`` float32 logits they
    were chosen from; ``generate`` adds arguments (``cache_implementation``, ...)."""
    import torch

    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt),
                             max_new_tokens=steps, min_new_tokens=steps, do_sample=False,
                             return_dict_in_generate=True, output_logits=True, **generate)
    return out.sequences[:, prompt.shape[1]:], torch.stack(out.logits, dim=1).float()
