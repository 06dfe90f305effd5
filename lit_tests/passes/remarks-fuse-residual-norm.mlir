// Remarks of fuse-residual-layer-norm and fuse-residual-rms-norm (one pattern), at the norm.
// RUN: fusec-opt %s -p fuse-residual-layer-norm,fuse-residual-rms-norm --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s

// CHECK: remarks-fuse-residual-norm.mlir:[[# @LINE + 3]]:3: remark: [fuse-residual-layer-norm] not fused: the add has 2 uses
func.func @negative_shared(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = nn.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.layer_norm %s, %g, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %z = nn.mul %y, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}

// -----
// CHECK: remarks-fuse-residual-norm.mlir:[[# @LINE + 3]]:3: remark: [fuse-residual-rms-norm] not fused: the add is returned by the function
func.func @negative_returned(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = nn.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.rms_norm %s, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----
// CHECK: remarks-fuse-residual-norm.mlir:[[# @LINE + 3]]:3: remark: [fuse-residual-layer-norm] not fused: the add broadcasts (x, the residual and the sum differ in type)
func.func @negative_broadcast(%x: tensor<4x8xf32>, %r: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = nn.add %x, %r : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = nn.layer_norm %s, %g, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----
// CHECK: remarks-fuse-residual-norm.mlir:[[# @LINE + 3]]:3: remark: [fuse-residual-rms-norm] not fused: the norm is not over the last axis
func.func @negative_axis(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x8xf32> {
  %s = nn.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.rms_norm %s, %g {axis = 0 : i64} : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----
// CHECK: remarks-fuse-residual-norm.mlir:[[# @LINE + 3]]:3: remark: [fuse-residual-layer-norm] fused #0: fused.residual_layer_norm
func.func @fused(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = nn.add %x, %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.layer_norm %s, %g, %b : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-NOT: remark
