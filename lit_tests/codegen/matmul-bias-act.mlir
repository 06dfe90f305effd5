// fused.matmul_bias_act lowers to the gemm template. Its epilogue is a region of scalar IR
// generated from the op: the bias load at the output column, the add, then the activation's
// scalar ops (from the nn -> scalar tables), so every activation folds without a new template.
// The C epilogue function is printed from that region and passed to the template.

// RUN: fusec-opt %s -p lower-opencl | filecheck %s
// RUN: fusec-opt %s -t opencl | filecheck %s --check-prefix=CL

// CHECK-LABEL: func.func @linear(%x: memref<2x7x16xf32>, %w: memref<16x24xf32>, %b: memref<24xf32>) -> memref<2x7x24xf32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<2x7x24xf32>
// CHECK-NEXT:    kernel.template "gemm" {batch = 1 : i64, m = 14 : i64, n = 24 : i64, k = 16 : i64, rhs_batched = false} ins(%x, %w : memref<2x7x16xf32>, memref<16x24xf32>) outs(%[[Y]] : memref<2x7x24xf32>) extras(%b : memref<24xf32>) epilogue {
// CHECK-NEXT:    ^bb0(%acc: f32, %row: index, %col: index, %bias: memref<24xf32>):
// CHECK-NEXT:      %[[BV:.*]] = memref.load %bias[%col] : memref<24xf32>
// CHECK-NEXT:      %[[V:.*]] = arith.addf %acc, %[[BV]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[V]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:      %[[SIG:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:      %[[SILU:.*]] = arith.mulf %[[V]], %[[SIG]] : f32
// CHECK-NEXT:      kernel.yield %[[SILU]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : memref<2x7x24xf32>

// CL:      // @linear: 1 launches: linear_gemm_0
// CL:      inline float linear_gemm_0_epilogue(float acc, int row, int col, __global const float *restrict epi0) {
// CL-NEXT:   const float [[BV:v[0-9]+]] = epi0[col];
// CL-NEXT:   const float [[V:v[0-9]+]] = acc + [[BV]];
// CL-NEXT:   const float [[NEG:v[0-9]+]] = -[[V]];
// CL-NEXT:   const float [[E:v[0-9]+]] = exp([[NEG]]);
// CL-NEXT:   const float [[D:v[0-9]+]] = 1.0f + [[E]];
// CL-NEXT:   const float [[SIG:v[0-9]+]] = 1.0f / [[D]];
// CL-NEXT:   const float [[SILU:v[0-9]+]] = [[V]] * [[SIG]];
// CL-NEXT:   return [[SILU]];
// CL-NEXT: }
// CL:      void linear_gemm_0(
// CL-NEXT:     __global const float *restrict lhs,
// CL-NEXT:     __global const float *restrict rhs,
// CL-NEXT:     __global float *restrict out,
// CL-NEXT:     __global const float *restrict epi0)
// CL:      linear_gemm_0_epilogue(

func.func @linear(%x: tensor<2x7x16xf32>, %w: tensor<16x24xf32>, %b: tensor<24xf32>) -> tensor<2x7x24xf32> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<2x7x16xf32>, tensor<16x24xf32>, tensor<24xf32> -> tensor<2x7x24xf32>
  func.return %y : tensor<2x7x24xf32>
}
