"""A fuzzing run over model files: ``fusec-fuzz --models``.

Mutant ``s`` (seeds ``seed`` to ``seed + count - 1``) is one mutation (`model_mutate`) of
model ``s mod len(models)``, written into a folder of its own under a temporary campaign folder
that also holds the bait file `OUTSIDE` (watched: `model_oracle.ReadWatch`), with inputs made
from the original model's graph inputs (`model_inputs`). ``fusec-run`` runs it in a worker
process (`model_oracle.judge`); where it exits 0, ONNX Runtime runs it too, and fusec's numbers
must be its (`model_oracle.compare`) where ONNX Runtime accepts the file. Failing mutants are
written to ``out`` as ``mutant-<seed>/`` (the model, its data files, inputs, ``what.txt``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .model_mutate import OUTSIDE, mutate_model
from .model_oracle import ReadWatch, Worker, compare, judge, run_onnxruntime

TEST_MODELS = Path(__file__).resolve().parents[1] / "tests" / "frontends" / "models"
"""The ONNX test models (real Hugging Face exports): the default seeds of a campaign."""


@dataclass
class ModelReport:
    mutants: int = 0
    matched: int = 0
    """fusec-run exited 0 with ONNX Runtime's numbers."""
    refused: list[str] = field(default_factory=list)
    """fusec-run exited 1 with one line: the mutation and that line."""
    lenient: list[str] = field(default_factory=list)
    """fusec-run exited 0 where ONNX Runtime refused the file (no numbers to compare)."""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.mutants} model mutants in {self.seconds:.1f} s: {self.matched} ran and "
                f"matched ONNX Runtime, {len(self.refused)} refused in one line, "
                f"{len(self.lenient)} accepted where ONNX Runtime refuses, "
                f"{len(self.failures)} failed")


def model_inputs(model: object, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs for the graph inputs of `model` (not initializers): floats standard normal,
    integers in ``[0, 4)`` (token ids, positions), a ``mask`` all ones but its last element
    (so that no query of a causal model has every key masked: fusec and ONNX Runtime differ on
    such a row), booleans random; a symbolic dimension is 2."""
    from onnx import helper

    g = model.graph  # type: ignore[attr-defined]
    weights = {t.name for t in g.initializer}
    inputs = {}
    for value in g.input:
        if value.name in weights:
            continue
        t = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 2 for d in t.shape.dim]
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        if dtype.kind == "f":
            array = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            array = rng.integers(0, 2, shape).astype(bool)
        elif "mask" in value.name:
            array = np.ones(shape, dtype)
            if array.size:
                array.reshape(-1)[-1] = 0
        else:
            array = rng.integers(0, 4, shape).astype(dtype)
        inputs[value.name] = array
    return inputs


def run_models(seed: int, count: int, models: Sequence[Path],
               fusec_job: Callable[[str], Any], out: Path | None = None,
               seconds: float = 120.0,
               progress: Callable[[str], None] = lambda line: None,
               ort_job: Callable[[str], Any] = run_onnxruntime,
               budget: float | None = None) -> ModelReport:
    """Tries `count` mutants (see the module docstring); `seconds` is each run's limit, and
    no mutant starts after `budget` seconds. `fusec_job` runs a mutant's folder in fusec-run
    (`model_oracle.run_fusec` with fusec-run's entry point: ``fusec-fuzz``'s
    `fusec_run_job`), `ort_job` in ONNX Runtime, each in its worker; both module-level
    functions (a spawned worker imports them)."""
    import onnx

    report = ModelReport()
    started = time.perf_counter()
    originals = [onnx.load(str(path), load_external_data=False) for path in models]
    fusec, ort = Worker(fusec_job), Worker(ort_job)
    with tempfile.TemporaryDirectory(prefix="fusec-fuzz-models-") as tmp:
        root = Path(tmp).resolve()
        bait = root / OUTSIDE
        bait.write_bytes(np.random.default_rng(0).bytes(1 << 16))
        watch = ReadWatch(bait)
        try:
            for s in range(seed, seed + count):
                if budget is not None and time.perf_counter() - started > budget:
                    break
                name = models[s % len(models)].name
                problem = try_mutant(s, originals[s % len(models)], root, watch, fusec, ort,
                                     seconds, report)
                report.mutants += 1
                if problem is not None:
                    line = f"mutant seed {s} of {name}: {problem}"
                    if out is not None:
                        line += f" -> {keep(root / f'm{s}', out / f'mutant-{s}', line)}"
                    report.failures.append(line)
                    progress(line)
                shutil.rmtree(root / f"m{s}", ignore_errors=True)
        finally:
            watch.close()
            fusec.close()
            ort.close()
    report.seconds = time.perf_counter() - started
    return report


def try_mutant(s: int, original: object, root: Path, watch: ReadWatch, fusec: Worker,
               ort: Worker, seconds: float, report: ModelReport) -> str | None:
    """Mutant `s` of `original` through fusec-run (and ONNX Runtime); what failed, if any."""
    rng = np.random.default_rng(s)
    mutant = mutate_model(rng, original, str(root / OUTSIDE))
    folder = root / f"m{s}"
    folder.mkdir()
    (folder / "sub").mkdir()
    for file, data in mutant.files.items():
        (folder / file).write_bytes(data)
    for file, target in mutant.links.items():
        os.symlink(target, folder / file)
    np.savez(folder / "inputs.npz", **model_inputs(original, rng))
    (folder / "what.txt").write_text(mutant.what + "\n")
    watch.opened()  # forget what came before
    outcome = fusec(str(folder), seconds)
    problem = judge(outcome, watch.opened())
    if problem is not None:
        return f"{mutant.what}: {problem}"
    code, _, err = outcome.result
    if code != 0:
        report.refused.append(f"mutant seed {s}: {mutant.what}: {err.strip()}")
        return None
    expected = ort(str(folder), seconds)
    if expected.result is None or expected.result[0] != "ok":
        report.lenient.append(f"mutant seed {s}: {mutant.what}")
        return None
    differs = compare(folder / "outputs.npz", expected.result[1])
    if differs is not None:
        return f"{mutant.what}: exit 0 but {differs}"
    report.matched += 1
    return None


def keep(folder: Path, to: Path, line: str) -> Path:
    """Copies a failing mutant's folder to `to` (links as links), with the finding."""
    shutil.rmtree(to, ignore_errors=True)
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(folder, to, symlinks=True)
    (to / "finding.txt").write_text(line + "\n")
    return to
