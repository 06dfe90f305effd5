// fuse-rms-norm-reshape: reshape(rms_norm(x)) that only flattens leading dims -> one rms_norm writing the
// flattened rows; and its guards.
// RUN: fusec-opt %s -p fuse-rms-norm-reshape --split-input-file | filecheck %s
// unfuse leaves the flattened nn.rms_norm as it is (it is not a fused op):
// RUN: fusec-opt %s -p 'fuse-rms-norm-reshape,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-rms-norm-reshape --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-rms-norm-reshape,fuse-rms-norm-reshape --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The seed's Qwen pre-norm: normalised rows reshaped to 2-D for a matmul.
// CHECK-LABEL: func.func @flatten_for_matmul(
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.rms_norm %x, %g : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %[[F]], %w : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  func.return %[[M]] : tensor<8x16xf32>
// UNFUSE-LABEL: func.func @flatten_for_matmul(
// UNFUSE-NEXT:  %[[F:[^ ]+]] = nn.rms_norm %x, %g : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// UNFUSE-NEXT:  %[[M:[^ ]+]] = nn.matmul %[[F]], %w : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
// UNFUSE-NEXT:  func.return %[[M]] : tensor<8x16xf32>
func.func @flatten_for_matmul(%x: tensor<1x8x64xf32>, %g: tensor<64xf32>, %w: tensor<64x16xf32>) -> tensor<8x16xf32> {
  %n = nn.rms_norm %x, %g : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %f = nn.reshape %n : tensor<1x8x64xf32> -> tensor<8x64xf32>
  %m = nn.matmul %f, %w : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
  func.return %m : tensor<8x16xf32>
}

// -----

// Three leading dimensions, the last axis by index, the reshape returned.
// CHECK-LABEL: func.func @flatten_4d_returned(
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.rms_norm %x, %g {axis = 3 : i64, eps = 1.000000e-05 : f32} : tensor<2x2x3x8xf16>, tensor<8xf16> -> tensor<12x8xf16>
// CHECK-NEXT:  func.return %[[F]] : tensor<12x8xf16>
func.func @flatten_4d_returned(%x: tensor<2x2x3x8xf16>, %g: tensor<8xf16>) -> tensor<12x8xf16> {
  %n = nn.rms_norm %x, %g {axis = 3 : i64, eps = 1.0e-5 : f32} : tensor<2x2x3x8xf16>, tensor<8xf16> -> tensor<2x2x3x8xf16>
  %f = nn.reshape %n : tensor<2x2x3x8xf16> -> tensor<12x8xf16>
  func.return %f : tensor<12x8xf16>
}

// -----

// CHECK-LABEL: func.func @negative_norm_returned(
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[F]], %[[N]] : tensor<6x8xf32>, tensor<2x3x8xf32>
func.func @negative_norm_returned(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> (tensor<6x8xf32>, tensor<2x3x8xf32>) {
  %n = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %f = nn.reshape %n : tensor<2x3x8xf32> -> tensor<6x8xf32>
  func.return %f, %n : tensor<6x8xf32>, tensor<2x3x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_norm_extra_consumer(
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  %[[E:[^ ]+]] = nn.exp %[[N]] : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  func.return %[[F]], %[[E]] : tensor<6x8xf32>, tensor<2x3x8xf32>
func.func @negative_norm_extra_consumer(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> (tensor<6x8xf32>, tensor<2x3x8xf32>) {
  %n = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %f = nn.reshape %n : tensor<2x3x8xf32> -> tensor<6x8xf32>
  %e = nn.exp %n : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  func.return %f, %e : tensor<6x8xf32>, tensor<2x3x8xf32>
}

// -----

// [2, 3, 8] -> [2, 24] folds the last axis into another: not a leading flatten.
// CHECK-LABEL: func.func @negative_not_leading(
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<2x3x8xf32> -> tensor<2x24xf32>
// CHECK-NEXT:  func.return %[[F]] : tensor<2x24xf32>
func.func @negative_not_leading(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<2x24xf32> {
  %n = nn.rms_norm %x, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %f = nn.reshape %n : tensor<2x3x8xf32> -> tensor<2x24xf32>
  func.return %f : tensor<2x24xf32>
}

// -----

// CHECK-LABEL: func.func @negative_unflatten(
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.rms_norm %x, %g : tensor<6x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<6x8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  func.return %[[F]] : tensor<2x3x8xf32>
func.func @negative_unflatten(%x: tensor<6x8xf32>, %g: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %n = nn.rms_norm %x, %g : tensor<6x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %f = nn.reshape %n : tensor<6x8xf32> -> tensor<2x3x8xf32>
  func.return %f : tensor<2x3x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_axis_not_last(
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.rms_norm %x, %g {axis = 1 : i64} : tensor<2x3x8xf32>, tensor<3xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[F]] : tensor<6x8xf32>
func.func @negative_axis_not_last(%x: tensor<2x3x8xf32>, %g: tensor<3xf32>) -> tensor<6x8xf32> {
  %n = nn.rms_norm %x, %g {axis = 1 : i64} : tensor<2x3x8xf32>, tensor<3xf32> -> tensor<2x3x8xf32>
  %f = nn.reshape %n : tensor<2x3x8xf32> -> tensor<6x8xf32>
  func.return %f : tensor<6x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_layer_norm(
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.layer_norm %x, %g, %g : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[F]] : tensor<6x8xf32>
func.func @negative_layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<6x8xf32> {
  %n = nn.layer_norm %x, %g, %g : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  %f = nn.reshape %n : tensor<2x3x8xf32> -> tensor<6x8xf32>
  func.return %f : tensor<6x8xf32>
}
