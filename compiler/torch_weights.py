"""The torch backend's weights, held once where fusec stores a tensor's bytes as they are:
a bound input's whole buffer, or a range of the buffer of a weight folded from it.

A partition binds its parameters and buffers into its executable (`Executable.bind`), which
by default copies them: PyTorch holds the model's weights and fusec holds them again. Where the
executable's buffer of a bound input would hold exactly the tensor's bytes, the copy is not
needed. Such an input is *verbatim* (`stores_verbatim`): it is the tensor itself (named in
``ImportedGraph.bound`` and still an input of the executable, not folded into another weight
by `fusec.compiler.fold_params`), its `ValueSpec` stores it in its own layout (not
`ValueSpec.repacked` into a GEMM's panels or interleaved halves), in the tensor's element
type, and the tensor is contiguous. A verbatim input is bound over the tensor's memory:

- CPU tensors, on a device whose kernels use host arrays in place
  (`OpenCLDevice.host_pointers`, Intel's CPU runtime): the buffer is made over the tensor's
  memory (``CL_MEM_USE_HOST_PTR``, `Executable.bind` with ``stored``) where it is aligned as the
  device needs (128 bytes there; PyTorch aligns to 64, so about half of a model's tensors are
  not).
- CUDA tensors (`fusec.runtime.cuda_interop`): OpenCL cannot import memory that PyTorch
  allocated; a tensor already in the device's CUDA-shared pool (a fusec output, or one moved
  there before) is bound as it is.

Elsewhere the tensor is *moved* (`move`) into memory fusec can use in place: an aligned host
array, or a CUDA-shared device array filled by one device-to-device copy; its ``.data``
becomes a tensor over that memory, so that PyTorch lets go of its own (the same Parameter
object stays: ``state_dict``, optimizers and dynamo's guards see no change, and the tensor
keeps the memory alive after the compiled function is gone). Only a tensor that is the sole
user of its whole storage is moved (another view of it would keep the old values). On CUDA
the pool allocates in the driver's granules (``cuMemGetAllocationGranularity``, typically
2 MiB), so a tensor is moved only where its granules cost less than a second copy
(`CudaSharedPool.allocation_bytes` below twice its size): a bias of a few kilobytes stays
copied.

A change the user makes in place (``load_state_dict``, ``weight.mul_(2)``) then writes the
memory the kernels read (even ``weight.data.mul_(2)``, which PyTorch's version counter does
not see); the partition's version check binds it again, which finds that memory already
bound and does nothing (`PartitionWeights.rebind`). A move is recorded
(`moved_since`) so that a partition or shape variant that noted the tensor before it moved
(one that folded it, say) takes the move for no change, rather than compiling again.

A tensor folded into another bound input (`fusec.compiler.fold_params`: an ``nn.Linear``
weight transposed, the q, k and v projections' weights transposed and concatenated) is no
input of the executable any more, but its bytes may still be one range of that input's buffer:
the folded input's origins (where each source lies in it, `fold_params.Piece`) composed with
the buffer's stored layout (as it is, or transposed for a ``wgmma`` product's B:
`fusec.compiler.weight_placement`) say so. A ``[N, K]`` weight transposed to ``[K, N]`` and
stored ``[N, K]`` again is the whole buffer; q, k and v so are three ranges one after the other.
Such a buffer is held *jointly* (`PartitionWeights.joint`):

- where the tensors lie as the buffer holds them already, one after the other over the whole
  of it (moved there by an earlier compile: another shape variant, or this partition compiled
  again), the buffer is bound over their memory and nothing moves;
- else fusec fills a buffer of its own with the stored value (a CUDA-shared device array, an
  aligned host array on a device that uses them in place) and moves each tensor that may move
  (`movable`) into its range, its ``.data`` a view of that range with a storage of its own (so
  that it stays movable, and PyTorch sees no aliasing between parameters); the others keep
  their memory, and their bytes in the buffer are fusec's copy. On CUDA only where the
  buffer's granules cost less than the bytes moved.

A change in place to such a tensor then writes what the kernels read, so the partition neither
binds nor compiles anything for it while its memory stays where it was put
(`PartitionWeights.holds`); a replaced one (a new object, or new memory under the same one)
compiles the partition again, which moves the new one, and its neighbours, into a new buffer.
On the CPU device the GEMMs keep their weights in panels, which hold no weight as a range (the
concatenated q, k and v biases, stored as they are, are held so).

A tensor bound as it is and read as a ``wgmma`` product's B (GPT-2's ``Conv1D`` weights,
``[K, N]``) would be stored transposed, ``[N, K]``, as every B of those products is: the plan is
asked to keep the layout PyTorch holds it in (`layouts_as_held`; the knob `wgmma_b_as_held`),
which the f16 and bf16 products read MN-major, so that it is verbatim and held once.

Bound inputs stored otherwise (folded by other ops, repacked, converted: int64 narrowed to
int32) keep fusec's copy; `weight_counts` says how many bytes are held each way (the report's
``weights_shared_bytes`` and ``weights_copied_bytes``).
"""

from __future__ import annotations

import atexit
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fusec import knobs
from fusec.codegen.plan import ProgramPlan, StoredLayout, ValueSpec
from fusec.compiler.fold_params import Origins, Piece
from fusec.compiler.weight_placement import Placement, ranges
from fusec.frontends.torch_fx import TORCH_HOST_DTYPES, host_array
from fusec.runtime.device import OpenCLDevice
from fusec.runtime.executable import Executable
from fusec.runtime.host_memory import address, aligned_empty, host_alignment


def layouts_as_held(params: Mapping[str, Any], weights: PartitionWeights | None
                    ) -> dict[str, StoredLayout] | None:
    """The layouts to ask the plan to keep for the bound inputs: where CUDA tensors are held
    once, each tensor bound as it is (not folded into another) as PyTorch holds it, so that
    it can be held over its own memory where every kernel reading it can read it so (a
    ``wgmma`` product's B ``[K, N]``: GPT-2's ``Conv1D`` weights; the knob
    `wgmma_b_as_held`)."""
    if weights is None or not weights.cuda or not knobs.value("wgmma_b_as_held"):
        return None
    return {name: (None, None) for name in params
            if getattr(weights.tensors.get(name), "is_cuda", False)}


@dataclass(frozen=True)
class WeightCounts:
    """The bytes of an executable's bound inputs, by how they are held."""

    shared_bytes: int = 0
    """Bound over the tensor's own memory: held once."""
    copied_bytes: int = 0
    """fusec's own copies (folded, repacked, converted, or not movable): held twice."""

    def __add__(self, other: WeightCounts) -> WeightCounts:
        return WeightCounts(self.shared_bytes + other.shared_bytes,
                            self.copied_bytes + other.copied_bytes)


def weight_counts(exe: Executable, parts: Mapping[str, int] | None = None) -> WeightCounts:
    """How `exe` holds its bound inputs: over memory it was given (host arrays used in place,
    device arrays) or in buffers of its own. `parts`: of the inputs over memory they share
    with tensors (`PartitionWeights.joint`), the bytes those tensors hold (the rest is
    fusec's)."""
    shared = copied = 0
    for name in exe.param_names:
        nbytes = exe.inputs[name].nbytes
        if name in exe.param_hosts or name in exe.param_arrays:
            held = nbytes if parts is None else parts.get(name, nbytes)
            shared += held
            copied += nbytes - held
        else:
            copied += nbytes
    return WeightCounts(shared, copied)


def stores_verbatim(spec: ValueSpec, tensor: Any) -> bool:
    """Whether the buffer of bound input `spec` holds `tensor`'s bytes as they are: its own
    layout, the tensor's shape and element type (bf16 as its bits), a contiguous tensor."""
    return (not spec.repacked and spec.shape == tuple(tensor.shape)
            and spec.dtype == TORCH_HOST_DTYPES.get(str(tensor.dtype))
            and tensor.is_contiguous())


class HostRange:
    """What ``np.asarray`` reads as the bytes from `pointer` on (``__array_interface__``):
    the array it makes keeps this object, and so `owner` (the tensors over those bytes),
    alive."""

    def __init__(self, pointer: int, shape: tuple[int, ...], dtype: np.dtype, owner: Any):
        self.owner = owner
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str,
                                    "data": (pointer, False), "version": 3}


def as_dtype(bits: Any, dtype: Any) -> Any:
    """`bits` (a tensor of fusec's host type for `dtype`: bf16 as ``uint16``) as `dtype`."""
    import torch

    with torch.inference_mode(False):
        return bits.view(torch.bfloat16) if dtype == torch.bfloat16 else bits


_moves: dict[int, tuple[weakref.ref, int, int]] = {}
"""id(tensor) -> (the tensor, weakly; the address its values left; the address they went to),
for each tensor `move` moved, while it lives."""


def moved_since(tensor: Any, pointer: int) -> bool:
    """Whether fusec moved `tensor`'s values from `pointer` to where they are now (so a
    partition that noted the tensor at `pointer` need not bind or compile it again)."""
    entry = _moves.get(id(tensor))
    return (entry is not None and entry[0]() is tensor and entry[1] == pointer
            and entry[2] == tensor.data_ptr())


def move(tensor: Any, replacement: Any) -> None:
    """Makes `replacement` (a tensor with the same values, over memory fusec binds in place)
    `tensor`'s data, and records the move."""
    source = tensor.data_ptr()
    tensor.data = replacement
    key = id(tensor)

    def forget(ref: weakref.ref, key: int = key) -> None:
        if _moves.get(key, (None,))[0] is ref:
            del _moves[key]

    _moves[key] = (weakref.ref(tensor, forget), source, tensor.data_ptr())
    if tensor.is_cuda and not _release_registered:
        register_release_at_exit()


_release_registered = False


def register_release_at_exit() -> None:
    global _release_registered
    atexit.register(release_moved)
    _release_registered = True


def release_moved() -> None:
    """At exit, each live CUDA tensor that `move` moved into fusec's shared memory gets an
    empty tensor as its data, so that the memory goes back to fusec's pool while the
    interpreter is whole, not in its last collection. On the H200 (2026-12-02) GPU test
    processes hung in that last collection ("Garbage-collecting") after every test passed;
    each hang had the CUDA interop tests (tests/runtime/test_cuda_interop.py) in the process,
    with this release or without it, and the backend's CUDA tests alone exited cleanly with it
    (twice); whether they need it is not known."""
    import torch

    for ref, _, _ in list(_moves.values()):
        tensor = ref()
        if tensor is not None and tensor.is_cuda:
            with torch.inference_mode(False):
                tensor.data = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
    _moves.clear()


def movable(tensor: Any) -> bool:
    """Whether `tensor`'s memory may be replaced under it (`move`): a dense, contiguous
    tensor over the whole of a storage that nothing else uses (a second tensor over it would
    keep the old values), not an inference tensor (whose data cannot be set outside
    inference mode)."""
    import torch

    if tensor.is_inference() or not tensor.is_contiguous() or tensor.storage_offset() != 0 \
            or tensor.layout != torch.strided:
        return False
    storage = tensor.untyped_storage()
    if storage.nbytes() != tensor.nbytes:
        return False
    use_count = getattr(torch._C, "_storage_Use_Count", None)
    # The tensor and `storage`, the Python object just made, each hold one reference.
    return use_count is not None and use_count(storage._cdata) <= 2


class PartitionWeights:
    """The bound tensors of one partition's executable, by argument name, and how they are
    bound (see the module docstring)."""

    def __init__(self, device: OpenCLDevice, tensors: Mapping[str, Any],
                 cuda: bool = False):
        self.device = device
        self.tensors = dict(tensors)
        self.cuda = cuda
        """Whether CUDA tensors are held once too (the backend's option ``hold_weights_once``,
        on unless turned off, see `Options.hold_weights_once`); CPU tensors always are."""
        self.host_alignment = host_alignment(device.device)
        self.placed: dict[str, int] = {}
        """Tensors (by name) that are part of a folded input's buffer (`joint`): the address
        of that part. While a tensor's memory is there, the kernels read its values."""
        self.parts: dict[str, int] = {}
        """Inputs bound over device or host arrays, by how many of their bytes are tensors'
        (the rest is fusec's): folded inputs over memory they share with tensors (`joint`),
        and fusec's copies in the CUDA-shared pool (`copies`: none)."""

    def in_place(self, plan: ProgramPlan, bound: Mapping[str, Any],
                 origins: Origins | None = None) -> dict[str, Any]:
        """The values to bind (``stored``) over the tensors' memory, by name: for the bound
        inputs of `plan` (`bound`: the executable's, after folding, with the values of the
        folded ones) that store a tensor of this partition verbatim, or, by their `origins`,
        hold tensors as ranges of their bytes (`joint`), and can be held so. The others are
        left to copy."""
        specs = {s.name: s for s in plan.inputs}
        held = {}
        for name, tensor in self.tensors.items():
            if name in bound and name in specs and stores_verbatim(specs[name], tensor):
                value = self.over_memory(tensor)
                if value is not None:
                    held[name] = value
        for name, pieces in (origins or {}).items():
            if name in bound and name in specs:
                value = self.joint(specs[name], pieces, bound[name])
                if value is not None:
                    held[name] = value
        return held

    def copies(self, plan: ProgramPlan, values: Mapping[str, Any]) -> dict[str, Any]:
        """The values to bind (``stored``) for the bound inputs of `plan` that fusec copies
        (`values`: those `in_place` left), where this partition's tensors are CUDA tensors:
        device arrays of the CUDA-shared pool with the stored value (`copy_on_cuda`), so
        that kernels launched through CUDA read them in place. The others are bound as host
        values (copied into OpenCL's own memory)."""
        if not any(getattr(t, "is_cuda", False) for t in self.tensors.values()):
            return {}
        specs = {s.name: s for s in plan.inputs}
        held = {}
        for name, value in values.items():
            if name in specs:
                array = self.copy_on_cuda(specs[name], np.asarray(value))
                if array is not None:
                    held[name] = array
                    self.parts[name] = 0  # fusec's copy: no tensor's bytes
        return held

    def copy_on_cuda(self, spec: ValueSpec, value: np.ndarray) -> Any | None:
        """A device array of the CUDA-shared pool holding `value` as input `spec`'s buffer
        stores it (`ValueSpec.stored`), or None where the pool's granules cost more than a
        second copy (`CudaSharedPool.allocation_bytes`). In OpenCL's own memory a weight is
        one copy for OpenCL and, where the kernels launch through CUDA, one more in
        PyTorch's memory (`CudaLaunches.mirror`); in the pool it is one copy both read."""
        from fusec.runtime.cuda_interop import shared_pool
        from fusec.runtime.device_array import to_device

        stored = spec.stored(value)
        if not stored.nbytes or shared_pool(self.device).allocation_bytes(
                stored.nbytes) >= 2 * stored.nbytes:
            return None
        return to_device(self.device, stored)

    def holds(self, name: str | None, tensor: Any) -> bool:
        """Whether `tensor`, the bound tensor `name`, lies where a folded input's buffer holds
        it (`joint`): whatever its values, they are what the kernels read."""
        return (name in self.placed and tensor.data_ptr() == self.placed[name]
                and tensor.is_contiguous())

    def joint(self, spec: ValueSpec, pieces: tuple[Piece, ...], value: np.ndarray) -> Any:
        """What binds folded input `spec` (of `value`, made of `pieces` of this partition's
        tensors) over memory it shares with those tensors whose bytes are one range of its
        buffer (`weight_placement.ranges`), or None (a copy). Where the tensors lie so
        already (a variant or a compile before moved them), over their memory; else a buffer
        of fusec's is filled with the stored value, and each such tensor that may move
        (`movable`) moves into its range, its ``.data`` a view of it."""
        parts: list[tuple[Placement, Any]] = []
        for placement in ranges(spec, pieces):
            tensor = self.tensors.get(placement.source)
            if (tensor is not None and placement.shape == tuple(tensor.shape)
                    and placement.nbytes and spec.dtype == TORCH_HOST_DTYPES.get(str(tensor.dtype))
                    and placement.source not in self.placed
                    and all(p.source != placement.source for p, _ in parts)
                    and self.reachable(tensor)
                    and (not parts or parts[0][1].device == tensor.device)):
                parts.append((placement, tensor))
        if not parts:
            return None
        held = self.over_parts(spec, parts)
        if held is None:
            parts = [(p, t) for p, t in parts if movable(t)]
            held = self.moved_into(spec, value, parts) if parts else None
        if held is not None:
            self.parts[spec.name] = sum(p.nbytes for p, _ in parts)
            for placement, tensor in parts:
                self.placed[placement.source] = tensor.data_ptr()
        return held

    def reachable(self, tensor: Any) -> bool:
        """Whether `tensor` can be held in a buffer of this device: a CPU tensor on a device
        that uses host arrays in place, or, where CUDA tensors are held once (`cuda`), a CUDA
        tensor of the shared pool's GPU."""
        if tensor.is_cuda:
            if not self.cuda:
                return False
            from fusec.runtime.cuda_interop import shared_pool

            return tensor.device.index == shared_pool(self.device).ordinal
        return tensor.device.type == "cpu" and self.device.host_pointers

    def over_parts(self, spec: ValueSpec, parts: list[tuple[Placement, Any]]) -> Any | None:
        """The buffer of `spec` over the tensors' memory where they lie as it holds them
        already, one after the other, every byte of it one of theirs, in memory the device
        uses in place (a CUDA-shared allocation, an aligned host address); else None."""
        nbytes = spec.dtype.itemsize * math.prod(spec.shape)
        first, tensor = parts[0]
        base = tensor.data_ptr() - first.offset
        if sum(p.nbytes for p, _ in parts) != nbytes or not all(
                t.data_ptr() == base + p.offset and t.is_contiguous() for p, t in parts):
            return None
        if tensor.is_cuda:
            from fusec.runtime.cuda_interop import shared_pool
            from fusec.runtime.device_array import DeviceArray

            allocation = shared_pool(self.device).allocations_by_pointer.get(base)
            if allocation is None or allocation.size < nbytes:
                return None
            return DeviceArray(self.device, allocation.buffer, spec.shape, spec.dtype,
                               owner=tuple(t.detach() for _, t in parts))  # kept while bound
        if base % self.host_alignment:
            return None
        return np.asarray(HostRange(base, spec.shape, spec.dtype,
                                    tuple(t.detach() for _, t in parts)))

    def moved_into(self, spec: ValueSpec, value: np.ndarray,
                   parts: list[tuple[Placement, Any]]) -> Any | None:
        """A buffer of fusec's with `value` stored (`ValueSpec.stored`), each tensor of
        `parts` moved into its range; None on CUDA where the pool's granules would cost
        more than the tensors' bytes (`CudaSharedPool.allocation_bytes`)."""
        import torch

        stored = spec.stored(np.asarray(value))
        if parts[0][1].is_cuda:
            from fusec.runtime.cuda_interop import shared_pool, view_at
            from fusec.runtime.device_array import to_device

            pool = shared_pool(self.device)
            if pool.allocation_bytes(stored.nbytes) >= stored.nbytes + sum(
                    p.nbytes for p, _ in parts):
                return None
            array = to_device(self.device, stored)
            for placement, tensor in parts:
                with torch.inference_mode(False):
                    replacement = view_at(pool, array, placement.offset, placement.shape,
                                          spec.dtype)
                move(tensor, as_dtype(replacement, tensor.dtype))
            return array
        buffer = aligned_empty(spec.shape, spec.dtype, self.host_alignment)
        np.copyto(buffer, stored)
        flat = buffer.reshape(-1)
        for placement, tensor in parts:
            part = flat[placement.start:placement.start + math.prod(placement.shape)]
            with torch.inference_mode(False):
                replacement = torch.from_numpy(part.reshape(placement.shape))
            move(tensor, as_dtype(replacement, tensor.dtype))
        return buffer

    def rebind(self, exe: Executable, name: str, tensor: Any, moved: bool = False) -> None:
        """Binds `tensor` as input `name` of `exe` again (after a change): nothing where its
        memory is already what is bound, over that memory where verbatim, else a copy.
        `moved`: only `move` changed it since it was bound (its values are the same)."""
        self.tensors[name] = tensor
        self.parts.pop(name, None)
        if stores_verbatim(exe.inputs[name].spec, tensor):
            if self.bound_over(exe, name, tensor):
                return
            value = self.over_memory(tensor)
            if value is not None:
                exe.bind(name, value, stored=True)
                return
        if not moved:
            value = host_array(tensor)
            copy = self.copy_on_cuda(exe.inputs[name].spec, value) if tensor.is_cuda else None
            if copy is not None:
                exe.bind(name, copy, stored=True)
                self.parts[name] = 0
            else:
                exe.bind(name, value)

    def bound_over(self, exe: Executable, name: str, tensor: Any) -> bool:
        """Whether `exe`'s input `name` is bound over `tensor`'s memory already."""
        host = exe.param_hosts.get(name)
        if host is not None:
            return address(host) == tensor.data_ptr() and host.nbytes == tensor.nbytes
        array = exe.param_arrays.get(name)
        if array is None or not tensor.is_cuda:
            return False
        from fusec.runtime.cuda_interop import shared_pool

        allocation = shared_pool(self.device).allocation(array.buffer)
        return allocation is not None and allocation.pointer.value == tensor.data_ptr()

    def over_memory(self, tensor: Any) -> Any | None:
        """What binds `tensor` over its own memory (moving it where needed), or None where it
        cannot be: a host array used in place, or a device array of the CUDA-shared pool."""
        if not self.reachable(tensor) or not tensor.nbytes:
            return None
        if tensor.is_cuda:
            return self.over_cuda_memory(tensor)
        if tensor.data_ptr() % self.host_alignment == 0:
            host = host_array(tensor)
            return host if address(host) == tensor.data_ptr() else None  # else converted
        if not movable(tensor):  # asked before any other tensor over its memory is made
            return None
        import torch

        aligned = aligned_empty(tuple(tensor.shape), TORCH_HOST_DTYPES[str(tensor.dtype)],
                                self.host_alignment)
        np.copyto(aligned, host_array(tensor))
        with torch.inference_mode(False):
            replacement = torch.from_numpy(aligned)
        move(tensor, as_dtype(replacement, tensor.dtype))
        return aligned

    def over_cuda_memory(self, tensor: Any) -> Any | None:
        """A device array over `tensor`'s memory where it is in the CUDA-shared pool, else
        over memory it is moved to there (where that is worth it), else None."""
        import torch
        from fusec.runtime.cuda_interop import from_torch, shared_pool, view_of

        pool = shared_pool(self.device)
        in_pool = tensor.data_ptr() in pool.allocations_by_pointer
        if not in_pool and (not movable(tensor)
                            or pool.allocation_bytes(tensor.nbytes) >= 2 * tensor.nbytes):
            return None
        bits = tensor.detach()
        if tensor.dtype == torch.bfloat16:
            bits = bits.view(torch.uint16)
        array = from_torch(bits, self.device)  # in the pool: over its memory; else one copy
        if in_pool:
            return array
        with torch.inference_mode(False):
            replacement = view_of(pool, array)
        move(tensor, as_dtype(replacement, tensor.dtype))
        return array
