// fuse-swiglu-dual-matmul: mul(silu(matmul(x, wg)), matmul(x, wu)) -> fused.swiglu(matmul(x, concat(wu, wg))),
// and its guards.
// RUN: fusec-opt %s -p fuse-swiglu-dual-matmul --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-swiglu-dual-matmul,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-swiglu-dual-matmul --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-swiglu-dual-matmul,fuse-swiglu-dual-matmul --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The seed's Qwen3 FFN: gate matmul declared first, mul(silu(gate), up).
// CHECK-LABEL: func.func @gate_first_decl(
// CHECK-NEXT:  %[[UP_GATE_W:[^ ]+]] = nn.concat %wu, %wg {axis = 1 : i64} : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x32xf32>
// CHECK-NEXT:  %[[UP_GATE:[^ ]+]] = nn.matmul %x, %[[UP_GATE_W]] : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.swiglu %[[UP_GATE]] : tensor<4x32xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x16xf32>
// UNFUSE-LABEL: func.func @gate_first_decl(
// UNFUSE-NEXT:  %[[UP_GATE_W:[^ ]+]] = nn.concat %wu, %wg {axis = 1 : i64} : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x32xf32>
// UNFUSE-NEXT:  %[[UP_GATE:[^ ]+]] = nn.matmul %x, %[[UP_GATE_W]] : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
// UNFUSE-NEXT:  %[[FIRST_HALF:[^ ]+]] = nn.narrow %[[UP_GATE]] {axis = 1 : i64, start = 0 : i64, length = 16 : i64} : tensor<4x32xf32> -> tensor<4x16xf32>
// UNFUSE-NEXT:  %[[SECOND_HALF:[^ ]+]] = nn.narrow %[[UP_GATE]] {axis = 1 : i64, start = 16 : i64, length = 16 : i64} : tensor<4x32xf32> -> tensor<4x16xf32>
// UNFUSE-NEXT:  %[[GATE_ACT:[^ ]+]] = nn.silu %[[SECOND_HALF]] : tensor<4x16xf32> -> tensor<4x16xf32>
// UNFUSE-NEXT:  %[[SWIGLU:[^ ]+]] = nn.mul %[[FIRST_HALF]], %[[GATE_ACT]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// UNFUSE-NEXT:  func.return %[[SWIGLU]] : tensor<4x16xf32>
func.func @gate_first_decl(%x: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// Up declared first, mul(up, silu(gate)), batched x.
// CHECK-LABEL: func.func @up_first_decl(
// CHECK-NEXT:  %[[UP_GATE_W:[^ ]+]] = nn.concat %wu, %wg {axis = 1 : i64} : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<32x16xf32>
// CHECK-NEXT:  %[[UP_GATE:[^ ]+]] = nn.matmul %x, %[[UP_GATE_W]] : tensor<2x3x32xf32>, tensor<32x16xf32> -> tensor<2x3x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.swiglu %[[UP_GATE]] : tensor<2x3x16xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x8xf32>
func.func @up_first_decl(%x: tensor<2x3x32xf32>, %wu: tensor<32x8xf32>, %wg: tensor<32x8xf32>) -> tensor<2x3x8xf32> {
  %u = nn.matmul %x, %wu : tensor<2x3x32xf32>, tensor<32x8xf32> -> tensor<2x3x8xf32>
  %g = nn.matmul %x, %wg : tensor<2x3x32xf32>, tensor<32x8xf32> -> tensor<2x3x8xf32>
  %s = nn.silu %g : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %y = nn.mul %u, %s : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}

// -----

// The gate projection has another reader (the seed checked only the silu's uses).
// CHECK-LABEL: func.func @negative_gate_matmul_extra_consumer(
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[E:[^ ]+]] = nn.exp %[[G]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[E]] : tensor<4x16xf32>, tensor<4x16xf32>
func.func @negative_gate_matmul_extra_consumer(%x: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %e = nn.exp %g : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y, %e : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_up_matmul_returned(
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[U]] : tensor<4x16xf32>, tensor<4x16xf32>
func.func @negative_up_matmul_returned(%x: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y, %u : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_silu_returned(
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[S]] : tensor<4x16xf32>, tensor<4x16xf32>
func.func @negative_silu_returned(%x: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y, %s : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @negative_different_inputs(
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %z, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x16xf32>
func.func @negative_different_inputs(%x: tensor<4x32xf32>, %z: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %z, %wu : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// Up is 1 wide and the mul broadcasts it: the halves are not one shape.
// CHECK-LABEL: func.func @negative_weight_shapes_differ(
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x16xf32>
func.func @negative_weight_shapes_differ(%x: tensor<4x32xf32>, %wg: tensor<32x16xf32>, %wu: tensor<32x1xf32>) -> tensor<4x16xf32> {
  %g = nn.matmul %x, %wg : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.matmul %x, %wu : tensor<4x32xf32>, tensor<32x1xf32> -> tensor<4x1xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// Batched (3-D) weights cannot be concatenated into one [K, 2N] weight.
// CHECK-LABEL: func.func @negative_batched_weights(
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.matmul %x, %wg : tensor<2x4x32xf32>, tensor<2x32x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %x, %wu : tensor<2x4x32xf32>, tensor<2x32x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<2x4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x4x16xf32>
func.func @negative_batched_weights(%x: tensor<2x4x32xf32>, %wg: tensor<2x32x16xf32>, %wu: tensor<2x32x16xf32>) -> tensor<2x4x16xf32> {
  %g = nn.matmul %x, %wg : tensor<2x4x32xf32>, tensor<2x32x16xf32> -> tensor<2x4x16xf32>
  %u = nn.matmul %x, %wu : tensor<2x4x32xf32>, tensor<2x32x16xf32> -> tensor<2x4x16xf32>
  %s = nn.silu %g : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  %y = nn.mul %s, %u : tensor<2x4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// mul(silu(m), m): one projection, read twice.
// CHECK-LABEL: func.func @negative_one_matmul(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[M]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[M]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x16xf32>
func.func @negative_one_matmul(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %m : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %m : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// The silu's input is an argument, not a second projection of the input.
// CHECK-LABEL: func.func @negative_gate_not_matmul(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[S]], %[[U]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x16xf32>
func.func @negative_gate_not_matmul(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>, %g: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %u = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %s = nn.silu %g : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = nn.mul %s, %u : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
