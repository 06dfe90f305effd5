"""`ptx_patch` on the CPU, against PTX written by hand in the form NVIDIA's OpenCL compiler
writes (`ptx_inputs`): the patch changes exactly the lines it documents (``.target``, one
declaration of the accumulators, and each comment replaced by its instructions, spelled out here
for every variant `gemm_wgmma` writes), leaves every other line as it was, and refuses malformed
comments with its `PtxPatchError`. Where ptxas is installed, every patched text must also
assemble for sm_90a."""

import difflib
import shutil
import subprocess

import pytest

from fusec.codegen.ptx_patch import PtxPatchError, needs_patch, patch, retarget
from tests.codegen import ptx_inputs
from tests.codegen.ptx_inputs import N_ACC, OUTS, fusec_gemm

ACCS = "{" + ", ".join(f"%acc{i}" for i in range(N_ACC)) + "}"
VARIANTS = {  # `gemm_wgmma`'s step comment: the instruction, the descriptors' offsets (16-byte
    # units: 32 bytes along a swizzled 128-byte row; 2048 bytes, two 8-row groups, down an
    # MN-major B) and the transpose immediates (none for tf32) that the step must give
    "f16": ("m64n256k16.f32.f16.f16 4 2 2 0 1", "m64n256k16.f32.f16.f16",
            [0, 2, 4, 6], [0, 2, 4, 6], ", 0, 0"),
    "bf16": ("m64n256k16.f32.bf16.bf16 4 2 2 0 1", "m64n256k16.f32.bf16.bf16",
             [0, 2, 4, 6], [0, 2, 4, 6], ", 0, 0"),
    "bf16_mn_major_b": ("m64n256k16.f32.bf16.bf16 4 2 128 1 1", "m64n256k16.f32.bf16.bf16",
                        [0, 2, 4, 6], [0, 128, 256, 384], ", 0, 1"),
    "f32": ("m64n256k8.f32.tf32.tf32 4 2 2 0 1", "m64n256k8.f32.tf32.tf32",
            [0, 2, 4, 6], [0, 2, 4, 6], ""),
}
F16_STEP = VARIANTS["f16"][0]
LOOP_BRANCH = "\t@%p1 bra \t$L__BB0_1;"
"""The K loop's branch back to its head in `ptx_inputs.GEMM`."""


def step_lines(instruction: str, offsets_a: list[int], offsets_b: list[int], transpose: str,
               wait: int = 1) -> list[str]:
    """What one step comment must become: a fence, one ``wgmma`` per k slice on descriptors
    advanced by the slice's offsets, a commit and a wait."""
    slices = []
    for a, b in zip(offsets_a, offsets_b, strict=True):
        slices += [f"add.s64 xa, %rd5, {a}; add.s64 xb, %rd6, {b};",
                   f"wgmma.mma_async.sync.aligned.{instruction} {ACCS}, xa, xb, p, 1, 1"
                   f"{transpose};"]
    return ["{ .reg .pred p; .reg .u32 one; .reg .b64 xa, xb;",
            "mov.u32 one, 1; setp.ne.u32 p, one, 0;", "wgmma.fence.sync.aligned;", *slices,
            "wgmma.commit_group.sync.aligned;", f"wgmma.wait_group.sync.aligned {wait}; }}"]


def changes(source: str, patched: str) -> list[tuple[int, list[str], list[str]]]:
    """Each run of lines that differs: (its first source line, the source's lines, the
    patched ones); every other line is the same in both, in the same order."""
    old, new = source.splitlines(), patched.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(i1, old[i1:i2], new[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def comment_line(source: str, name: str) -> str:
    """The one line of `source` holding the comment `name` (``FUSEC_WGMMA_INIT``, ...)."""
    [line] = [line for line in source.splitlines() if line.strip().startswith(f"// {name}")]
    return line


def check_patched(source: str, patched: str, step: list[str], prefix: str = "FUSEC_",
                  loop_wait: bool = True) -> None:
    """`patched` is `source` with exactly the changes `ptx_patch` documents, the step comment
    replaced by `step` (and, unless not `loop_wait`, a wait for every wgmma after the K loop:
    the wgmma probe's own patch, older, has none)."""
    lines = source.splitlines()
    first_reg = next(i for i, line in enumerate(lines) if line.lstrip().startswith(".reg"))
    assert lines[first_reg - 1] == "{" and ".entry" in "\n".join(lines[:first_reg])
    assert changes(source, patched) == [
        (lines.index(".target sm_90, texmode_independent"),
         [".target sm_90, texmode_independent"], [".target sm_90a, texmode_independent"]),
        (first_reg, [], [f"\t.reg .f32 %acc<{N_ACC}>;"]),
        (lines.index(comment_line(source, f"{prefix}WGMMA_INIT")),
         [comment_line(source, f"{prefix}WGMMA_INIT")],
         [f"mov.f32 %acc{i}, 0f00000000;" for i in range(N_ACC)]),
        (lines.index(comment_line(source, f"{prefix}FENCE_PROXY_ASYNC")),
         [comment_line(source, f"{prefix}FENCE_PROXY_ASYNC")],
         ["\tfence.proxy.async.shared::cta;"]),
        (lines.index(comment_line(source, f"{prefix}WGMMA_STEP")),
         [comment_line(source, f"{prefix}WGMMA_STEP")], step),
        # the loop around the step left: every wgmma done before anything else runs
        *([(lines.index(LOOP_BRANCH) + 1, [], ["\twgmma.wait_group.sync.aligned 0;"])]
          if loop_wait else []),
        (lines.index(comment_line(source, f"{prefix}WGMMA_DONE")),
         [comment_line(source, f"{prefix}WGMMA_DONE")],
         ["wgmma.wait_group.sync.aligned 0;",
          *(f"mov.f32 {out}, %acc{i}" + ";" for i, out in enumerate(OUTS.split(", ")))]),
    ]
    assert "WGMMA" not in patched and "FENCE_PROXY" not in patched


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_gemm_wgmma_comments_become_their_instructions(variant):
    comment, instruction, offsets_a, offsets_b, transpose = VARIANTS[variant]
    source = fusec_gemm(comment)
    assert needs_patch(source)
    check_patched(source, patch(source),
                  step_lines(instruction, offsets_a, offsets_b, transpose))


def test_the_wait_of_the_step_is_the_comments():
    source = fusec_gemm("m64n256k16.f32.f16.f16 4 2 2 0 0")
    check_patched(source, patch(source),
                  step_lines(*VARIANTS["f16"][1:], wait=0))


def test_trailing_nuls_are_dropped():
    source = fusec_gemm(F16_STEP)
    assert patch(source + "\0\0") == patch(source)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_gemm_wgmma_ptx_assembles_for_sm_90a(tmp_path, variant):
    assemble(tmp_path, patch(fusec_gemm(VARIANTS[variant][0])))


def assemble(tmp_path, ptx: str) -> None:
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def promoted_gemm(step: str = "m64n256k8.f32.tf32.tf32 4 2 2 0 1") -> str:
    """`fusec_gemm` in the promoted form `gemm_wgmma`'s split TF32 writes: its init promoted
    and a promotion before the step, after the fence."""
    source = fusec_gemm(step).replace(f"FUSEC_WGMMA_INIT {N_ACC}",
                                      f"FUSEC_WGMMA_INIT {N_ACC} promoted")
    fence = comment_line(source, "FUSEC_FENCE_PROXY_ASYNC")
    return source.replace(fence, f"{fence}\n\t// FUSEC_WGMMA_PROMOTE", 1)


def test_a_promoted_entry_adds_its_accumulators_into_sums():
    """``FUSEC_WGMMA_INIT <n> promoted``: sums beside the accumulators, both zeroed, and the
    scale-d predicate ``%accon`` true; each ``FUSEC_WGMMA_PROMOTE`` waits for the ``wgmma``s,
    adds each accumulator into its sum and makes the next step's first ``wgmma`` start afresh
    (only the first: the predicate is true again after it); done adds what is left."""
    patched = patch(promoted_gemm())
    assert "WGMMA" not in patched
    lines = [line.strip() for line in patched.splitlines()]
    assert f".reg .f32 %accsum<{N_ACC}>;" in lines and ".reg .pred %accon;" in lines
    assert all(f"mov.f32 %accsum{i}, 0f00000000;" in lines for i in range(N_ACC))
    at = lines.index("{ .reg .u32 one; mov.u32 one, 1; setp.ne.u32 %accon, one, 0; }")
    promote = lines.index("{ .reg .u32 zero; mov.u32 zero, 0; setp.ne.u32 %accon, zero, 0; }")
    assert at < promote
    assert lines[promote - N_ACC - 1] == "wgmma.wait_group.sync.aligned 0;"
    assert lines[promote - N_ACC:promote] == [f"add.f32 %accsum{i}, %accsum{i}, %acc{i};"
                                               for i in range(N_ACC)]
    mmas = [line for line in lines if line.startswith("wgmma.mma_async")]
    assert [m.split(", ")[N_ACC + 2] for m in mmas] == ["%accon", "p", "p", "p"]
    first = lines.index(mmas[0])
    assert lines[first + 1] == "mov.pred %accon, p;" and promote < first
    outs = OUTS.split(", ")
    done = lines.index(f"add.f32 {outs[0]}, %accsum0, %acc0;")
    assert lines[done - 1] == "wgmma.wait_group.sync.aligned 0;"
    assert lines[done:done + N_ACC] == [f"add.f32 {o}, %accsum{i}, %acc{i};"
                                        for i, o in enumerate(outs)]
    plain = patch(fusec_gemm("m64n256k8.f32.tf32.tf32 4 2 2 0 1"))
    assert "%accon" not in plain and "%accsum" not in plain


def test_a_promotion_needs_a_promoted_entry():
    source = promoted_gemm().replace(f"FUSEC_WGMMA_INIT {N_ACC} promoted",
                                     f"FUSEC_WGMMA_INIT {N_ACC}")
    with pytest.raises(PtxPatchError, match="whose init is not promoted"):
        patch(source)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
def test_a_promoted_entry_assembles_for_sm_90a(tmp_path):
    assemble(tmp_path, patch(promoted_gemm()))


def test_two_entries_each_get_their_own_accumulators():
    header = ptx_inputs.HEADER
    one, two = (fusec_gemm(F16_STEP, entry)[len(header):] for entry in ("first", "second"))
    out, head = patch(header + one + two), retarget(header)
    assert out == head + patch(header + one)[len(head):] + patch(header + two)[len(head):]
    assert out.count(f".reg .f32 %acc<{N_ACC}>;") == 2 and out.count("wgmma.mma_async") == 8


def test_source_without_comments_is_only_retargeted():
    ptx = ptx_inputs.PLAIN
    assert not needs_patch(ptx)
    assert changes(ptx, patch(ptx)) == [
        (9, [".target sm_90, texmode_independent"], [".target sm_90a, texmode_independent"])]


@pytest.mark.parametrize(("version", "raised"), [("7.8", "8.0"), ("8.0", "8.0"), ("9.0", "9.0")])
def test_the_ptx_version_is_raised_to_8_0(version, raised):
    ptx = ptx_inputs.PLAIN.replace(".version 9.0", f".version {version}")
    assert f".version {raised}\n.target sm_90a," in patch(ptx)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("// FUSEC_WGMMA_INIT 128", "// FUSEC_WGMMA_INIT 64", "for 64 accumulators"),
    ("m64n256k16.f32.f16.f16 4", "m64n256k16.f64.f16.f16 4", "unknown wgmma instruction"),
    ("m64n256k16.f32.f16.f16 4", "m64n256k32.f32.f16.f16 4", "unknown wgmma instruction"),
    ("m64n256k16.f32.f16.f16 4", "m64n128k16.f32.f16.f16 4", "needs 64 accumulators"),
    ("// FUSEC_WGMMA_DONE 128 %f1, ", "// FUSEC_WGMMA_DONE 128 ", "done names 127 registers"),
    ("// FUSEC_WGMMA_INIT 128", "", "without a FUSEC_WGMMA_INIT"),
    ("// FUSEC_WGMMA_DONE", "// FUSEC_DONE", "one init, one done and some steps"),
    ("0 1 %rd5, %rd6", "0 2 %rd5, %rd6", "two descriptors and wait 0 or 1"),
    ("0 1 %rd5, %rd6", "0 1 %rd5", "two descriptors and wait 0 or 1"),
    ("\t.reg", "\t.rog", "no .reg declaration"),
    (".entry", ".entri", "no .entry"),
    (".target sm_90", ".target sm_80", "expected one `.target sm_90`"),
])
def test_malformed_comments_are_refused(old, new, message):
    text = fusec_gemm(F16_STEP)
    assert old in text
    with pytest.raises(PtxPatchError, match=message):
        patch(text.replace(old, new))


def test_a_comment_outside_an_entry_is_refused():
    text = fusec_gemm(F16_STEP)
    at = text.index(".entry")
    with pytest.raises(PtxPatchError, match="outside any .entry"):
        patch(text[:at] + "// FUSEC_WGMMA_INIT 128\n" + text[at:])


def test_tf32_b_is_refused_mn_major():
    with pytest.raises(PtxPatchError, match="only K-major"):
        patch(fusec_gemm("m64n256k8.f32.tf32.tf32 4 2 128 1 1"))


def test_the_gpu_fence_comment_becomes_a_gpu_wide_fence():
    """`gemm_wgmma`'s parts summed in the kernel fence their global writes GPU-wide
    (``FUSEC_FENCE_GPU``): OpenCL's ``mem_fence`` is ``membar.cta`` on NVIDIA."""
    source = fusec_gemm(F16_STEP)
    proxy = comment_line(source, "FUSEC_FENCE_PROXY_ASYNC")
    fenced = source.replace(proxy, f"{proxy}\n\t// FUSEC_FENCE_GPU", 1)
    patched = patch(fenced)
    assert "FUSEC_FENCE_GPU" not in patched
    lines = patched.splitlines()
    at = lines.index("\tfence.proxy.async.shared::cta;")
    assert lines[at + 1] == "\tfence.acq_rel.gpu;"
    assert patch(source).count("fence.acq_rel.gpu") == 0


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
def test_the_gpu_fence_assembles_for_sm_90a(tmp_path):
    source = fusec_gemm(F16_STEP)
    proxy = comment_line(source, "FUSEC_FENCE_PROXY_ASYNC")
    assemble(tmp_path, patch(source.replace(proxy, f"{proxy}\n\t// FUSEC_FENCE_GPU", 1)))


def test_the_loop_is_left_with_every_wgmma_done():
    """NVVM may compute values again between the K loop and the done comment (on the H200 it
    put a `%tid.x` read and address arithmetic there, and ptxas then serialized every wgmma of
    the kernel, C7514): the patch waits for all wgmmas at the loop's exit, before them."""
    source = fusec_gemm(F16_STEP)
    recomputed = "\tmov.u32 \t%r6, %tid.x;\n\tshl.b32 \t%r6, %r6, 3;\n"
    source = source.replace(LOOP_BRANCH + "\n\n", LOOP_BRANCH + "\n" + recomputed, 1)
    patched = patch(source).splitlines()
    at = patched.index(LOOP_BRANCH)
    assert patched[at + 1:at + 4] == ["\twgmma.wait_group.sync.aligned 0;",
                                      *recomputed.splitlines()]


def test_no_wait_after_a_branch_forward():
    """A branch after the last step that does not go back around it (here: the loop's branch
    turned into a jump ahead) is not a loop's exit: nothing is put after it."""
    source = fusec_gemm(F16_STEP).replace(LOOP_BRANCH, "\t@%p1 bra \t$L__BB0_2;")
    source = source.replace("\tret;\n", "$L__BB0_2:\n\tret;\n")
    patched = patch(source)
    assert patched.count("wgmma.wait_group.sync.aligned 0;") == 1  # the done comment's


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="no ptxas")
def test_the_wait_at_the_loop_exit_assembles(tmp_path):
    source = fusec_gemm(F16_STEP).replace(
        LOOP_BRANCH + "\n\n", LOOP_BRANCH + "\n\tmov.u32 \t%r6, %tid.x;\n", 1)
    assemble(tmp_path, patch(source))
