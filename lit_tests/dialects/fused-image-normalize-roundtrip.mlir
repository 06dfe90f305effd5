// fused.image_normalize (dialects/image_normalize.py): the custom form (properties at their
// default elided, optional gain and bias), and custom -> generic -> custom gives the same text.

// RUN: fusec-opt %s | filecheck %s --check-prefix=PRINT
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s --check-prefix=PRINT

// PRINT-LABEL: func.func @all_parts
// PRINT-NEXT:    %y = fused.image_normalize %x gain %g bias %b {eps = 1.000000e-03 : f32, variance = "moments", clamp_min = 0.000000e+00 : f32, clamp_max = 1.000000e+00 : f32, gamma = 2.200000e+00 : f32, gamma_first = true} : tensor<2x3x4x4xf32> gain tensor<3x1x1xf32> bias tensor<2x3x1x1xf32> -> tensor<2x3x4x4xf32>
// PRINT-NEXT:    %z = fused.image_normalize %x bias %s : tensor<2x3x4x4xf32> bias tensor<f32> -> tensor<2x3x4x4xf32>
// PRINT-NEXT:    %w = fused.image_normalize %x : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
func.func @all_parts(%x: tensor<2x3x4x4xf32>, %g: tensor<3x1x1xf32>, %b: tensor<2x3x1x1xf32>, %s: tensor<f32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  %y = fused.image_normalize %x gain %g bias %b {eps = 1.0e-3 : f32, variance = "moments", clamp_min = 0.0 : f32, clamp_max = 1.0 : f32, gamma = 2.2 : f32, gamma_first = true} : tensor<2x3x4x4xf32> gain tensor<3x1x1xf32> bias tensor<2x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %z = fused.image_normalize %x bias %s : tensor<2x3x4x4xf32> bias tensor<f32> -> tensor<2x3x4x4xf32>
  %w = fused.image_normalize %x : tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  func.return %y, %z, %w : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

