// On a GPU a product of at most 8 rows sharing one B is one skinny launch, not split along K
// (gemm-split.mlir has the 9-row case that is), its epilogue (bias, relu) in the same kernel;
// with the knob skinny_gemm off it is split again.

// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=SKINNY
// RUN: fusec-opt %s -t 'opencl{device=gpu}' | filecheck %s --check-prefix=SKINNY-CL
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' --knob skinny_gemm=false | filecheck %s --check-prefix=OFF

// SKINNY-LABEL: func.func @few_rows(
// SKINNY:         kernel.template "gemm" {batch = 1 : i64, m = 2 : i64, n = 40 : i64, k = 1031 : i64, rhs_batched = false, skinny = true} ins(%x, %w : memref<2x1031xf32>, memref<1031x40xf32>) outs(%{{.*}} : memref<2x40xf32>) extras(%b : memref<40xf32>) epilogue {
// SKINNY-NOT:     gemm_split_sum
// SKINNY-CL:      // @few_rows: 1 launches: few_rows_gemm_0
// SKINNY-CL:      // few_rows_gemm_0: [2x1031] @ [1031x40], skinny (32x32 work-items, 32 columns per work-group), f32
// OFF-LABEL:    func.func @few_rows(
// OFF:            kernel.template "gemm_split_sum"
func.func @few_rows(%x: tensor<2x1031xf32>, %w: tensor<1031x40xf32>, %b: tensor<40xf32>) -> tensor<2x40xf32> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<2x1031xf32>, tensor<1031x40xf32>, tensor<40xf32> -> tensor<2x40xf32>
  func.return %y : tensor<2x40xf32>
}
