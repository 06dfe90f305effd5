"""`ptx_patch` on the CPU: against PTX that NVIDIA's OpenCL compiler wrote on an H200 for the
wgmma GEMM probe and for `gemm_wgmma` (`h200_ptx/`, test inputs that only that machine can make),
whose patched text ran correctly there. The probe's comments are renamed into fusec's
(`FUSEC_WGMMA_*`, which carry their operands) and the patch must give back, byte for byte, the
PTX that ran: its SHA-256 is kept here (`RAN_SHA256`; the texts themselves are in git history,
`git show 11b3105:bench/results/h200-2026-11-25-s4-wgmma-ptx/NAME.sm90a.ptx`, and
`...-wgmma-fusec-ptx/` for `gemm_wgmma`'s). Where ptxas is installed, the patched text must also
assemble for sm_90a."""

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from fusec.codegen.ptx_patch import PtxPatchError, needs_patch, patch

PTX_DIR = Path(__file__).resolve().parent / "h200_ptx"
RAN_SHA256 = {  # the patched PTX that ran correctly on the H200, by file stem
    "gemm_256_32_4_ptx_1_sw128_cst_cstin_tf32":
        "a73d0bf9e2ab8b782493903fa66403258c54b65d3d5ae50c07f6e19d8c9bf16a",
    "gemm_256_64_3_ptx_1_ws_sw128_cst":
        "fb0cffdb9d9ac6d66269af0e4b66d4126e82f4c1b7bb29569084b3d566943781",
    "gemm_256_64_4_ptx_1_sw128_cst_cstin":
        "32e35a7537531b6b5480893d76c1d2ad65aa1fc43c9970d168c76d89adcb225f",
    "wgmma_bf16": "c56469bcf291395827bfaec61039bb9e23fe0a9790e8dc1afac1361ca7351575",
    "wgmma_f16": "9a17e156ee4a692e0665298ee7b3daebe770ed9d5c048009d75ca0373ab69e91",
    "wgmma_f32": "546c3c399afb24825a261fa9eb4991f3e8e366a6a433c8c43226b2cc0200bfba",
}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
RAN = {  # file stem: the instruction and k-slices of one step of that kernel
    "gemm_256_64_4_ptx_1_sw128_cst_cstin": ("m64n256k16.f32.f16.f16", 4),
    "gemm_256_32_4_ptx_1_sw128_cst_cstin_tf32": ("m64n256k8.f32.tf32.tf32", 4),
    "gemm_256_64_3_ptx_1_ws_sw128_cst": ("m64n256k16.f32.f16.f16", 4),
}


def fusec_comments(ptx: str, instruction: str, slices: int) -> str:
    """The probe's comments written as `gemm_wgmma` writes them."""
    return (ptx.replace("// WGMMA_INIT", "// FUSEC_WGMMA_INIT 128")
            .replace("// WGMMA_STEP ", f"// FUSEC_WGMMA_STEP {instruction} {slices} 2 2 0 1 ")
            .replace("// WGMMA_DONE ", "// FUSEC_WGMMA_DONE 128 ")
            .replace("// FENCE_PROXY_ASYNC", "// FUSEC_FENCE_PROXY_ASYNC"))


def compiled(stem: str) -> str:
    return fusec_comments((PTX_DIR / f"{stem}.cl.ptx").read_text(), *RAN[stem])


@pytest.mark.parametrize("stem", sorted(RAN))
def test_patch_gives_the_ptx_that_ran_on_the_h200(stem):
    source = compiled(stem)
    assert needs_patch(source)
    assert sha256(patch(source + "\0\0")) == RAN_SHA256[stem]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
def test_patched_ptx_assembles_for_sm_90a(tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(patch(compiled("gemm_256_64_4_ptx_1_sw128_cst_cstin")))
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_two_entries_each_get_their_own_accumulators():
    one = compiled("gemm_256_64_4_ptx_1_sw128_cst_cstin")
    head, _, body = one.partition(".entry wgmma_gemm")
    twice = head + ".entry wgmma_gemm" + body + "\n.entry second" + body
    out = patch(twice)
    assert out.count(".reg .f32 %acc<128>;") == 2
    assert out.count("wgmma.mma_async") == 8 and "FUSEC" not in out


def test_source_without_comments_is_only_retargeted():
    ptx = (PTX_DIR / "roundtrip_sm90.ptx").read_text()
    assert not needs_patch(ptx)
    assert patch(ptx) == ptx.rstrip("\0").replace(".target sm_90", ".target sm_90a", 1)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("// FUSEC_WGMMA_INIT 128", "// FUSEC_WGMMA_INIT 64", "for 64 accumulators"),
    ("m64n256k16.f32.f16.f16 4", "m64n256k16.f64.f16.f16 4", "unknown wgmma instruction"),
    ("2 2 0 1 %rd", "2 2 1 1 %rd", None),  # B MN-major: the transpose immediate set
    ("// FUSEC_WGMMA_DONE 128 %f1, ", "// FUSEC_WGMMA_DONE 128 ", "done names 127 registers"),
    ("// FUSEC_WGMMA_INIT 128", "", "without a FUSEC_WGMMA_INIT"),
    (".target sm_90", ".target sm_80", "expected one `.target sm_90`"),
])
def test_malformed_comments_are_refused(old, new, message):
    text = compiled("gemm_256_64_4_ptx_1_sw128_cst_cstin")
    assert old in text
    if message is None:
        assert ", p, 1, 1, 0, 1;" in patch(text.replace(old, new, 1))
        return
    with pytest.raises(PtxPatchError, match=message):
        patch(text.replace(old, new, 1))


def test_tf32_b_is_refused_mn_major():
    text = compiled("gemm_256_32_4_ptx_1_sw128_cst_cstin_tf32").replace("4 2 2 0 1 %rd",
                                                                       "4 2 128 1 1 %rd")
    with pytest.raises(PtxPatchError, match="only K-major"):
        patch(text)


def test_each_descriptor_advances_by_its_own_step():
    text = compiled("gemm_256_64_4_ptx_1_sw128_cst_cstin").replace("4 2 2 0 1 %rd",
                                                                  "4 2 128 1 1 %rd")
    adds = [line for line in patch(text).splitlines() if line.startswith("add.s64 xa,")]
    assert [(a.split(",")[2].split(";")[0].strip(), a.split(",")[-1].strip(" ;"))
            for a in adds] == [
        ("0", "0"), ("2", "128"), ("4", "256"), ("6", "384")]


FUSEC_PTX = PTX_DIR
"""PTX of `gemm_wgmma` (256x512x256, B K-major) as NVIDIA's OpenCL compiler wrote it on the
H200 (`wgmma_{dtype}.cl.ptx`), whose patched text ran correctly there (patch version 1, whose
step comment had one descriptor step and no transpose flag: ``4 2 1``, now ``4 2 2 0 1``)."""


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_patch_gives_the_gemm_wgmma_ptx_that_ran_on_the_h200(dtype):
    text = (FUSEC_PTX / f"wgmma_{dtype}.cl.ptx").read_text()
    text = text.replace(" 4 2 1 %rd", " 4 2 2 0 1 %rd")
    assert sha256(patch(text)) == RAN_SHA256[f"wgmma_{dtype}"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
@pytest.mark.parametrize(("dtype", "step"), [("f16", "4 2 2 0 1"), ("bf16", "4 2 128 1 1"),
                                             ("f32", "4 2 2 0 1")])
def test_gemm_wgmma_ptx_assembles_for_sm_90a(tmp_path, dtype, step):
    text = (FUSEC_PTX / f"wgmma_{dtype}.cl.ptx").read_text().replace(" 4 2 1 %rd",
                                                                     f" {step} %rd")
    path = tmp_path / "k.ptx"
    path.write_text(patch(text))
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
