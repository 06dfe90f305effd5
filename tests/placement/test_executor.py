"""A placed program run over two OpenCL contexts (the CPU device twice, see conftest): its
outputs equal the numpy reference and the one-device executable's, whichever way the kernels
are split, with parameters, round trips between the devices and independent segments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fusec
from fusec.compiler.driver import compile_placed, load
from fusec.errors import InputError
from fusec.placement import executor as executor_module
from fusec.placement.devices import DevicePair
from fusec.placement.executor import PlacedExecutable
from fusec.reference.executor import find_function, random_inputs, run_function
from fusec.runtime.device_array import DeviceArray, to_device
from fusec.runtime.executable import Executable

# host-side work around two matmuls: an exp before, a softmax between, a reshape and a softmax
# of another input beside them
PROGRAM = """
func.func @p(%x: tensor<8x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>,
             %s: tensor<6x10xf32>, %v: tensor<48x16xf32>)
    -> (tensor<8x16xf32>, tensor<6x10xf32>, tensor<384xf32>) {
  %e = nn.exp %x : tensor<8x32xf32> -> tensor<8x32xf32>
  %h = nn.matmul %e, %w : tensor<8x32xf32>, tensor<32x48xf32> -> tensor<8x48xf32>
  %hb = nn.add %h, %b : tensor<8x48xf32>, tensor<48xf32> -> tensor<8x48xf32>
  %n = nn.softmax %hb : tensor<8x48xf32> -> tensor<8x48xf32>
  %y = nn.matmul %n, %v : tensor<8x48xf32>, tensor<48x16xf32> -> tensor<8x16xf32>
  %q = nn.softmax %s : tensor<6x10xf32> -> tensor<6x10xf32>
  %f = nn.reshape %n : tensor<8x48xf32> -> tensor<384xf32>
  func.return %y, %q, %f : tensor<8x16xf32>, tensor<6x10xf32>, tensor<384xf32>
}
"""

NEVER = 10**12
SPLITS = {
    # the matmuls on the accelerator, the rest on the host: host -> acc. -> host -> acc.
    "matmuls": {"matmul_min_flops": 1, "binary_min_elems": NEVER, "unary_min_elems": NEVER,
                "reduction_min_elems": NEVER},
    # the softmaxes (and the reshape after one) on the accelerator, the rest on the host
    "softmaxes": {"matmul_min_flops": NEVER, "binary_min_elems": NEVER,
                  "unary_min_elems": NEVER, "reduction_min_elems": 0},
    "all_accelerator": {"matmul_min_flops": 0, "binary_min_elems": 0, "unary_min_elems": 0,
                        "reduction_min_elems": 0},
}
ALL_HOST = {"matmul_min_flops": NEVER, "binary_min_elems": NEVER, "unary_min_elems": NEVER,
            "reduction_min_elems": NEVER}


def reference_and_inputs(seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    module = load(PROGRAM)
    args = random_inputs(find_function(module, "p"), seed)
    return args, [np.asarray(r) for r in run_function(module, args, "p")]


def assert_close(outputs: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(outputs) == len(expected)
    for out, ref in zip(outputs, expected, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("split", list(SPLITS))
def test_split_programs_match_the_reference(pair: DevicePair, split: str) -> None:
    placed = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS[split])
    args, expected = reference_and_inputs()
    single = fusec.compile(PROGRAM, device="cpu")
    assert_close(placed.executable(*args), expected)
    assert_close(placed.executable(*args), single(*args))   # a second call too


def test_the_split_is_real(pair: DevicePair) -> None:
    placed = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS["matmuls"])
    exe = placed.executable
    assert isinstance(exe, PlacedExecutable)
    assert [s.segment.device for s in exe.segments] == ["cpu", "gpu", "cpu", "gpu"]
    assert [list(s.segment.labels) for s in exe.segments] == [
        ["nn.exp %e", "nn.softmax %q"], ["fused.matmul_bias_act %hb"],
        ["nn.softmax %n", "nn.reshape %f"], ["nn.matmul %y"]]
    contexts = {s.segment.device: s.executable.device.context for s in exe.segments}
    assert contexts["cpu"] is pair.host.context                    # type: ignore[union-attr]
    assert contexts["gpu"] is pair.accelerator.context             # type: ignore[union-attr]
    crossings = {(t["from"], t["to"]) for t in placed.report["transfers"]}
    assert ("gpu", "cpu") in crossings and ("cpu", "gpu") in crossings


def test_all_on_one_device_is_that_devices_executable(pair: DevicePair) -> None:
    placed = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS["all_accelerator"])
    assert not isinstance(placed.executable, PlacedExecutable)
    assert placed.executable.device is pair.accelerator
    assert "every kernel on the gpu" in placed.report["note"]


def plan_fields(exe: Executable) -> dict[str, object]:
    """What a call of `exe` does, as data: the kernels' source and build options, the
    buffers (constants by their bytes), the launches and the inputs and outputs."""
    plan = exe.plan
    return {
        "source": plan.source, "build_options": plan.build_options,
        "buffers": [(b.nbytes, b.role, b.label, None if b.data is None else b.data.tobytes())
                    for b in plan.buffers],
        "inputs": plan.inputs, "outputs": plan.outputs, "launches": plan.launches,
        "launched": [(k.function_name, g, loc) for k, g, loc in exe.launches],
        "call_inputs": [p.spec.name for p in exe.call_inputs],
    }


def test_all_on_the_host_is_the_cpu_only_executable(pair: DevicePair) -> None:
    """Everything placed on the host: the very executable ``compile(device="cpu")`` makes (the
    same plan, launches and build options, the same built program, device and queue), so an
    all-CPU auto call costs what a cpu-only call costs."""
    args, expected = reference_and_inputs()
    params = {"w": args[1]}
    placed = compile_placed(PROGRAM, devices=pair, offload_thresholds=ALL_HOST, params=params)
    single = fusec.compile(PROGRAM, device="cpu", params=params)
    exe = placed.executable
    assert {d["decision"] for d in placed.report["decisions"]} == {"cpu"}
    assert type(exe) is Executable and type(single) is Executable
    assert exe.device is pair.host and single.device is pair.host
    assert plan_fields(exe) == plan_fields(single)
    assert exe.program is single.program and exe.queue is single.queue
    assert exe.input_names == single.input_names == ["x", "b", "s", "v"]
    call = [args[0], args[2], args[3], args[4]]
    assert_close(exe(*call), expected)
    assert_close(exe(*call), single(*call))


def test_random_inputs_several_seeds(pair: DevicePair) -> None:
    exe = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS["matmuls"]).executable
    for seed in (1, 2, 3):
        args, expected = reference_and_inputs(seed)
        assert_close(exe(*args), expected)
    # adversarial values: zeros, large magnitudes, a row of equal logits
    args, _ = reference_and_inputs(4)
    args[0][:] = 0.0
    args[3][0, :] = 1e4
    args[1][:] *= 1e3
    expected = run_function(load(PROGRAM), args, "p")
    assert_close(exe(*args), [np.asarray(e) for e in expected])


def test_params_are_bound_on_every_device_that_reads_them(pair: DevicePair) -> None:
    args, expected = reference_and_inputs()
    params = {"w": args[1], "v": args[4]}
    exe = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS["matmuls"],
                         params=params).executable
    assert exe.input_names == ["x", "b", "s"]
    assert_close(exe(args[0], args[2], args[3]), expected)
    assert_close(exe(x=args[0], b=args[2], s=args[3]), expected)
    exe.unbind("v")
    assert_close(exe(args[0], args[2], args[3], args[4]), expected)
    exe.bind("w", np.zeros_like(args[1]))   # new values reach the device that reads them
    args[1] = np.zeros_like(args[1])
    expected = [np.asarray(e) for e in run_function(load(PROGRAM), args, "p")]
    assert_close(exe(args[0], args[2], args[3], args[4]), expected)


def test_input_errors_are_the_runtimes(pair: DevicePair) -> None:
    exe = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS["matmuls"]).executable
    args, _ = reference_and_inputs()
    with pytest.raises(InputError, match="missing input 's'"):
        exe(*args[:3], v=args[4])
    with pytest.raises(InputError, match="input 'x' has shape"):
        exe(np.zeros((2, 2), np.float32), *args[1:])
    with pytest.raises(InputError, match="no input 'nope'"):
        exe.bind("nope", args[0])


def test_independent_segments_run_side_by_side(pair: DevicePair) -> None:
    text = """
    func.func @two(%a: tensor<256xf32>, %x: tensor<32x32xf32>)
        -> (tensor<256xf32>, tensor<32x32xf32>) {
      %e = nn.exp %a : tensor<256xf32> -> tensor<256xf32>
      %m = nn.matmul %x, %x : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
      func.return %e, %m : tensor<256xf32>, tensor<32x32xf32>
    }
    """
    exe = compile_placed(text, devices=pair,
                         offload_thresholds={"matmul_min_flops": 1}).executable
    assert isinstance(exe, PlacedExecutable) and exe.parallel
    a = np.linspace(-3, 3, 256, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((32, 32), dtype=np.float32)
    e, m = exe(a, x)
    np.testing.assert_allclose(e, np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(m, x @ x, rtol=1e-4, atol=1e-4)
    _, profile = exe.profile(a, x)
    assert len(profile.kernels) >= 2 and profile.wall_seconds > 0


# the accelerator's %h is read by the host's softmax and, past it, by the accelerator's add
SKIP = """
func.func @skip(%x: tensor<8x32xf32>, %w: tensor<32x32xf32>) -> tensor<8x32xf32> {
  %h = nn.matmul %x, %w : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
  %s = nn.softmax %h : tensor<8x32xf32> -> tensor<8x32xf32>
  %y = nn.matmul %s, %w : tensor<8x32xf32>, tensor<32x32xf32> -> tensor<8x32xf32>
  %z = nn.add %y, %h : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  func.return %z : tensor<8x32xf32>
}
"""


SKIP_SPLIT = {"matmul_min_flops": 1, "reduction_min_elems": NEVER}


def skip_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    (z,) = run_function(load(SKIP), [x, w], "skip")
    return np.asarray(z)


def test_accelerator_values_stay_there_between_its_segments(
        pair: DevicePair, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = compile_placed(SKIP, devices=pair, offload_thresholds=SKIP_SPLIT).executable
    assert isinstance(exe, PlacedExecutable)
    assert [(s.segment.device, s.keep_on_device) for s in exe.segments] == [
        ("gpu", True), ("cpu", False), ("gpu", False)]
    seen: list[tuple[str, type]] = []
    original = executor_module.PlacedExecutable.run_segment

    def spy(self, placed, values, profile):  # noqa: ANN001, ANN202
        for key in placed.segment.inputs:
            seen.append((placed.segment.device, type(values[key])))
        return original(self, placed, values, profile)

    monkeypatch.setattr(executor_module.PlacedExecutable, "run_segment", spy)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 32), dtype=np.float32)
    w = rng.standard_normal((32, 32), dtype=np.float32) / 6
    (z,) = exe(x, w)
    assert isinstance(z, np.ndarray)
    np.testing.assert_allclose(z, skip_reference(x, w), rtol=1e-4, atol=1e-5)
    # the last segment reads %h as the device array the first one left on the accelerator
    assert ("gpu", DeviceArray) in seen[-3:]


def test_device_arrays_in_and_out(pair: DevicePair) -> None:
    assert pair.host is not None and pair.accelerator is not None
    exe = compile_placed(SKIP, devices=pair, offload_thresholds=SKIP_SPLIT).executable
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 32), dtype=np.float32)
    w = rng.standard_normal((32, 32), dtype=np.float32) / 6
    expected = skip_reference(x, w)
    # on the accelerator, where it is read: used there; its result stays a device array
    (z,) = exe(to_device(pair.accelerator, x), w)
    assert isinstance(z, DeviceArray) and z.device is pair.accelerator
    np.testing.assert_allclose(z.get(), expected, rtol=1e-4, atol=1e-5)
    # a device array of the other device is read back first; a pyopencl array too
    (z,) = exe(to_device(pair.host, x), to_device(pair.host, w).to_pyopencl())
    np.testing.assert_allclose(np.asarray(z), expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(InputError, match="input 'w' has shape"):
        exe(x, to_device(pair.accelerator, x))


def test_one_device_runs_its_segments_in_order(pair: DevicePair) -> None:
    exe = compile_placed(PROGRAM, devices=pair, offload_thresholds=SPLITS["matmuls"]).executable
    assert isinstance(exe, PlacedExecutable)
    # cpu 0, gpu 1 (reads 0), cpu 2 (reads 1), gpu 3 (reads 2): each also after its device's last
    assert exe.waits == [[], [0], [0, 1], [1, 2]]


def test_constants_and_returned_arguments(pair: DevicePair) -> None:
    text = """
    func.func @e(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>)
        -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
      %c = nn.constant {value = dense<2.0> : tensor<8x8xf32>} : tensor<8x8xf32>
      %m = nn.matmul %x, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      %s = nn.add %m, %c : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      %a = nn.mul %x, %c : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      func.return %s, %x, %a : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
    }
    """
    exe = compile_placed(text, devices=pair, offload_thresholds={"matmul_min_flops": 1,
                                                                  "binary_min_elems": 100}
                         ).executable
    assert isinstance(exe, PlacedExecutable)
    assert [s.segment.device for s in exe.segments] == ["gpu", "cpu"]   # the constant in both
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 8), dtype=np.float32)
    w = rng.standard_normal((8, 8), dtype=np.float32)
    s, x_out, a = exe(x, w)
    np.testing.assert_allclose(s, x @ w + 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(a, x * 2)
    assert x_out is not x and np.array_equal(x_out, x)   # a new array, as every output is


def test_fusec_run_runs_a_split_program_on_random_inputs(
        pair: DevicePair, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``fusec-run --device auto --check`` without ``--inputs`` where the placement splits
    (random inputs are sized from the function's arguments: a `PlacedExecutable` has no plan
    of its own)."""
    from fusec.compiler import driver
    from fusec.tools import fusec_run

    monkeypatch.setattr(driver, "find_devices", lambda platform=None: pair)
    source = tmp_path / "p.mlir"
    source.write_text(PROGRAM)
    overrides = [f"--offload-threshold={k}={v}" for k, v in SPLITS["matmuls"].items()]
    code = fusec_run.main([str(source), "--device", "auto", "--check", *overrides])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.count(": ok") == 3
