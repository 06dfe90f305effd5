"""Device arrays: calls that take and return arrays on the device, enqueue and return at once,
chain without a host round trip and allocate nothing per call in the steady state; on the CPU
device both ways a call moves arrays ("host": host memory in place, "copy": as on a discrete
GPU, forced by pretending the CPU does not share host memory). numpy calls are unchanged, also
between device calls."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array
import pytest

import fusec
from fusec.runtime import executable as executable_module
from fusec.runtime.device import select_device
from fusec.runtime.device_array import DeviceArray, device_queue, to_device, wrap
from fusec.runtime.errors import InputError
from fusec.runtime.executable import Executable

# Two kernels (matmul, then the bias/relu epilogue or an elementwise kernel).
FIRST = """
func.func @first(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>, %b: tensor<24xf32>)
    -> tensor<16x24xf32> {
  %m = nn.matmul %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  %y = nn.add %m, %b : tensor<16x24xf32>, tensor<24xf32> -> tensor<16x24xf32>
  %z = nn.relu %y : tensor<16x24xf32> -> tensor<16x24xf32>
  func.return %z : tensor<16x24xf32>
}
"""

SECOND = """
func.func @second(%h: tensor<16x24xf32>, %s: tensor<16x24xf32>) -> tensor<16x24xf32> {
  %a = nn.add %h, %s : tensor<16x24xf32>, tensor<16x24xf32> -> tensor<16x24xf32>
  %y = nn.softmax %a {axis = 1 : i64} : tensor<16x24xf32> -> tensor<16x24xf32>
  func.return %y : tensor<16x24xf32>
}
"""

# relu(x + b) returned twice, b returned as it is, and a view of a softmax: outputs that are
# not a buffer of their own (copied on the device).
ODD_OUTPUTS = """
func.func @odd(%x: tensor<8x16xf32>, %b: tensor<16xf32>)
    -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<128xf32>) {
  %y = nn.add %x, %b : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %z = nn.relu %y : tensor<8x16xf32> -> tensor<8x16xf32>
  %s = nn.softmax %x {axis = 1 : i64} : tensor<8x16xf32> -> tensor<8x16xf32>
  %r = nn.reshape %s : tensor<8x16xf32> -> tensor<128xf32>
  func.return %z, %z, %b, %r : tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<128xf32>
}
"""

RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 32), dtype=np.float32)
W = RNG.standard_normal((32, 24), dtype=np.float32)
B = RNG.standard_normal(24, dtype=np.float32)
S = RNG.standard_normal((16, 24), dtype=np.float32)


def softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def first_ref(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ W + B, 0)


MODES = ["host", "copy"]


def compile_in(mode: str, source: str, **kwargs: object) -> Executable:
    with pytest.MonkeyPatch.context() as patch:
        if mode == "copy":
            patch.setattr(executable_module, "shares_host_memory", lambda device: False)
        exe = fusec.compile(source, device="cpu", **kwargs)  # type: ignore[arg-type]
    assert exe.host_memory == (mode == "host")
    return exe


@pytest.fixture(scope="module", params=MODES)
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[Executable, Executable]]:
    yield (compile_in(request.param, FIRST, params={"w": W, "b": B}),
           compile_in(request.param, SECOND))


def test_chaining_through_device_arrays_equals_numpy_chaining(
        pair: tuple[Executable, Executable]) -> None:
    first, second = pair
    (h_np,) = first(X)
    (y_np,) = second(h_np, S)
    x, s = first.to_device(X), second.to_device(S)
    (h,) = first(x)
    assert isinstance(h, DeviceArray) and h.shape == (16, 24) and h.dtype == np.float32
    (y,) = second(h, s)
    assert isinstance(y, DeviceArray)
    np.testing.assert_array_equal(y.get(), y_np)
    np.testing.assert_array_equal(h.numpy(), h_np)
    np.testing.assert_allclose(y_np, softmax(first_ref(X) + S), rtol=1e-5, atol=1e-6)


def test_numpy_in_numpy_out_also_between_device_calls(
        pair: tuple[Executable, Executable]) -> None:
    first, _ = pair
    x = first.to_device(X)
    for i in range(3):
        xi = X * (i + 1)
        (a,) = first(xi)
        assert type(a) is np.ndarray
        np.testing.assert_allclose(a, first_ref(xi), rtol=1e-5, atol=1e-5)
        (d,) = first(x)
        np.testing.assert_allclose(d.get(), first_ref(X), rtol=1e-5, atol=1e-5)


def test_outputs_are_fresh_arrays(pair: tuple[Executable, Executable]) -> None:
    first, _ = pair
    (a,) = first(first.to_device(X))
    (b,) = first(first.to_device(2 * X))
    np.testing.assert_allclose(a.get(), first_ref(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.get(), first_ref(2 * X), rtol=1e-5, atol=1e-5)
    assert a.buffer is not b.buffer


def test_a_call_returns_before_its_kernels_run(pair: tuple[Executable, Executable]) -> None:
    """The device queue is held by a user event: a call that waited would never return."""
    first, second = pair
    x, s = first.to_device(X), second.to_device(S)
    gate = cl.UserEvent(first.device.context)
    cl.enqueue_barrier(first.queue, wait_for=[gate])
    results: list[DeviceArray] = []

    def call() -> None:
        (h,) = first(x)
        results.extend([h, *second(h, s)])

    caller = threading.Thread(target=call)
    caller.start()
    caller.join(timeout=20)
    returned = not caller.is_alive()
    pending = [not r.ready for r in results]
    gate.set_status(cl.command_execution_status.COMPLETE)
    caller.join()
    assert returned, "the call waited for its kernels"
    assert pending == [True, True], "outputs were complete before the device could run"
    first.synchronize()
    assert all(r.ready for r in results)
    np.testing.assert_allclose(results[1].get(), softmax(first_ref(X) + S),
                               rtol=1e-5, atol=1e-6)


def test_steady_state_allocates_nothing_and_sets_no_argument(
        pair: tuple[Executable, Executable]) -> None:
    first, second = pair
    x, s = first.to_device(X), second.to_device(S)
    sets: list[int] = []

    class Recording:
        def __init__(self, kernel: cl.Kernel) -> None:
            self.kernel = kernel

        def set_arg(self, position: int, value: object) -> None:
            sets.append(position)
            self.kernel.set_arg(position, value)

    for exe in (first, second):
        for port in [*exe.inputs.values(), *exe.outputs]:
            port.uses = [(Recording(k), p) for k, p in port.uses]  # type: ignore[misc]
    pool = device_queue(first.device).pool
    for _ in range(2):  # warm-up: the pool gets its buffers
        (y,) = second(*first(x), s)
        del y
    before = pool.allocations
    sets.clear()
    for _ in range(10):
        (y,) = second(*first(x), s)
        del y
    first.synchronize()
    assert pool.allocations == before
    assert sets == []
    (y,) = second(*first(x), s)
    np.testing.assert_allclose(y.get(), softmax(first_ref(X) + S), rtol=1e-5, atol=1e-6)


def test_held_outputs_get_new_buffers_and_give_them_back(
        pair: tuple[Executable, Executable]) -> None:
    first, _ = pair
    x = first.to_device(X)
    pool = device_queue(first.device).pool
    held = [first(x)[0] for _ in range(3)]
    assert len({id(h.buffer) for h in held}) == 3
    nbytes = held[0].nbytes
    free = len(pool.free.get(nbytes, []))
    del held
    assert len(pool.free[nbytes]) == free + 3


@pytest.mark.filterwarnings("ignore::pyopencl.CompilerWarning")  # its own 2 * h kernel
def test_pyopencl_arrays_in_and_out(pair: tuple[Executable, Executable]) -> None:
    first, second = pair
    queue = cl.CommandQueue(first.device.context)  # another queue of the same context
    x = cl_array.to_device(queue, X)
    (h,) = first(x)
    assert isinstance(h, DeviceArray)
    h_cl = h.to_pyopencl()
    (y,) = second(h_cl, cl_array.to_device(queue, S))
    np.testing.assert_allclose((2 * h_cl).get(), 2 * first_ref(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.get(), softmax(first_ref(X) + S), rtol=1e-5, atol=1e-6)


def test_mixed_numpy_and_device_inputs(pair: tuple[Executable, Executable]) -> None:
    first, second = pair
    (h,) = first(first.to_device(X))
    (y,) = second(h, S)  # S uploaded first
    assert isinstance(y, DeviceArray)
    np.testing.assert_allclose(y.get(), softmax(first_ref(X) + S), rtol=1e-5, atol=1e-6)


def test_profile_with_device_arrays(pair: tuple[Executable, Executable]) -> None:
    first, _ = pair
    (h,), profile = first.profile(first.to_device(X))
    assert isinstance(h, DeviceArray) and h.ready
    assert len(profile.kernels) == len(first.plan.launches) >= 1
    assert all(k.seconds >= 0 for k in profile.kernels)
    np.testing.assert_allclose(h.get(), first_ref(X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_outputs_without_a_buffer_of_their_own(mode: str) -> None:
    exe = compile_in(mode, ODD_OUTPUTS)
    x = RNG.standard_normal((8, 16), dtype=np.float32)
    b = RNG.standard_normal(16, dtype=np.float32)
    expected = exe(x, b)
    outputs = exe(exe.to_device(x), exe.to_device(b))
    assert len(outputs) == 4 and all(isinstance(o, DeviceArray) for o in outputs)
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_array_equal(got.get(), want)
    assert len({id(o.buffer) for o in outputs}) == 4


@pytest.mark.parametrize("mode", MODES)
def test_bound_device_array_is_used_in_place(mode: str) -> None:
    w = to_device(select_device("cpu"), W)
    exe = compile_in(mode, FIRST, params={"w": w, "b": B})
    assert exe.params["w"] is w.buffer
    (h,) = exe(X)
    np.testing.assert_allclose(h, first_ref(X), rtol=1e-5, atol=1e-5)


# --- errors ---------------------------------------------------------------------------------


def test_wrong_shape_and_dtype_name_the_input(pair: tuple[Executable, Executable]) -> None:
    first, second = pair
    with pytest.raises(InputError, match=r"^@first input 'x' has shape \[32, 16\], "
                                         r"expected \[16, 32\]$"):
        first(first.to_device(X.T.copy()))
    with pytest.raises(InputError, match=r"^@second input 's' has dtype float64, "
                                         r"expected float32$"):
        second(first.to_device(S), first.to_device(S.astype(np.float64)))


def test_another_context_is_refused(pair: tuple[Executable, Executable]) -> None:
    first, _ = pair
    device = first.device
    other = cl.Context(devices=[device.device])
    foreign = cl_array.to_device(cl.CommandQueue(other), X)
    with pytest.raises(InputError, match=r"^@first input 'x' is a pyopencl array of another "
                                         r"OpenCL context"):
        first(foreign)
    elsewhere = dataclasses.replace(device, context=other, queue=cl.CommandQueue(other))
    with pytest.raises(InputError, match=r"^@first input 'x' is a device array of another "
                                         r"OpenCL context"):
        first(to_device(elsewhere, X))
    with pytest.raises(InputError, match=r"^@first input 'w' is a device array of another"):
        first.bind("w", to_device(elsewhere, W))


def test_non_contiguous_pyopencl_array_is_refused(pair: tuple[Executable, Executable]) -> None:
    first, _ = pair
    wide = cl_array.to_device(first.queue, np.zeros((16, 64), np.float32))
    with pytest.raises(InputError, match=r"^@first input 'x' is a pyopencl array that is not "
                                         r"C-contiguous$"):
        first(wide[:, :32])


def test_wrap_keeps_the_pyopencl_array_alive() -> None:
    device = select_device("cpu")
    array = cl_array.to_device(device_queue(device).queue, X)
    wrapped = wrap(device, array)
    del array
    np.testing.assert_array_equal(wrapped.get(), X)


ZERO = """
func.func @z(%x: tensor<0x4xf32>, %y: tensor<3x4xf32>) -> (tensor<0x4xf32>, tensor<3x4xf32>) {
  %a = nn.relu %x : tensor<0x4xf32> -> tensor<0x4xf32>
  %b = nn.relu %y : tensor<3x4xf32> -> tensor<3x4xf32>
  func.return %a, %b : tensor<0x4xf32>, tensor<3x4xf32>
}
"""


@pytest.mark.parametrize("mode", MODES)
def test_arrays_of_no_elements(mode: str) -> None:
    exe = compile_in(mode, ZERO)
    y = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    a, b = exe(exe.to_device(np.zeros((0, 4), np.float32)), exe.to_device(y))
    assert a.shape == (0, 4) and a.buffer is None and a.get().shape == (0, 4)
    np.testing.assert_array_equal(b.get(), np.maximum(y, 0))


SCALAR = """
func.func @scale(%x: tensor<3x4xf32>, %s: tensor<f32>) -> tensor<3x4xf32> {
  %y = nn.mul %x, %s : tensor<3x4xf32>, tensor<f32> -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
"""


@pytest.mark.parametrize("mode", MODES)
def test_zero_dimensional_inputs_keep_their_shape(mode: str) -> None:
    exe = compile_in(mode, SCALAR)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    s = exe.to_device(np.float32(2.5) * np.ones((), np.float32))
    assert s.shape == () and s.get().shape == ()
    (y,) = exe(exe.to_device(x), s)
    np.testing.assert_array_equal(y.get(), x * 2.5)


def test_held_bytes_count_own_buffers_not_device_arrays() -> None:
    """`held_bytes` on a device with memory of its own: the intermediates from the start; the
    call inputs' and outputs' buffers once a call with host arrays needs them (calls with
    device arrays never do); a device array bound as it is belongs to the pool and is not
    counted, a bound copy is."""
    exe = compile_in("copy", FIRST)
    per_call = {s.buffer for s in exe.plan.inputs} | exe.output_buffers()
    total = sum(spec.nbytes for spec in exe.plan.buffers)
    kept = sum(spec.nbytes for i, spec in enumerate(exe.plan.buffers) if i not in per_call)
    assert exe.held_bytes() == kept < total
    args = [to_device(exe.device, a) for a in (X, W, B)]
    (out,) = exe(*args)
    np.testing.assert_allclose(out.get(), first_ref(X), rtol=1e-5, atol=1e-5)
    assert exe.held_bytes() == kept
    (out,) = exe(X, W, B)
    np.testing.assert_allclose(out, first_ref(X), rtol=1e-5, atol=1e-5)
    assert exe.held_bytes() == total
    exe.bind("w", to_device(exe.device, W))
    assert exe.held_bytes() == total - W.nbytes
    exe.bind("w", W)
    assert exe.held_bytes() == total
    exe.unbind("w")
    (out,) = exe(X, W, B)
    np.testing.assert_allclose(out, first_ref(X), rtol=1e-5, atol=1e-5)
    assert exe.held_bytes() == total


def test_intermediates_come_from_a_cuda_addressable_pool_and_go_back() -> None:
    """Where the context's pool is CUDA memory too (`BufferPool.cuda_addressable`, as
    `cuda_interop.CudaSharedPool` is), an executable takes its intermediates from the pool, so
    that CUDA launches use them in place (`fusec.runtime.cuda_launch`); they are the pool's
    bytes, not the executable's own (`held_bytes`), the results are unchanged, and they go back
    to the pool when the executable is garbage."""
    import gc

    device = select_device("cpu")
    shared = device_queue(device)

    class Addressable(type(shared.pool)):  # type: ignore[misc]
        cuda_addressable = True

    pool = Addressable(device.context)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shared, "pool", pool)
        exe = compile_in("copy", SECOND)
        intermediates = [i for i, spec in enumerate(exe.plan.buffers)
                         if spec.role == "intermediate"]
        assert intermediates and pool.allocations == len(intermediates)
        taken = {exe.buffers[i].int_ptr for i in intermediates}
        assert taken == exe.pooled
        per_call = {s.buffer for s in exe.plan.inputs} | exe.output_buffers()
        own = sum(spec.nbytes for i, spec in enumerate(exe.plan.buffers)
                  if i not in per_call and i not in intermediates)
        assert exe.held_bytes() == own
        h = RNG.standard_normal((16, 24), dtype=np.float32)
        (y,) = exe(h, S)
        np.testing.assert_allclose(y, softmax(h + S), rtol=1e-5, atol=1e-6)
        del exe
        gc.collect()
        assert {b.int_ptr for stack in pool.free.values() for b in stack} >= taken
