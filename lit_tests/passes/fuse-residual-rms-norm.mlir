// fuse-residual-rms-norm: the residual add folds into the norm over the last axis, and its guards.
// RUN: fusec-opt %s -p fuse-residual-rms-norm --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-residual-rms-norm,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-residual-rms-norm --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-residual-rms-norm,fuse-residual-rms-norm --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// (No dtype case: nn.add and the norm's verifier already force one float element type.)

// CHECK-LABEL: func.func @residual_rms(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.residual_rms_norm %x, %r, %g : (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x16xf32>
// UNFUSE-LABEL: func.func @residual_rms(
// UNFUSE-NEXT:  %[[RMS_IN:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// UNFUSE-NEXT:  %[[RMS:[^ ]+]] = nn.rms_norm %[[RMS_IN]], %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// UNFUSE-NEXT:  func.return %[[RMS]] : tensor<2x3x16xf32>
func.func @residual_rms(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.rms_norm %s, %g {eps = 1.0e-6 : f32} : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// The last axis named by its index; f16.
// CHECK-LABEL: func.func @positive_axis_f16(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.residual_rms_norm %x, %r, %g : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf16>
// UNFUSE-LABEL: func.func @positive_axis_f16(
// UNFUSE-NEXT:  %[[RMS_IN:[^ ]+]] = nn.add %x, %r : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
// UNFUSE-NEXT:  %[[RMS:[^ ]+]] = nn.rms_norm %[[RMS_IN]], %g : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
// UNFUSE-NEXT:  func.return %[[RMS]] : tensor<4x8xf16>
func.func @positive_axis_f16(%x: tensor<4x8xf16>, %r: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<4x8xf16> {
  %s = nn.add %x, %r : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %y = nn.rms_norm %s, %g {axis = 1 : i64} : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// -----

// The seed's bug: the residual sum of one stage is also a graph output (and the next stage's
// residual). Fusing it away would hand later readers the normalised tensor instead.
// CHECK-LABEL: func.func @negative_sum_returned(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.rms_norm %[[S]], %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[S]] : tensor<2x3x16xf32>, tensor<2x3x16xf32>
func.func @negative_sum_returned(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.rms_norm %s, %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  func.return %y, %s : tensor<2x3x16xf32>, tensor<2x3x16xf32>
}

// -----

// Two blocks share the residual stream: block 1's sum feeds block 2's sum too.
// CHECK-LABEL: func.func @negative_sum_extra_consumer(
// CHECK-NEXT:  %[[S1:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[N1:[^ ]+]] = nn.rms_norm %[[S1]], %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[S2:[^ ]+]] = nn.add %[[N1]], %[[S1]] : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[S2]] : tensor<2x3x16xf32>
func.func @negative_sum_extra_consumer(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %s1 = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %n1 = nn.rms_norm %s1, %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  %s2 = nn.add %n1, %s1 : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  func.return %s2 : tensor<2x3x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_axis_not_last(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.rms_norm %[[S]], %g {axis = 1 : i64} : tensor<2x3x16xf32>, tensor<3xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x16xf32>
func.func @negative_axis_not_last(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<3xf32>) -> tensor<2x3x16xf32> {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.rms_norm %s, %g {axis = 1 : i64} : tensor<2x3x16xf32>, tensor<3xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// The fused op takes x and residual of one type; a broadcast operand does not fit.
// CHECK-LABEL: func.func @negative_broadcast_residual(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.rms_norm %[[S]], %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[T:[^ ]+]] = nn.add %q, %r : tensor<3x1xf32>, tensor<16xf32> -> tensor<3x16xf32>
// CHECK-NEXT:  %[[Z:[^ ]+]] = nn.rms_norm %[[T]], %g : tensor<3x16xf32>, tensor<16xf32> -> tensor<3x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[Z]] : tensor<2x3x16xf32>, tensor<3x16xf32>
func.func @negative_broadcast_residual(%x: tensor<2x3x16xf32>, %r: tensor<16xf32>, %q: tensor<3x1xf32>, %g: tensor<16xf32>) -> (tensor<2x3x16xf32>, tensor<3x16xf32>) {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  %y = nn.rms_norm %s, %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  %t = nn.add %q, %r : tensor<3x1xf32>, tensor<16xf32> -> tensor<3x16xf32>
  %z = nn.rms_norm %t, %g : tensor<3x16xf32>, tensor<16xf32> -> tensor<3x16xf32>
  func.return %y, %z : tensor<2x3x16xf32>, tensor<3x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_not_an_add(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.sub %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.rms_norm %[[S]], %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x16xf32>
func.func @negative_not_an_add(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %s = nn.sub %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.rms_norm %s, %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// A norm already writing flattened rows (fuse-rms-norm-reshape) does not fit the fused op.
// CHECK-LABEL: func.func @negative_flattened_norm(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.rms_norm %[[S]], %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<6x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<6x16xf32>
func.func @negative_flattened_norm(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>) -> tensor<6x16xf32> {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.rms_norm %s, %g : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<6x16xf32>
  func.return %y : tensor<6x16xf32>
}
