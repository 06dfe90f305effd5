// Remarks of fuse-image-normalize: one chunk per guard, at the op dividing by the deviation
// (the core) or at the epilogue op where the kernel stops.
// RUN: fusec-opt %s -p fuse-image-normalize --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s

// NHWC: the statistics reduce axes 1 and 2.
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: the mean reduces axes [1, 2], not the last two (the plane); other layouts (NHWC) are not fused
func.func @nhwc(%x: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<1x4x4x3xf32> -> tensor<1x1x1x3xf32>
  %d = nn.sub %x, %mu : tensor<1x4x4x3xf32>, tensor<1x1x1x3xf32> -> tensor<1x4x4x3xf32>
  %sq = nn.mul %d, %d : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : tensor<1x4x4x3xf32> -> tensor<1x1x1x3xf32>
  %ve = nn.add %var, %eps : tensor<1x1x1x3xf32>, tensor<f32> -> tensor<1x1x1x3xf32>
  %rs = nn.rsqrt %ve : tensor<1x1x1x3xf32> -> tensor<1x1x1x3xf32>
  %n = nn.mul %d, %rs : tensor<1x4x4x3xf32>, tensor<1x1x1x3xf32> -> tensor<1x4x4x3xf32>
  func.return %n : tensor<1x4x4x3xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: the mean reduces axes [2, 3] and the variance [1, 2, 3]
func.func @variance_axes(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1, 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x1x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x1x1x1xf32>, tensor<f32> -> tensor<1x1x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x1x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// -----
// The variance of another tensor.
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: the divisor is not sqrt(variance + eps) of the same input and mean
func.func @other_variance(%x: tensor<1x2x4x4xf32>, %z: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %z, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 8]]:3: remark: [fuse-image-normalize] not fused: eps is not a constant
func.func @eps_argument(%x: tensor<1x2x4x4xf32>, %eps: tensor<f32>) -> tensor<1x2x4x4xf32> {
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: eps (-1e-05) is negative or not finite
func.func @eps_negative(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<-1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: the input is f16, not f32
func.func @half(%x: tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f16>} : tensor<f16>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf16> -> tensor<1x2x1x1xf16>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf16>, tensor<1x2x1x1xf16> -> tensor<1x2x4x4xf16>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf16>, tensor<1x2x4x4xf16> -> tensor<1x2x4x4xf16>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf16> -> tensor<1x2x1x1xf16>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf16>, tensor<f16> -> tensor<1x2x1x1xf16>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf16> -> tensor<1x2x1x1xf16>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf16>, tensor<1x2x1x1xf16> -> tensor<1x2x4x4xf16>
  func.return %n : tensor<1x2x4x4xf16>
}

// -----
// A plane of 128 x 160 = 20480 elements is over max-plane (16384).
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: a plane has 20480 elements, more than max-plane (16384)
func.func @large_plane(%x: tensor<1x1x128x160xf32>) -> tensor<1x1x128x160xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x1x128x160xf32> -> tensor<1x1x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x1x128x160xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x128x160xf32>
  %sq = nn.mul %d, %d : tensor<1x1x128x160xf32>, tensor<1x1x128x160xf32> -> tensor<1x1x128x160xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x1x128x160xf32> -> tensor<1x1x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x1x1x1xf32>, tensor<f32> -> tensor<1x1x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x1x128x160xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x128x160xf32>
  func.return %n : tensor<1x1x128x160xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] not fused: the mean is returned by the function
func.func @mean_returned(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 10]]:3: remark: [fuse-image-normalize] not fused: the variance is also read by nn.sqrt
func.func @variance_shared(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %std = nn.sqrt %var : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n, %std : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>
}

// -----
// The epilogue guards: the core is fused, the op where the epilogue stops gets the remark.
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 11]]:3: remark: [fuse-image-normalize] not fused: the gain (tensor<4x4xf32>) varies within a plane
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] fused #0: fused.image_normalize of 7 ops
func.func @gain_in_plane(%x: tensor<1x2x4x4xf32>, %g: tensor<4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %y = nn.mul %n, %g : tensor<1x2x4x4xf32>, tensor<4x4xf32> -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 11]]:3: remark: [fuse-image-normalize] not fused: the exponent (gamma) is not a constant
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] fused #1: fused.image_normalize of 7 ops
func.func @gamma_argument(%x: tensor<1x2x4x4xf32>, %gamma: tensor<f32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %y = nn.pow %n, %gamma : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// -----
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 11]]:3: remark: [fuse-image-normalize] not fused: the lower clamp bound is not a constant (or is NaN)
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] fused #2: fused.image_normalize of 7 ops
func.func @bound_argument(%x: tensor<1x2x4x4xf32>, %lo: tensor<f32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %y = nn.max %n, %lo : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// -----
// min(y, 0) then max(., 1): every value becomes 1, which the op's max-then-min cannot say.
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 14]]:3: remark: [fuse-image-normalize] not fused: the clamp bounds are crossed (lower 1 > upper 0)
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 11]]:3: remark: [fuse-image-normalize] fused #3: fused.image_normalize of 8 ops
func.func @crossed_bounds(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %zero = nn.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %c0 = nn.min %n, %zero : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %c1 = nn.max %c0, %one : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  func.return %c1 : tensor<1x2x4x4xf32>
}

// -----
// The normalized value is also returned: the gain reading it stays outside.
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 11]]:3: remark: [fuse-image-normalize] not fused: the normalized value it reads has 2 uses, and it is returned
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 9]]:3: remark: [fuse-image-normalize] fused #4: fused.image_normalize of 7 ops
func.func @normalized_shared(%x: tensor<1x2x4x4xf32>, %g: tensor<2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %y = nn.mul %n, %g : tensor<1x2x4x4xf32>, tensor<2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %y, %n : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----
// The variance's square is a cube.
// CHECK: remarks-fuse-image-normalize.mlir:[[# @LINE + 10]]:3: remark: [fuse-image-normalize] not fused: the divisor is not sqrt(variance + eps) of the same input and mean
func.func @cube(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %three = nn.constant {value = dense<3.0> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.pow %d, %three : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}
// CHECK-NOT: remark
