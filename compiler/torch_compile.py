"""PyTorch programs through the driver: the dynamo backend's and ``fusec.compile``'s common
steps, and ``fusec.compile(module, example_inputs=...)``.

    exe = fusec.compile(model, example_inputs=(ids,), device="cpu")   # through torch.export
    logits = exe(ids)                                                 # tensors in, tensors out

`compile_imported` compiles one imported graph for a device (fusion pipeline, folding of
bound weights, lowering, the program build) and says what it became (fused ops, kernel
launches). `ShapeVariants` keeps one compiled graph per concrete set of input shapes (at most
``max_variants``, least recently used dropped), calls PyTorch itself where autograd needs
gradients (one warning), and writes the report (`fusec.compiler.torch_report`).
`ExportedExecutable` is what ``fusec.compile`` returns for an ``nn.Module`` or an
``ExportedProgram``.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation

from fusec import knobs as knob_registry
from fusec.codegen.kernels.common import DeviceInfo
from fusec.compiler.context import make_context
from fusec.compiler.diagnostics import FusecError
from fusec.compiler.driver import building, fuse_and_fold_with_origins, lower
from fusec.compiler.pipeline import run_pipeline
from fusec.compiler.torch_partition import (
    CompiledGraph,
    Options,
    PartitionStats,
    compile_aten_graph,
)
from fusec.compiler.torch_report import GraphReport, Reporter
from fusec.compiler.torch_weights import PartitionWeights, layouts_as_held
from fusec.errors import error_line
from fusec.frontends.torch_fx import ImportedGraph
from fusec.runtime.device import OpenCLDevice, select_device
from fusec.runtime.executable import Executable


def compile_imported(imported: ImportedGraph, device: OpenCLDevice, options: Options,
                     weights: PartitionWeights | None = None
                     ) -> tuple[Executable, PartitionStats]:
    """An executable of ``imported`` on ``device`` with its weights bound, and its counts.
    `weights`: the partition's bound tensors; those the plan stores verbatim, or as ranges
    of a folded weight's buffer, are held over one memory where they can be
    (`fusec.compiler.torch_weights`), the others copied (on CUDA, into the CUDA-shared pool:
    `PartitionWeights.copies`)."""
    module = imported.module
    filename = "<torch graph>"
    # The parameters are marked bound before the fusions run, as `fusec.compile(params=...)`
    # marks them (`fuse_and_fold`), so that those that pay only on weights (the QKV
    # projections' `fuse-shared-input-matmul`) see them.
    pipeline, folded = fuse_and_fold_with_origins(module, None, options.pipeline, filename,
                                                  imported.params)
    if pipeline not in ("", "none"):  # nothing bound: fuse_and_fold left the fusions to run
        run_pipeline(make_context(), module, pipeline, filename)
    params = dict(folded.params) if folded is not None else {}
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    fused = Counter(op.name for op in fn.body.block.ops if is_fused(op))
    compiled = lower(module, None, "none", DeviceInfo.from_device(device.device), filename,
                     options.launch_budget, True, options.allow_tf32, bound=list(params),
                     layouts=layouts_as_held(params, weights))
    building(compiled.plan)
    held = (weights.in_place(compiled.plan, params, folded.origins if folded else None)
            if weights is not None else {})
    if weights is not None:  # the copies, on CUDA where the kernels read them in place
        held.update(weights.copies(compiled.plan, {name: value for name, value in
                                                   params.items() if name not in held}))
    exe = Executable(compiled.plan, device,
                     {name: value for name, value in params.items() if name not in held},
                     stored=held)
    return exe, PartitionStats(imported.ops_in, fused, len(compiled.plan.launches))


FUSED_NN_OPS = ("nn.attention",)
"""``nn`` ops that run as one fused kernel (attention: scores, softmax and the weighted sum in
one launch), counted among the fused ops of the report."""


def is_fused(op: Operation) -> bool:
    return op.name.startswith("fused.") or op.name in FUSED_NN_OPS


def device_for(args: Sequence[Any], options: Options) -> OpenCLDevice:
    """The OpenCL device that runs a graph whose inputs are ``args``: the GPU for CUDA tensors
    (with CUDA sharing on), else the kind ``options.device`` names."""
    import torch

    cuda = any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)
    if cuda and options.device == "cpu":
        raise FusecError("fusec backend: CUDA tensors with device='cpu'; move them to the CPU "
                         "or use device='gpu'")
    device = select_device("gpu" if cuda else options.device)  # type: ignore[arg-type]
    if cuda:
        from fusec.runtime.cuda_interop import enable_cuda_sharing

        enable_cuda_sharing(device)
    return device


def needs_gradients(args: Sequence[Any]) -> bool:
    import torch

    return torch.is_grad_enabled() and any(
        isinstance(a, torch.Tensor) and a.requires_grad for a in args)


def shape_key(args: Sequence[Any]) -> tuple[Any, ...]:
    """What a compiled variant is specific to: each tensor's shape, dtype and device, each
    other argument's value (and that of a 0-d float64 tensor, a float dynamo passes so)."""
    import torch

    tensor = torch.Tensor
    key = []
    for a in args:
        if isinstance(a, tensor):
            key.append(("value", float(a)) if a.dtype == torch.float64 and a.dim() == 0
                       else (a.shape, a.dtype, a.device.type))
        else:
            key.append(("value", a))
    return tuple(key)


class ShapeVariants:
    """A graph compiled per concrete set of input shapes (see the module docstring).

    ``trace(args)`` gives the aten graph at ``args``' shapes (``make_fx`` of a dynamo graph,
    or an exported program); ``bound`` are the positions of parameters and buffers."""

    def __init__(self, trace: Callable[[list[Any]], Any], eager: Callable[..., Any],
                 bound: set[int], options: Options, reporter: Reporter, name: str):
        self.trace = trace
        self.eager = eager
        self.bound = bound
        self.options = options
        self.reporter = reporter
        self.name = name
        self.variants: OrderedDict[tuple[Any, ...], CompiledGraph] = OrderedDict()
        self.specializations = 0
        self.warned = False
        self.arity = -1
        self.free: list[int] = []
        """The positions of the arguments not bound, which a variant's `shape_key` is made of:
        a model's hundreds of parameters and buffers would cost more than the rest of a call's
        checks, and each partition compares them with what it bound on every call
        (`fusec.compiler.torch_partition.BoundTensors`), compiling again where one's shape or
        dtype changed."""

    def __call__(self, *args: Any) -> Any:
        if needs_gradients(args):
            if not self.warned:
                warnings.warn("fusec runs inference only: this graph needs gradients "
                              "(inputs or parameters require grad outside torch.no_grad or "
                              "torch.inference_mode), so PyTorch runs it", stacklevel=2)
                self.warned = True
            return self.eager(*args)
        if len(args) != self.arity:  # the positions not bound, worked out once
            self.arity = len(args)
            self.free = [i for i in range(len(args)) if i not in self.bound]
        key = shape_key(list(map(args.__getitem__, self.free)))
        variant = self.variants.get(key)
        if variant is not None and variant.stale(args):
            variant = None
        if variant is None:
            variant = self.compile(list(args))
            self.variants[key] = variant
            while len(self.variants) > self.options.max_variants:
                self.variants.popitem(last=False)
        else:
            self.variants.move_to_end(key)
        return variant.module(*args)

    def compile(self, args: list[Any]) -> CompiledGraph:
        import torch

        start = time.perf_counter()
        with torch.no_grad(), knob_registry.overridden(self.options.knobs):
            aten = self.trace(args)
            device = device_for(args, self.options)
            compiled = compile_aten_graph(aten, args, self.bound, device, self.options)
        self.specializations += 1
        compiled.compile_seconds = time.perf_counter() - start
        shapes = [list(a.shape) for i, a in enumerate(args)
                  if isinstance(a, torch.Tensor) and i not in self.bound]
        self.reporter.add(GraphReport.of(self.name, compiled, device.description,
                                         self.specializations, shapes))
        return compiled


class ExportedExecutable:
    """A module compiled through ``torch.export``: call it with the module's inputs (tensors);
    it returns what the module returns. A call at other shapes exports and compiles again
    (while the module is at hand; a loaded ``ExportedProgram`` runs at its own shapes)."""

    def __init__(self, program: Any, module: Any, options: Options, reporter: Reporter):
        self.program = program
        self.module = module
        self.programs = {shape_key(self.user_examples(program)): program}
        self.variants = ShapeVariants(self.trace, self.eager, set(), options, reporter,
                                      "exported")

    @staticmethod
    def user_examples(program: Any) -> list[Any]:
        from torch.export.graph_signature import InputKind

        placeholders = [n for n in program.graph_module.graph.nodes if n.op == "placeholder"]
        return [n.meta["val"] for n, spec in zip(placeholders,
                                                  program.graph_signature.input_specs,
                                                  strict=True)
                if spec.kind == InputKind.USER_INPUT]

    def program_for(self, user_args: list[Any]) -> Any:
        import torch

        key = shape_key(user_args)
        if key not in self.programs:
            if self.module is None:
                expected = [list(t.shape) for t in self.user_examples(self.program)]
                raise FusecError(f"error: the exported program takes inputs of shapes "
                                 f"{expected}, got {[list(a.shape) for a in user_args]}")
            self.programs[key] = torch.export.export(self.module, tuple(user_args))
        return self.programs[key]

    def flat_inputs(self, program: Any, user_args: list[Any]) -> tuple[list[Any], set[int]]:
        """The graph's inputs in placeholder order (parameters, buffers and constants from the
        module where it is at hand, so that changes to them are seen) and the bound ones."""
        from torch.export.graph_signature import InputKind

        state = dict(program.state_dict)
        if self.module is not None:
            state.update(dict(self.module.named_parameters()))
            state.update(dict(self.module.named_buffers()))
        users = iter(user_args)
        flat: list[Any] = []
        bound: set[int] = set()
        for i, spec in enumerate(program.graph_signature.input_specs):
            if spec.kind == InputKind.USER_INPUT:
                flat.append(next(users))
            elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                flat.append(state[spec.target] if spec.target in state
                            else program.constants[spec.target])
                bound.add(i)
            elif spec.kind == InputKind.CONSTANT_TENSOR:
                flat.append(program.constants[spec.target])
                bound.add(i)
            else:
                raise FusecError(f"error: exported programs with {spec.kind.name} inputs are "
                                 "not supported")
        return flat, bound

    def trace(self, flat: list[Any]) -> Any:
        return self.current.graph_module

    def eager(self, *flat: Any) -> Any:
        return self.current.graph_module(*flat)

    def __call__(self, *user_args: Any) -> Any:
        from torch.export.graph_signature import OutputKind
        from torch.utils import _pytree as pytree

        program = self.program_for(list(user_args))
        self.current = program
        flat, bound = self.flat_inputs(program, list(user_args))
        self.variants.bound = bound
        results = self.variants(*flat)
        results = list(results) if isinstance(results, tuple | list) else [results]
        user = [r for r, spec in zip(results, program.graph_signature.output_specs, strict=True)
                if spec.kind == OutputKind.USER_OUTPUT]
        return pytree.tree_unflatten(user, program.call_spec.out_spec)


def compile_torch(source: Any, example_inputs: Sequence[Any] | None, device: str = "auto",
                  report: str | None = None, allow_tf32: bool = False,
                  launch_budget: int | None = None, pipeline: str = "default",
                  log: bool = False, knobs: Mapping[str, bool | str] | None = None
                  ) -> ExportedExecutable:
    """``fusec.compile`` of a module (exported with ``example_inputs``) or of an
    ``ExportedProgram``; ``knobs`` are in force whenever it compiles (at its first call and
    at each new set of shapes)."""
    import torch

    options = Options.parse({"device": device, "report": report, "allow_tf32": allow_tf32,
                             "launch_budget": launch_budget, "pipeline": pipeline,
                             "knobs": knobs})
    reporter = Reporter(options.report, log)
    if isinstance(source, torch.export.ExportedProgram):
        return ExportedExecutable(source, None, options, reporter)
    if example_inputs is None:
        raise FusecError("error: fusec.compile of a torch.nn.Module needs example_inputs=(...)")
    source = source.eval()
    with torch.no_grad():
        try:
            program = torch.export.export(source, tuple(example_inputs))
        except Exception as e:
            first = error_line(e)
            raise FusecError(f"error: torch.export failed: {first}") from None
    return ExportedExecutable(program, source, options, reporter)
