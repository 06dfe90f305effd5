"""fusec's passes, by command-line name.

``get_all_passes()`` maps each name to a getter that imports the pass lazily, as
``xdsl.transforms.get_all_passes`` does, so that start-up does not import every pass. A fusec pass
lives in the file named after it (``fuse-matmul-bias-act`` in ``fuse_matmul_bias_act.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass

# CLI name -> (module in fusec.passes, class name)
_FUSEC_PASSES: dict[str, tuple[str, str]] = {
    "clip-elementwise": ("clip_elementwise", "ClipElementwisePass"),
    "fuse-attention-block": ("fuse_attention_block", "FuseAttentionBlockPass"),
    "fuse-elementwise": ("fuse_elementwise", "FuseElementwisePass"),
    "fuse-matmul-bias-act": ("fuse_matmul_bias_act", "FuseMatmulBiasActPass"),
    "fuse-reductions": ("fuse_reductions", "FuseReductionsPass"),
    "fuse-residual-layer-norm": ("fuse_residual_layer_norm", "FuseResidualLayerNormPass"),
    "fuse-residual-rms-norm": ("fuse_residual_rms_norm", "FuseResidualRmsNormPass"),
    "fuse-rms-norm-reshape": ("fuse_rms_norm_reshape", "FuseRmsNormReshapePass"),
    "fuse-shared-input-matmul": ("fuse_shared_input_matmul", "FuseSharedInputMatmulPass"),
    "fuse-swiglu": ("fuse_swiglu", "FuseSwigluPass"),
    "fuse-swiglu-dual-matmul": ("fuse_swiglu_dual_matmul", "FuseSwigluDualMatmulPass"),
    "fuse-transformer-layer": ("fuse_transformer_layer", "FuseTransformerLayerPass"),
    "lower-to-kernels": ("lower_to_kernels", "LowerToKernelsPass"),
    "plan-buffers": ("plan_buffers", "PlanBuffersPass"),
    "unfuse": ("unfuse", "UnfusePass"),
    "unfuse-elementwise": ("unfuse_elementwise", "UnfuseElementwisePass"),
}

# CLI name -> (module, class name) of the xDSL passes fusec reuses.
_XDSL_PASSES: dict[str, tuple[str, str]] = {
    "canonicalize": ("xdsl.transforms.canonicalize", "CanonicalizePass"),
    "cse": (
        "xdsl.transforms.common_subexpression_elimination",
        "CommonSubexpressionElimination",
    ),
    "dce": ("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
}

XDSL_SUMMARIES: dict[str, str] = {
    "canonicalize": "Applies the canonicalization patterns of every loaded dialect (xDSL).",
    "cse": "Common subexpression elimination (xDSL).",
    "dce": "Removes ops whose results are unused and that have no side effects (xDSL).",
}


def _getter(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def get() -> type[ModulePass]:
        return getattr(importlib.import_module(module), cls)

    return get


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass fusec-opt knows, by CLI name, in a stable (sorted) order."""
    table = {name: (f"fusec.passes.{mod}", cls) for name, (mod, cls) in _FUSEC_PASSES.items()}
    table.update(_XDSL_PASSES)
    return {name: _getter(*table[name]) for name in sorted(table)}
