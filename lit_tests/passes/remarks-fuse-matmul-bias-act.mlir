// Every guard of fuse-matmul-bias-act has a remark at the candidate (the add or the activation).
// RUN: fusec-opt %s -p fuse-matmul-bias-act --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s --check-prefix=MISSED
// RUN: fusec-opt %s -p fuse-matmul-bias-act --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 3]]:3: remark: [fuse-matmul-bias-act] not fused: the matmul result has 2 uses
func.func @negative_shared(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %s = nn.mul %a, %m : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %s : tensor<4x16xf32>
}

// -----
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 3]]:3: remark: [fuse-matmul-bias-act] not fused: the matmul result is returned by the function
func.func @negative_returned(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %a, %m : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 3]]:3: remark: [fuse-matmul-bias-act] not fused: the matmul's element type i32 is no float
func.func @negative_int(%x: tensor<4x8xi32>, %w: tensor<8x16xi32>, %b: tensor<16xi32>) -> tensor<4x16xi32> {
  %m = nn.matmul %x, %w : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
  %a = nn.add %m, %b : tensor<4x16xi32>, tensor<16xi32> -> tensor<4x16xi32>
  func.return %a : tensor<4x16xi32>
}

// -----
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 3]]:3: remark: [fuse-matmul-bias-act] not fused: the add broadcasts the matmul result to another shape
func.func @negative_broadcast(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  func.return %a : tensor<2x4x16xf32>
}

// -----
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 3]]:3: remark: [fuse-matmul-bias-act] not fused: the bias tensor<4x16xf32> is not a vector over the last dimension (16)
func.func @negative_residual(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %r : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %a : tensor<4x16xf32>
}

// -----
// APPLIED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 4]]:3: remark: [fuse-matmul-bias-act] fused #0: fused.matmul_bias_act
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 4]]:3: remark: [fuse-matmul-bias-act] not fused: activation tanh is not in activations=gelu,relu,silu
func.func @negative_activation(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %t = nn.tanh %a : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %t : tensor<4x16xf32>
}

// -----
// APPLIED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 5]]:3: remark: [fuse-matmul-bias-act] fused #1: fused.matmul_bias_act
// APPLIED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 5]]:3: remark: [fuse-matmul-bias-act] fused #2: fused.matmul_bias_act{activation=relu}
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 5]]:3: remark: [fuse-matmul-bias-act] not fused: the matmul already applies relu
func.func @negative_second_activation(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = nn.relu %a : tensor<4x16xf32> -> tensor<4x16xf32>
  %g = nn.gelu %r : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %g : tensor<4x16xf32>
}

// -----
// MISSED: remarks-fuse-matmul-bias-act.mlir:[[# @LINE + 4]]:3: remark: [fuse-matmul-bias-act] not fused: the matmul_bias_act result is returned by the function
func.func @negative_fused_returned(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %r = nn.relu %a : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %r, %a : tensor<4x16xf32>, tensor<4x16xf32>
}
// MISSED-NOT: remark
