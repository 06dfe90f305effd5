"""Placement decisions on fused programs, with made-up device profiles: each rule as the
program sees it (where the inputs are, what the results feed), the transfers, the bounded log."""

from __future__ import annotations

from xdsl.dialects import func

from fusec.compiler.context import make_context
from fusec.compiler.driver import load
from fusec.compiler.pipeline import run_pipeline
from fusec.placement.cost_model import DeviceProfile, LinearModel, Thresholds
from fusec.placement.decide import DECISION_LOG_CAPACITY, place
from fusec.placement.partition import assign
from fusec.placement.work import Kind, measure, units

# %t = relu(a + b) is one fused group (16x64), %m a matmul it feeds, %e a small exp beside it.
MIXED = """
func.func @f(%a: tensor<16x64xf32>, %b: tensor<16x64xf32>, %w: tensor<64x512xf32>,
             %c: tensor<64xf32>) -> (tensor<16x512xf32>, tensor<64xf32>) {
  %s = nn.add %a, %b : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  %t = nn.relu %s : tensor<16x64xf32> -> tensor<16x64xf32>
  %m = nn.matmul %t, %w : tensor<16x64xf32>, tensor<64x512xf32> -> tensor<16x512xf32>
  %e = nn.exp %c : tensor<64xf32> -> tensor<64xf32>
  func.return %m, %e : tensor<16x512xf32>, tensor<64xf32>
}
"""


def fused(text: str) -> func.FuncOp:
    module = load(text)
    run_pipeline(make_context(), module, "default")
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def by_label(placement) -> dict[str, tuple[str, str]]:  # noqa: ANN001
    return {d.work.label: (d.device, d.reason) for d in placement.decisions}


def test_work_of_each_unit() -> None:
    works = measure(fused(MIXED))
    assert [(w.label, w.kind, w.elements, w.flops, w.group) for w in works] == [
        ("fused.elementwise %t", Kind.ELEMENTWISE, 1024, 0, True),
        ("nn.matmul %m", Kind.MATMUL, 32768, 16 * 64 * 512, False),
        ("nn.exp %e", Kind.UNARY, 64, 0, False),
    ]
    assert works[1].input_bytes == (16 * 64 * 4, 64 * 512 * 4)


def test_one_device_is_disabled() -> None:
    p = place(fused(MIXED), Thresholds(), None, single="cpu")
    assert {d.reason for d in p.decisions} == {"disabled"}
    assert {d.device for d in p.decisions} == {"cpu"} and not p.split and p.transfers == ()


def test_thresholds_and_fusion_override() -> None:
    # The matmul (524288 flops) reaches a threshold of 1000 flops; the fused group feeding it
    # is below the elementwise threshold but follows it (fusion-override); the exp beside it
    # (not a group, feeding nothing on the accelerator) stays on the host.
    p = place(fused(MIXED), Thresholds(matmul_min_flops=1000), None)
    assert by_label(p) == {
        "fused.elementwise %t": ("gpu", "fusion-override"),
        "nn.matmul %m": ("gpu", "threshold"),
        "nn.exp %e": ("cpu", "threshold"),
    }
    assert [(t.value, t.source, t.target) for t in p.transfers] == [
        ("%a", "cpu", "gpu"), ("%b", "cpu", "gpu"), ("%w", "cpu", "gpu")]


def test_no_override_when_the_consumer_stays_on_the_host() -> None:
    p = place(fused(MIXED), Thresholds(), None)   # matmul below 1e6 flops: host
    assert {d.device for d in p.decisions} == {"cpu"}


def test_residency_after_a_unit_on_the_accelerator() -> None:
    # %m is returned too, so the relu stays its own unit (not the GEMM's epilogue).
    text = """
    func.func @g(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
      %m = nn.matmul %x, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      %r = nn.relu %m : tensor<8x8xf32> -> tensor<8x8xf32>
      func.return %r, %m : tensor<8x8xf32>, tensor<8x8xf32>
    }
    """
    p = place(fused(text), Thresholds(matmul_min_flops=1), None)
    assert by_label(p) == {"nn.matmul %m": ("gpu", "threshold"),
                           "nn.relu %r": ("gpu", "residency")}
    assert p.transfers[-1].value == "%w"


def test_small_batch_guard_on_a_batched_unit() -> None:
    text = """
    func.func @h(%x: tensor<4x512x1024xf32>, %y: tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32> {
      %s = nn.add %x, %y : tensor<4x512x1024xf32>, tensor<4x512x1024xf32> -> tensor<4x512x1024xf32>
      func.return %s : tensor<4x512x1024xf32>
    }
    """
    fast = DeviceProfile(elementwise=LinearModel(1e-15))
    (d,) = place(fused(text), Thresholds(), fast).decisions
    assert (d.device, d.reason, d.work.batch) == ("cpu", "small-batch-guard", 4)
    (d,) = place(fused(text), Thresholds(small_batch_max_dim=2), fast).decisions
    assert (d.device, d.reason) == ("gpu", "profile-model")


def test_profile_model_weighs_the_transfers() -> None:
    # An accelerator that computes for free but moves a byte in 1 us: the matmul is worth it
    # only if its inputs need not cross. Bound parameters are on both devices already.
    slow_link = DeviceProfile(matmul=LinearModel(1e-20), elementwise=LinearModel(1e-20),
                              upload=LinearModel(1e-6), download=LinearModel(1e-6))
    p = place(fused(MIXED), Thresholds(), slow_link)
    assert by_label(p)["nn.matmul %m"] == ("cpu", "profile-model")
    free_link = DeviceProfile(matmul=LinearModel(1e-20), elementwise=LinearModel(1e-20))
    p = place(fused(MIXED), Thresholds(), free_link)
    assert by_label(p)["nn.matmul %m"] == ("gpu", "profile-model")
    d = next(d for d in p.decisions if d.work.label == "nn.matmul %m")
    assert d.cpu_s is not None and d.gpu_s is not None and d.gpu_s < d.cpu_s


def test_params_cross_nothing() -> None:
    p = place(fused(MIXED), Thresholds(matmul_min_flops=1000), None, params=["w"])
    assert [t.value for t in p.transfers] == ["%a", "%b"]


def test_views_follow_their_operand() -> None:
    text = """
    func.func @v(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<64xf32> {
      %m = nn.matmul %x, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      %r = nn.reshape %m : tensor<8x8xf32> -> tensor<64xf32>
      func.return %r : tensor<64xf32>
    }
    """
    p = place(fused(text), Thresholds(matmul_min_flops=1), None)
    assert by_label(p)["nn.reshape %r"] == ("gpu", "residency")


def test_segments_group_each_device() -> None:
    # host, accelerator, host, accelerator, all independent: two segments, not four.
    text = """
    func.func @k(%a: tensor<4xf32>, %x: tensor<64x64xf32>, %b: tensor<4xf32>,
                 %y: tensor<64x64xf32>) -> (tensor<4xf32>, tensor<64x64xf32>, tensor<4xf32>,
                                            tensor<64x64xf32>) {
      %p = nn.exp %a : tensor<4xf32> -> tensor<4xf32>
      %q = nn.matmul %x, %x : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      %r = nn.exp %b : tensor<4xf32> -> tensor<4xf32>
      %s = nn.matmul %y, %y : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      func.return %p, %q, %r, %s
          : tensor<4xf32>, tensor<64x64xf32>, tensor<4xf32>, tensor<64x64xf32>
    }
    """
    fn = fused(text)
    p = place(fn, Thresholds(matmul_min_flops=1000), None)
    assert assign(units(fn), p) == [("cpu", [0, 2]), ("gpu", [1, 3])]


def test_decision_log_keeps_the_last_128() -> None:
    n = DECISION_LOG_CAPACITY + 20
    lines = [f"  %v{i + 1} = nn.exp %v{i} : tensor<4xf32> -> tensor<4xf32>" for i in range(n)]
    text = ("func.func @long(%v0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(lines)
            + f"\n  func.return %v{n} : tensor<4xf32>\n}}\n")
    p = place(_unfused(text), Thresholds(), None)
    assert len(p.decisions) == n
    log = p.log()
    assert len(log) == DECISION_LOG_CAPACITY and log[-1].work.label == f"nn.exp %v{n}"
    assert log[0].work.label == f"nn.exp %v{n - DECISION_LOG_CAPACITY + 1}"


def _unfused(text: str) -> func.FuncOp:
    module = load(text)
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def test_a_returned_result_costs_its_way_back() -> None:
    # Free compute, free uploads, 1 us a byte down: the returned matmul result (32 KiB) would
    # take 33 ms to come back, so the matmul stays on the host.
    slow_down = DeviceProfile(matmul=LinearModel(1e-20), download=LinearModel(1e-6))
    p = place(fused(MIXED), Thresholds(), slow_down)
    d = next(d for d in p.decisions if d.work.label == "nn.matmul %m")
    assert (d.device, d.reason) == ("cpu", "profile-model")
    assert d.gpu_s is not None and abs(d.gpu_s - 16 * 512 * 4 * 1e-6) < 1e-6


def test_traffic_and_steps_of_units() -> None:
    text = """
    func.func @w(%x: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
      %s = nn.add %x, %b : tensor<64x32xf32>, tensor<32xf32> -> tensor<64x32xf32>
      %g = nn.gelu %s : tensor<64x32xf32> -> tensor<64x32xf32>
      %t = nn.tanh %g : tensor<64x32xf32> -> tensor<64x32xf32>
      func.return %t : tensor<64x32xf32>
    }
    """
    (group,) = measure(fused(text))
    assert group.steps == 1 + 5 + 1 and group.traffic == (2048 + 32 + 2048) / 2048
    unfused = measure(_unfused(text))
    assert [(w.steps, w.traffic) for w in unfused] == [
        (1, (2048 + 32 + 2048) / 2048), (5, 2.0), (1, 2.0)]


def test_norms_and_softmax_have_steps() -> None:
    text = """
    func.func @n(%x: tensor<8x16xf32>, %r: tensor<8x16xf32>, %g: tensor<16xf32>)
        -> (tensor<8x16xf32>, tensor<8x16xf32>) {
      %s = nn.softmax %x : tensor<8x16xf32> -> tensor<8x16xf32>
      %a = nn.add %x, %r : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
      %n = nn.rms_norm %a, %g : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
      func.return %s, %n : tensor<8x16xf32>, tensor<8x16xf32>
    }
    """
    works = {w.label: (w.kind, w.steps, w.traffic, w.transcendentals)
             for w in measure(fused(text))}
    # a softmax's exp is a transcendental per element; a norm's root is one per row
    assert works == {"nn.softmax %s": (Kind.REDUCTION, 5, 2.0, 1),
                     "fused.residual_rms_norm %n": (Kind.REDUCTION, 5, (128 * 3 + 16) / 128, 0)}


def test_a_fused_reduction_counts_its_prologue() -> None:
    text = """
    func.func @r(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8xf32> {
      %e = nn.exp %x : tensor<8x16xf32> -> tensor<8x16xf32>
      %m = nn.mul %e, %y : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
      %s = nn.reduce_sum %m {axes = array<i64: 1>} : tensor<8x16xf32> -> tensor<8xf32>
      func.return %s : tensor<8xf32>
    }
    """
    (w,) = measure(fused(text))
    assert (w.label, w.kind, w.steps, w.group) == ("fused.reduce %s", Kind.REDUCTION, 3, True)
    assert w.transcendentals == 1   # the exp of its body


# A softmax whose rows a matmul reads (two kernels: nothing fuses them).
CHAIN = """
func.func @c(%a: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %x = nn.softmax %a : tensor<256x256xf32> -> tensor<256x256xf32>
  %m = nn.matmul %x, %w : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  func.return %m : tensor<256x256xf32>
}
"""
GPU_WITH_A_CALL = DeviceProfile(reduction=LinearModel(1e-13), matmul=LinearModel(1e-14),
                                upload=LinearModel(1e-10), download=LinearModel(1e-10),
                                call_s=2e-3)


def test_only_the_unit_that_opens_a_piece_pays_a_call() -> None:
    t = Thresholds(cpu_reduction_per_elem=1e-7, cpu_matmul_per_flop=1e-9)
    p = place(fused(CHAIN), t, GPU_WITH_A_CALL, params=["w"])
    softmax, matmul = p.decisions
    assert (softmax.device, matmul.device) == ("gpu", "gpu")
    # the softmax opens the accelerator's piece and pays its call; the matmul joins it
    assert softmax.gpu_s is not None and softmax.gpu_s >= 2e-3
    assert matmul.gpu_s is not None and matmul.gpu_s < 2e-3


def test_a_split_that_costs_more_than_one_device_is_undone() -> None:
    # Each unit alone: the softmax (1 ms on the host, whose call is free) stays there, as the
    # accelerator's call costs 2 ms; the matmul (17 ms on the host) goes to the accelerator.
    # But that split pays the accelerator's call anyway, and a copy of the softmax's result:
    # the whole call costs less on the accelerator alone.
    t = Thresholds(cpu_reduction_per_elem=1e-3 / (2 * 65536), cpu_matmul_per_flop=1e-9)
    p = place(fused(CHAIN), t, GPU_WITH_A_CALL, params=["w"])
    assert [d.device for d in p.decisions] == ["gpu", "gpu"] and not p.split
    assert p.decisions[0].reason == "profile-model"
    assert p.decisions[0].cpu_s is not None and p.decisions[0].gpu_s is not None
    assert p.decisions[0].cpu_s < p.decisions[0].gpu_s   # alone, it was the host's
