// Remarks of fuse-rms-norm-reshape, at the reshape.
// RUN: fusec-opt %s -p fuse-rms-norm-reshape --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s

// CHECK: remarks-fuse-rms-norm-reshape.mlir:[[# @LINE + 3]]:3: remark: [fuse-rms-norm-reshape] not fused: the rms_norm result is returned by the function
func.func @negative_returned(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<2x4x8xf32>) {
  %n = nn.rms_norm %x, %g : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %r = nn.reshape %n : tensor<2x4x8xf32> -> tensor<8x8xf32>
  func.return %r, %n : tensor<8x8xf32>, tensor<2x4x8xf32>
}

// -----
// CHECK: remarks-fuse-rms-norm-reshape.mlir:[[# @LINE + 3]]:3: remark: [fuse-rms-norm-reshape] not fused: the rms_norm is not over the last axis
func.func @negative_axis(%x: tensor<2x4x8xf32>, %g: tensor<4xf32>) -> tensor<8x8xf32> {
  %n = nn.rms_norm %x, %g {axis = 1 : i64} : tensor<2x4x8xf32>, tensor<4xf32> -> tensor<2x4x8xf32>
  %r = nn.reshape %n : tensor<2x4x8xf32> -> tensor<8x8xf32>
  func.return %r : tensor<8x8xf32>
}

// -----
// CHECK: remarks-fuse-rms-norm-reshape.mlir:[[# @LINE + 3]]:3: remark: [fuse-rms-norm-reshape] not fused: the reshape does not fold the leading dimensions into one
func.func @negative_reshape(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<2x32xf32> {
  %n = nn.rms_norm %x, %g : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %r = nn.reshape %n : tensor<2x4x8xf32> -> tensor<2x32xf32>
  func.return %r : tensor<2x32xf32>
}

// -----
// CHECK: remarks-fuse-rms-norm-reshape.mlir:[[# @LINE + 3]]:3: remark: [fuse-rms-norm-reshape] fused #0: nn.rms_norm over the reshaped rows
func.func @fused(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<8x8xf32> {
  %n = nn.rms_norm %x, %g : tensor<2x4x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %r = nn.reshape %n : tensor<2x4x8xf32> -> tensor<8x8xf32>
  func.return %r : tensor<8x8xf32>
}
// CHECK-NOT: remark
