"""The wgmma GEMM probe's text functions, on the CPU: variant parsing, and the probe's own PTX
patch against hand-written PTX of its kernels (`tests.codegen.ptx_inputs`): it changes exactly
the lines `fusec.codegen.ptx_patch` documents, with the variant's instruction and the swizzled
layout's descriptor steps, and gives the same text as fusec's patch of the same kernel written in
fusec's comments (the two patches whose output ran correctly on the H200)."""

import shutil

import pytest

from fusec.bench.probe_wgmma_gemm import Variant, kernel_source, patch
from fusec.codegen import ptx_patch
from tests.codegen.ptx_inputs import probe_gemm
from tests.codegen.test_ptx_patch import assemble, check_patched, step_lines

FAST = "256,64,4,ptx,1,sw128,cst,cstin"
WS = "256,64,3,ptx,1,ws,sw128,cst"
RAN = {  # variant: the instruction and transpose immediates of its steps (all ran on the H200)
    WS: ("m64n256k16.f32.f16.f16", ", 0, 0"),
    FAST: ("m64n256k16.f32.f16.f16", ", 0, 0"),
    "256,32,4,ptx,1,sw128,cst,cstin,tf32": ("m64n256k8.f32.tf32.tf32", ""),
}
SWIZZLED_OFFSETS = [0, 2, 4, 6]  # 16-byte units: 32 bytes per k slice along a 128-byte row


def fusec_comments(ptx: str, instruction: str, slices: int) -> str:
    """The probe's comments written as `gemm_wgmma` writes them."""
    return (ptx.replace("// WGMMA_INIT", "// FUSEC_WGMMA_INIT 128")
            .replace("// WGMMA_STEP ", f"// FUSEC_WGMMA_STEP {instruction} {slices} 2 2 0 1 ")
            .replace("// WGMMA_DONE ", "// FUSEC_WGMMA_DONE 128 ")
            .replace("// FENCE_PROXY_ASYNC", "// FUSEC_FENCE_PROXY_ASYNC"))


@pytest.mark.parametrize("text", sorted(RAN))
def test_swizzled_patch_steps_32_bytes_per_wgmma(text):
    source = probe_gemm(warp_specialised=text == WS)
    instruction, transpose = RAN[text]
    check_patched(source, patch(source, Variant.parse(text)),
                  step_lines(instruction, SWIZZLED_OFFSETS, SWIZZLED_OFFSETS, transpose),
                  prefix="", loop_wait=False)


@pytest.mark.parametrize("text", sorted(RAN))
def test_the_probe_and_fusec_patch_alike(text):
    source = probe_gemm(warp_specialised=text == WS)
    in_fusec_comments = fusec_comments(source, RAN[text][0], 4)
    assert ptx_patch.needs_patch(in_fusec_comments)
    # but for the wait fusec's patch puts after the K loop (session 26), which the probe's lacks
    fusec = ptx_patch.patch(in_fusec_comments)
    assert fusec.count("\n" + ptx_patch.WAIT_ALL + "\n") == 1
    fusec = fusec.replace("\n" + ptx_patch.WAIT_ALL + "\n", "\n", 1)
    assert patch(source, Variant.parse(text)) == fusec


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
@pytest.mark.parametrize("text", sorted(RAN))
def test_patched_probe_ptx_assembles_for_sm_90a(tmp_path, text):
    assemble(tmp_path, patch(probe_gemm(warp_specialised=text == WS), Variant.parse(text)))


def test_fast_variant_source_names_its_design():
    src = kernel_source(Variant.parse(FAST))
    assert "reqd_work_group_size(256, 1, 1)" in src  # two warpgroups, both copy and mma
    assert "((c ^ (r & 7)) << 4)" in src  # the 128-byte swizzle
    assert 'bar.sync 1, 256' in src  # the staging of C waits for both warpgroups' wgmma
    assert Variant.parse(FAST).staging_offset == 0
    ws = kernel_source(Variant.parse(WS))
    assert "reqd_work_group_size(384, 1, 1)" in ws  # 2 consumer + 1 producer warpgroups
    assert "cp.async.mbarrier.arrive.noinc" in ws
    assert Variant.parse(WS).smem_bytes <= 232448


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
