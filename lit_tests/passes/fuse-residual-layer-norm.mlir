// fuse-residual-layer-norm: the residual add folds into the norm over the last axis, and its guards.
// RUN: fusec-opt %s -p fuse-residual-layer-norm --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-residual-layer-norm,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-residual-layer-norm --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-residual-layer-norm,fuse-residual-layer-norm --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// (No dtype case: nn.add and the norm's verifier already force one float element type.)

// CHECK-LABEL: func.func @residual_ln(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.residual_layer_norm %x, %r, %g, %b {eps = 1.000000e-12 : f32} : (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x16xf32>
// UNFUSE-LABEL: func.func @residual_ln(
// UNFUSE-NEXT:  %[[LN_IN:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// UNFUSE-NEXT:  %[[LN:[^ ]+]] = nn.layer_norm %[[LN_IN]], %g, %b {eps = 1.000000e-12 : f32} : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// UNFUSE-NEXT:  func.return %[[LN]] : tensor<2x3x16xf32>
func.func @residual_ln(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.layer_norm %s, %g, %b {eps = 1.0e-12 : f32} : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// The last axis named by its index; f16.
// CHECK-LABEL: func.func @positive_axis_f16(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.residual_layer_norm %x, %r, %g, %b : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf16>
// UNFUSE-LABEL: func.func @positive_axis_f16(
// UNFUSE-NEXT:  %[[LN_IN:[^ ]+]] = nn.add %x, %r : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
// UNFUSE-NEXT:  %[[LN:[^ ]+]] = nn.layer_norm %[[LN_IN]], %g, %b : tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16> -> tensor<4x8xf16>
// UNFUSE-NEXT:  func.return %[[LN]] : tensor<4x8xf16>
func.func @positive_axis_f16(%x: tensor<4x8xf16>, %r: tensor<4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  %s = nn.add %x, %r : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  %y = nn.layer_norm %s, %g, %b {axis = 1 : i64} : tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// -----

// The seed's bug: the residual sum of one stage is also a graph output (and the next stage's
// residual). Fusing it away would hand later readers the normalised tensor instead.
// CHECK-LABEL: func.func @negative_sum_returned(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.layer_norm %[[S]], %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[S]] : tensor<2x3x16xf32>, tensor<2x3x16xf32>
func.func @negative_sum_returned(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.layer_norm %s, %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  func.return %y, %s : tensor<2x3x16xf32>, tensor<2x3x16xf32>
}

// -----

// Two blocks share the residual stream: block 1's sum feeds block 2's sum too.
// CHECK-LABEL: func.func @negative_sum_extra_consumer(
// CHECK-NEXT:  %[[S1:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[N1:[^ ]+]] = nn.layer_norm %[[S1]], %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[S2:[^ ]+]] = nn.add %[[N1]], %[[S1]] : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[S2]] : tensor<2x3x16xf32>
func.func @negative_sum_extra_consumer(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %s1 = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %n1 = nn.layer_norm %s1, %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  %s2 = nn.add %n1, %s1 : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  func.return %s2 : tensor<2x3x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_axis_not_last(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.layer_norm %[[S]], %g, %b {axis = 1 : i64} : tensor<2x3x16xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x16xf32>
func.func @negative_axis_not_last(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x16xf32> {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.layer_norm %s, %g, %b {axis = 1 : i64} : tensor<2x3x16xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}

// -----

// The fused op takes x and residual of one type; a broadcast operand does not fit.
// CHECK-LABEL: func.func @negative_broadcast_residual(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.add %x, %r : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.layer_norm %[[S]], %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[T:[^ ]+]] = nn.add %q, %r : tensor<3x1xf32>, tensor<16xf32> -> tensor<3x16xf32>
// CHECK-NEXT:  %[[Z:[^ ]+]] = nn.layer_norm %[[T]], %g, %b : tensor<3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<3x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[Z]] : tensor<2x3x16xf32>, tensor<3x16xf32>
func.func @negative_broadcast_residual(%x: tensor<2x3x16xf32>, %r: tensor<16xf32>, %q: tensor<3x1xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<2x3x16xf32>, tensor<3x16xf32>) {
  %s = nn.add %x, %r : tensor<2x3x16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  %y = nn.layer_norm %s, %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  %t = nn.add %q, %r : tensor<3x1xf32>, tensor<16xf32> -> tensor<3x16xf32>
  %z = nn.layer_norm %t, %g, %b : tensor<3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<3x16xf32>
  func.return %y, %z : tensor<2x3x16xf32>, tensor<3x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_not_an_add(
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.sub %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.layer_norm %[[S]], %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x16xf32>
func.func @negative_not_an_add(%x: tensor<2x3x16xf32>, %r: tensor<2x3x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %s = nn.sub %x, %r : tensor<2x3x16xf32>, tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  %y = nn.layer_norm %s, %g, %b : tensor<2x3x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x3x16xf32>
  func.return %y : tensor<2x3x16xf32>
}
