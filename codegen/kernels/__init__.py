"""Parameterised OpenCL C kernel templates for the ops whose kernels are intricate.

Each family has a module returning a `KernelSource` (complete C, parameters, launch geometry):
`gemm.gemm` (batched SGEMM with an epilogue applied in registers), `norm.layer_norm` (LayerNorm
and RMSNorm with an optional residual), `softmax.softmax`, and `attention.attention`. Shared types
live in `common`; `tuning.autotune_gemm` is an optional tile autotuner cached per device.

Import the template functions from their modules (``from fusec.codegen.kernels.gemm import
gemm``); this package does not re-export them, since a function named like its module would
hide the module.
"""
