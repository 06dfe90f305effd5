"""Stage 2, graph rewrites: `nn` IR in, the same program with `fused` ops out (and back).

Each file is one fusion or un-fusion pass, named after its CLI name (``fuse-matmul-bias-act`` in
``fuse_matmul_bias_act.py``); `GRAPH_PASSES` lists them for `fusec.compiler.registry`, which
imports each lazily. What they leave goes to `fusec.lowering`, next.
"""

from __future__ import annotations

# CLI name -> (module in fusec.passes, class name)
GRAPH_PASSES: dict[str, tuple[str, str]] = {
    "canonicalize-nn": ("canonicalize_nn", "CanonicalizeNnPass"),
    "clip-elementwise": ("clip_elementwise", "ClipElementwisePass"),
    "fuse-attention-block": ("fuse_attention_block", "FuseAttentionBlockPass"),
    "fuse-attention-cast": ("fuse_attention_cast", "FuseAttentionCastPass"),
    "fuse-centered-gram": ("fuse_centered_gram", "FuseCenteredGramPass"),
    "fuse-elementwise": ("fuse_elementwise", "FuseElementwisePass"),
    "fuse-explained-variance": ("fuse_explained_variance", "FuseExplainedVariancePass"),
    "fuse-image-normalize": ("fuse_image_normalize", "FuseImageNormalizePass"),
    "fuse-matmul-bias-act": ("fuse_matmul_bias_act", "FuseMatmulBiasActPass"),
    "fuse-matmul-epilogue": ("fuse_matmul_epilogue", "FuseMatmulEpiloguePass"),
    "fuse-multi-output": ("fuse_multi_output", "FuseMultiOutputPass"),
    "fuse-power-step-normalize": ("fuse_power_step_normalize", "FusePowerStepNormalizePass"),
    "fuse-reductions": ("fuse_reductions", "FuseReductionsPass"),
    "fuse-row-reduce": ("fuse_row_reduce", "FuseRowReducePass"),
    "fuse-residual-layer-norm": ("fuse_residual_layer_norm", "FuseResidualLayerNormPass"),
    "fuse-residual-rms-norm": ("fuse_residual_rms_norm", "FuseResidualRmsNormPass"),
    "fuse-rms-norm-reshape": ("fuse_rms_norm_reshape", "FuseRmsNormReshapePass"),
    "fuse-shared-input-matmul": ("fuse_shared_input_matmul", "FuseSharedInputMatmulPass"),
    "fuse-swiglu": ("fuse_swiglu", "FuseSwigluPass"),
    "fuse-swiglu-dual-matmul": ("fuse_swiglu_dual_matmul", "FuseSwigluDualMatmulPass"),
    "fuse-transformer-layer": ("fuse_transformer_layer", "FuseTransformerLayerPass"),
    "unfuse": ("unfuse", "UnfusePass"),
    "unfuse-elementwise": ("unfuse_elementwise", "UnfuseElementwisePass"),
}
