// The column-statistics ops (dialects/column_stats.py): the custom form (properties at their
// default elided), and custom -> generic -> custom gives the same text.

// RUN: fusec-opt %s | filecheck %s --check-prefix=PRINT
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s --check-prefix=PRINT

// PRINT-LABEL: func.func @ops
// PRINT-NEXT:    %c = fused.centered_gram %x {scale = 2.500000e-01 : f32} : tensor<5x3xf32> -> tensor<3x3xf32>
// PRINT-NEXT:    %g = fused.centered_gram %x : tensor<5x3xf32> -> tensor<3x3xf32>
// PRINT-NEXT:    %p = fused.power_step_normalize %c, %q {eps = 1.000000e-03 : f32} : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
// PRINT-NEXT:    %z = fused.power_step_normalize %c, %q : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
// PRINT-NEXT:    %v = fused.explained_variance %c, %p : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<1x2xf32>
func.func @ops(%x: tensor<5x3xf32>, %q: tensor<3x2xf32>) -> (tensor<3x3xf32>, tensor<3x2xf32>, tensor<1x2xf32>) {
  %c = fused.centered_gram %x {scale = 0.25 : f32} : tensor<5x3xf32> -> tensor<3x3xf32>
  %g = fused.centered_gram %x {scale = 1.0 : f32} : tensor<5x3xf32> -> tensor<3x3xf32>
  %p = fused.power_step_normalize %c, %q {eps = 1.0e-3 : f32} : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %z = fused.power_step_normalize %c, %q : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %v = fused.explained_variance %c, %p : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<1x2xf32>
  func.return %g, %z, %v : tensor<3x3xf32>, tensor<3x2xf32>, tensor<1x2xf32>
}
