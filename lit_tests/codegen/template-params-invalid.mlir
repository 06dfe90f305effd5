// Hand-written kernel IR: a kernel.template missing a parameter its template reads, or with one
// of the wrong kind, is one line, exit 1 (an assert failed in codegen: internal error, exit 70).

// RUN: sed 's/k = 8 : i64/k = 8.0 : f64/' %s > %t.float.mlir
// RUN: not fusec-opt %t.float.mlir -t opencl 2>&1 | filecheck %s --check-prefix=KIND
// KIND: {{^}}fusec-opt: opencl target: kernel.template "gemm" parameter 'k' must be an integer, got 8.000000e+00 : f64{{$}}
// RUN: sh -c 'fusec-opt %t.float.mlir -t opencl 2>/dev/null; test $? -eq 1'
// RUN: sed 's/k = 8 : i64, //' %s > %t.missing.mlir
// RUN: not fusec-opt %t.missing.mlir -t opencl 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: {{^}}fusec-opt: opencl target: kernel.template "gemm" needs the parameter 'k'{{$}}
// RUN: fusec-opt %s -t opencl | filecheck %s --check-prefix=OK
// OK: __kernel

builtin.module {
  func.func @mm(%x: memref<4x8xf32>, %w: memref<8x8xf32>) -> memref<4x8xf32> {
    %0 = kernel.alloc slot 0 : memref<4x8xf32>
    kernel.template "gemm" {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 8 : i64, rhs_batched = false} ins(%x, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%0 : memref<4x8xf32>) epilogue {
    ^bb0(%acc: f32, %row: index, %col: index):
      kernel.yield %acc : f32
    }
    func.return %0 : memref<4x8xf32>
  }
}
