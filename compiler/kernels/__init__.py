"""Parameterised OpenCL C kernel templates for the ops whose kernels are intricate.

Each family has a module returning a `KernelSource` (complete C, parameters, launch geometry):
`gemm.gemm` (batched SGEMM with an epilogue applied in registers), `norm.layer_norm` (LayerNorm
and RMSNorm with an optional residual), `softmax.softmax`, and `attention.attention`. Shared types
live in `common`; `tuning.autotune_gemm` is an optional tile autotuner cached per device.
"""

from fusec.compiler.kernels.attention import HeadsLayout, attention
from fusec.compiler.kernels.common import (
    IDENTITY_EPILOGUE,
    DeviceInfo,
    Epilogue,
    KernelArg,
    KernelSource,
)
from fusec.compiler.kernels.gemm import GemmTiles, default_gemm_tiles, gemm
from fusec.compiler.kernels.norm import layer_norm
from fusec.compiler.kernels.softmax import softmax

__all__ = [
    "IDENTITY_EPILOGUE",
    "DeviceInfo",
    "Epilogue",
    "GemmTiles",
    "HeadsLayout",
    "KernelArg",
    "KernelSource",
    "attention",
    "default_gemm_tiles",
    "gemm",
    "layer_norm",
    "softmax",
]
