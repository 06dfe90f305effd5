"""The wgmma GEMM probe's text functions, on the CPU: variant parsing, and the PTX patch
against the PTX that NVIDIA's OpenCL compiler wrote for three variants on the H200
(tests/codegen/h200_ptx/), whose patched texts ran correctly there (their SHA-256:
`tests/codegen/test_ptx_patch.RAN_SHA256`)."""

from pathlib import Path

import pytest

from fusec.bench.probe_wgmma_gemm import Variant, kernel_source, patch
from tests.codegen.test_ptx_patch import RAN_SHA256, sha256

PTX_DIR = Path(__file__).resolve().parents[1] / "codegen" / "h200_ptx"
FAST = "256,64,4,ptx,1,sw128,cst,cstin"
RAN = {  # variant: (file stem, instruction) of PTX kept from the H200 runs, all correct there
    "256,64,3,ptx,1,ws,sw128,cst": ("gemm_256_64_3_ptx_1_ws_sw128_cst",
                                    "m64n256k16.f32.f16.f16"),
    FAST: ("gemm_256_64_4_ptx_1_sw128_cst_cstin", "m64n256k16.f32.f16.f16"),
    "256,32,4,ptx,1,sw128,cst,cstin,tf32": ("gemm_256_32_4_ptx_1_sw128_cst_cstin_tf32",
                                            "m64n256k8.f32.tf32.tf32"),
}


@pytest.mark.parametrize("text", sorted(RAN))
def test_patch_reproduces_the_ptx_that_ran_on_the_h200(text):
    stem = PTX_DIR / RAN[text][0]
    compiled = Path(f"{stem}.cl.ptx").read_text()
    assert sha256(patch(compiled, Variant.parse(text))) == RAN_SHA256[stem.name]


@pytest.mark.parametrize("text", sorted(RAN))
def test_swizzled_patch_steps_32_bytes_per_wgmma(text):
    stem, instruction = RAN[text]
    patched = patch(Path(f"{PTX_DIR / stem}.cl.ptx").read_text(), Variant.parse(text))
    assert patched.count(f"wgmma.mma_async.sync.aligned.{instruction} ") == 4
    offsets = [line.split(",")[-1].strip(" ;") for line in patched.splitlines()
               if line.startswith("add.s64 xa,")]
    assert offsets == ["0", "2", "4", "6"]  # 16-byte units: 0, 32, 64, 96 bytes
    assert ".target sm_90a" in patched and "// WGMMA" not in patched


def test_fast_variant_source_names_its_design():
    src = kernel_source(Variant.parse(FAST))
    assert "reqd_work_group_size(256, 1, 1)" in src  # two warpgroups, both copy and mma
    assert "((c ^ (r & 7)) << 4)" in src  # the 128-byte swizzle
    assert 'bar.sync 1, 256' in src  # the staging of C waits for both warpgroups' wgmma
    assert Variant.parse(FAST).staging_offset == 0
    ws = kernel_source(Variant.parse("256,64,3,ptx,1,ws,sw128,cst"))
    assert "reqd_work_group_size(384, 1, 1)" in ws  # 2 consumer + 1 producer warpgroups
    assert "cp.async.mbarrier.arrive.noinc" in ws
    assert Variant.parse("256,64,3,ptx,1,ws,sw128,cst").smem_bytes <= 232448


@pytest.mark.parametrize("text", [
    "256,64,4,ptx,1,bogus",            # unknown flag
    "256,32,4,ptx,1,sw128",            # sw128 needs BK=64
    "256,64,4,c,1,ws",                 # ws needs PTX accumulators
    "256,64,4,ptx,1,persist",          # persist needs ws
    "256,64,4,ptx,1,ws,sw128,cst",     # 4 stages + staging: over 227 KiB
    "256,64,4,ptx,1,samek",            # samek only without copies
    "256,64,4,ptx,1,sw128,tf32",       # tf32 rows of 64 are 256 bytes: not one swizzle row
    "256,64,4,ptx,1,cstin",            # cstin needs cst
])
def test_bad_variants_are_refused(text):
    with pytest.raises(SystemExit):
        Variant.parse(text)
