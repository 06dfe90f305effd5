"""Every GEMM kernel refuses an epilogue parameter named like a local of its body: a reserved
identifier, or one of its numbered registers (`common.check_epilogue_names`). Such a name
would shadow the kernel's own variable and compute with it silently."""

from __future__ import annotations

import pytest

from fusec.codegen.kernels import gemm_wgmma as wgmma
from fusec.codegen.kernels.common import Epilogue, KernelArg
from fusec.codegen.kernels.gemm import gemm
from fusec.codegen.kernels.gemm_ffma_pipelined import gemm_ffma_pipelined
from fusec.codegen.kernels.gemm_mma_pipelined import gemm_mma_pipelined


def named(param: str) -> Epilogue:
    return Epilogue(f"inline float ep(float acc, int row, int col, float {param}) "
                    f"{{ return acc + {param}; }}", "ep", (KernelArg(param, "float"),))


KERNELS = {
    "gemm": (lambda e: gemm("g", 1, 64, 64, 64, False, e), "c0_1",
             "the registers a<i>, b<j>, c<i>_<j>, a<i>k"),
    "gemm_mma_pipelined": (lambda e: gemm_mma_pipelined("g", 1, 64, 64, 64, False, e), "ar3",
                           "the kernel's copy, fragment or accumulator registers"),
    "gemm_ffma_pipelined": (lambda e: gemm_ffma_pipelined("g", 1, 64, 64, 64, False, e), "pb0_1_2",
                            "the kernel's copy, fragment or accumulator registers"),
    "gemm_wgmma": (lambda e: wgmma.gemm_wgmma("g", 128, 256, 64, "f16", epilogue=e), "d12",
                   "the accumulators d<i>"),
}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_an_epilogue_parameter_named_like_a_register_is_refused(kernel: str) -> None:
    build, register, described = KERNELS[kernel]
    assert "ep(" in build(named("gain")).source  # a free name is taken
    with pytest.raises(ValueError, match=f"epilogue parameter '{register}' is named like "
                       + described.replace("(", r"\(").replace(")", r"\)")):
        build(named(register))


def test_wgmma_why_not_names_the_clash() -> None:
    """The planner's test (`why_not`) refuses the same names, so the product keeps the
    mma.sync kernel instead of failing to build."""
    info = wgmma.DeviceInfo("H100", is_cpu=False, local_mem_size=49152,
                            max_work_group_size=1024, tensor_cores=("f16",), wgmma=True)
    for clash in ("d3", "lane"):
        assert wgmma.why_not(info, 1, 128, 256, 64, False, named(clash), "f16", False, "f16",
                             1) == "an epilogue parameter is named like a local of the kernel"
    assert wgmma.why_not(info, 1, 128, 256, 64, False, named("gain"), "f16", False, "f16",
                         1) is None
