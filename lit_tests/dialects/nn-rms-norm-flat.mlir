// nn.rms_norm over the last axis may write its rows flattened to 2-D ([a, b, H] -> [a*b, H]),
// the form fuse-rms-norm-reshape leaves; any other result shape is an error.
// RUN: fusec-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @flat
// CHECK-NEXT:    %{{.*}} = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
func.func @flat(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<6x8xf32> {
  %n = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  func.return %n : tensor<6x8xf32>
}

// -----

// CHECK: 'nn.rms_norm' result type tensor<3x16xf32> must equal the input type tensor<2x3x8xf32> or flatten its leading dimensions
func.func @not_rows(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<3x16xf32> {
  %n = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<3x16xf32>
  func.return %n : tensor<3x16xf32>
}

// -----

// CHECK: 'nn.rms_norm' result type tensor<6x8xf32> must equal the input type tensor<2x3x8xf32> or flatten its leading dimensions
func.func @not_last_axis(%x: tensor<2x3x8xf32>, %g: tensor<3xf32>) -> tensor<6x8xf32> {
  %n = nn.rms_norm %x, %g {axis = 1 : i64} : tensor<2x3x8xf32>, tensor<3xf32> -> tensor<6x8xf32>
  func.return %n : tensor<6x8xf32>
}

// -----

// CHECK: 'nn.layer_norm' result type tensor<6x8xf32> must equal the input type tensor<2x3x8xf32>{{$}}
func.func @layer_norm_keeps_shape(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<6x8xf32> {
  %n = nn.layer_norm %x, %g, %g : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  func.return %n : tensor<6x8xf32>
}
