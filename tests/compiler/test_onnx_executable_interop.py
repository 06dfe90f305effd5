"""An imported model takes and gives what `Executable` does: device arrays in, device arrays out
(in the IR's dtypes, left on the device); torch tensors in, tensors out (in the model's
dtypes); numpy in, numpy out. Each agrees with the numpy call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from fusec.compiler.driver import compile as fusec_compile  # noqa: E402
from fusec.runtime.device_array import DeviceArray  # noqa: E402

MODEL = Path(__file__).parents[1] / "frontends" / "models" / "hf_bert_sdpa_dynamo_op18.onnx"


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    return fusec_compile(str(MODEL), device="cpu")


def feeds() -> dict[str, np.ndarray]:
    mask = np.ones((1, 8), np.int64)
    mask[0, -3:] = 0
    return {"input_ids": np.arange(2, 10, dtype=np.int64).reshape(1, 8), "attention_mask": mask}


def test_device_arrays_in_and_out(model) -> None:  # type: ignore[no-untyped-def]
    (expected,) = model(**feeds())
    device = {name: model.exe.to_device(array.astype(np.int32))
              for name, array in feeds().items()}
    (out,) = model(**device)
    assert isinstance(out, DeviceArray)
    np.testing.assert_array_equal(out.get(), expected)


def test_torch_tensors_in_and_out(model) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    (expected,) = model(**feeds())
    (out,) = model(**{name: torch.from_numpy(a) for name, a in feeds().items()})
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), expected)


def test_int64_device_array_is_refused_in_one_line(model) -> None:  # type: ignore
    from fusec.errors import InputError

    device = {name: model.exe.to_device(array) for name, array in feeds().items()}
    with pytest.raises(InputError, match="dtype int64, expected int32"):
        model(**device)
