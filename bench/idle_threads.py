"""Every runner's idle worker threads sleep, so that none takes the cores from the next one.

The libraries behind the peers keep their worker threads spinning for a while after each call,
waiting for more work: OpenBLAS (numpy's matmuls, and ``np.linalg.norm`` in the harness's check)
about 2**28 cycles, the OpenMP runtime of PyTorch until ``OMP_WAIT_POLICY`` says otherwise, ONNX
Runtime's pool unless its session says so (`fusec.bench.peer_onnx` turns that off). On a machine
of few cores the spinning threads take the cores the next runner in the interleaved timing runs
on, so it is timed at half speed. Measured on Intel CPU OpenCL, 2 cores: a 6144x128 softmax timed
right after the harness's check took fusec 0.39 ms and ONNX Runtime 0.30 ms a call; with
OpenBLAS's threads sleeping when idle, 0.22 and 0.19, as each takes alone; PyTorch's spinning
made a GEMM with an epilogue 6.3 ms for 3.1 ms of kernels.

Importing this module, before numpy or torch is first imported, makes OpenBLAS's and OpenMP's
threads sleep as soon as they are idle. Each runner then pays to wake its threads at the start
of a call, as fusec's OpenCL runtime does. Values already in the environment are kept.
"""

from __future__ import annotations

import os

SETTINGS = {
    "OPENBLAS_THREAD_TIMEOUT": "4",   # 2**4 cycles of spinning (OpenBLAS's least)
    "OMP_WAIT_POLICY": "PASSIVE",
}

for name, value in SETTINGS.items():
    os.environ.setdefault(name, value)

