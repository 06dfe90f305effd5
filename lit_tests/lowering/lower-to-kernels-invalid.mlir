// lower-to-kernels fails with one located line naming the op it cannot lower.

// RUN: fusec-opt %s -p lower-to-kernels --split-input-file --verify-diagnostics | filecheck %s
// RUN: not fusec-opt %s -p lower-opencl --split-input-file 2>&1 | filecheck %s
// RUN: not fusec-opt %s -p 'lower-to-kernels{device=tpu}' 2>&1 | filecheck %s --check-prefix=DEVICE
// RUN: not fusec-opt %s -p 'lower-to-kernels{reduce-vector-width=3}' 2>&1 | filecheck %s --check-prefix=WIDTH
// RUN: not fusec-opt %s -p 'lower-to-kernels{cpu-chunk-min=0}' 2>&1 | filecheck %s --check-prefix=CHUNK
// RUN: not fusec-opt %s -p 'lower-to-kernels{gemm-split-depth=0}' 2>&1 | filecheck %s --check-prefix=DEPTH
// RUN: not fusec-opt %s -p 'lower-to-kernels{local-size=48}' 2>&1 | filecheck %s --check-prefix=LOCAL
// RUN: not fusec-opt %s -p 'lower-to-kernels{device=gpu gpu-pointwise-local-size=0}' 2>&1 | filecheck %s --check-prefix=POINTWISE
// RUN: not fusec-opt %s -p 'lower-to-kernels{vector-width=0}' 2>&1 | filecheck %s --check-prefix=VECTOR

// Bad options are command-line errors (exit 2), before anything is lowered.
// DEVICE: fusec-opt: bad options for pass 'lower-to-kernels': device must be one of cpu, gpu, got 'tpu'
// WIDTH: fusec-opt: bad options for pass 'lower-to-kernels': reduce-vector-width must be 1, 2, 4, 8 or 16, got 3
// CHUNK: fusec-opt: bad options for pass 'lower-to-kernels': cpu-chunk-min must be positive, got 0
// DEPTH: fusec-opt: bad options for pass 'lower-to-kernels': gemm-split-depth must be positive, got 0
// LOCAL: fusec-opt: bad options for pass 'lower-to-kernels': local-size must be a power of 2, got 48
// POINTWISE: fusec-opt: bad options for pass 'lower-to-kernels': gpu-pointwise-local-size must be a power of 2, got 0
// VECTOR: fusec-opt: bad options for pass 'lower-to-kernels': vector-width must be positive, got 0

// Element types without an OpenCL lowering fail with the function and its location.
// CHECK: lower-to-kernels-invalid.mlir:[[# @LINE + 1]]:1: error: lower-to-kernels: cannot lower the arguments of @negative_f64: element type f64 is not supported by the OpenCL backend (f32, f16, bf16, i32, i8 and i1 are)
func.func @negative_f64(%x: tensor<4xf64>) -> tensor<2x2xf64> {
  %y = nn.reshape %x : tensor<4xf64> -> tensor<2x2xf64>
  func.return %y : tensor<2x2xf64>
}
