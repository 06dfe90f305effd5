// RUN: fusec-opt %s -p fuse-image-normalize --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-image-normalize,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p canonicalize-nn,fuse-image-normalize --split-input-file | filecheck %s --check-prefix=CANON
// RUN: fusec-opt %s -p 'fuse-image-normalize{max-plane=63}' --split-input-file | filecheck %s --check-prefix=SMALL
// RUN: fusec-opt %s -p default --split-input-file | filecheck %s --check-prefix=DEFAULT
// RUN: not fusec-opt %s -p 'fuse-image-normalize{max-plane=0}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: fusec-opt: bad options for pass 'fuse-image-normalize': max-plane (0) must be at least 1

// NCHW, the canonical spelling: gain, bias and a clamp (max, then min) join the kernel.
// CHECK-LABEL: func.func @canonical
// CHECK-NEXT:    %[[Y:.*]] = fused.image_normalize %x gain %g bias %b {clamp_min = 0.000000e+00 : f32, clamp_max = 6.000000e+00 : f32} : tensor<2x3x8x8xf32> gain tensor<3x1x1xf32> bias tensor<3x1x1xf32> -> tensor<2x3x8x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<2x3x8x8xf32>
// Un-fusion gives nn ops back: means over the last two axes with keepdims, rsqrt, the epilogue.
// UNFUSE-LABEL: func.func @canonical
// UNFUSE-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x8x8xf32> -> tensor<2x3x1x1xf32>
// UNFUSE-NEXT:    %[[D:.*]] = nn.sub %x, %[[M]] : tensor<2x3x8x8xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x8x8xf32>
// UNFUSE-NEXT:    %[[S:.*]] = nn.mul %[[D]], %[[D]]
// UNFUSE-NEXT:    %[[V:.*]] = nn.reduce_mean %[[S]] {axes = array<i64: 2, 3>, keepdims = true}
// UNFUSE-NEXT:    %[[E:.*]] = nn.constant {value = dense<1.000000e-05> : tensor<f32>} : tensor<f32>
// UNFUSE-NEXT:    %[[VE:.*]] = nn.add %[[V]], %[[E]]
// UNFUSE-NEXT:    %[[R:.*]] = nn.rsqrt %[[VE]]
// UNFUSE-NEXT:    %[[N:.*]] = nn.mul %[[D]], %[[R]]
// UNFUSE-NEXT:    %[[G:.*]] = nn.mul %[[N]], %g
// UNFUSE-NEXT:    %[[B:.*]] = nn.add %[[G]], %b
// UNFUSE-NEXT:    %[[LO:.*]] = nn.constant {value = dense<0.000000e+00> : tensor<f32>} : tensor<f32>
// UNFUSE-NEXT:    %[[C0:.*]] = nn.max %[[B]], %[[LO]]
// UNFUSE-NEXT:    %[[HI:.*]] = nn.constant {value = dense<6.000000e+00> : tensor<f32>} : tensor<f32>
// UNFUSE-NEXT:    %[[C1:.*]] = nn.min %[[C0]], %[[HI]]
// UNFUSE-NEXT:    func.return %[[C1]] : tensor<2x3x8x8xf32>
// Planes of 64 over max-plane=63 stay unfused.
// SMALL-LABEL: func.func @canonical
// SMALL-NEXT:    nn.constant
// SMALL-NOT:     fused.image_normalize
// SMALL:         func.return
// DEFAULT-LABEL: func.func @canonical
// DEFAULT-NEXT:    fused.image_normalize
// DEFAULT-NEXT:    func.return
func.func @canonical(%x: tensor<2x3x8x8xf32>, %g: tensor<3x1x1xf32>, %b: tensor<3x1x1xf32>) -> tensor<2x3x8x8xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %lo = nn.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %hi = nn.constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x8x8xf32> -> tensor<2x3x1x1xf32>
  %d = nn.sub %x, %mu : tensor<2x3x8x8xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x8x8xf32>
  %sq = nn.mul %d, %d : tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32> -> tensor<2x3x8x8xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x8x8xf32> -> tensor<2x3x1x1xf32>
  %ve = nn.add %var, %eps : tensor<2x3x1x1xf32>, tensor<f32> -> tensor<2x3x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  %n = nn.mul %d, %rs : tensor<2x3x8x8xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x8x8xf32>
  %gn = nn.mul %n, %g : tensor<2x3x8x8xf32>, tensor<3x1x1xf32> -> tensor<2x3x8x8xf32>
  %y = nn.add %gn, %b : tensor<2x3x8x8xf32>, tensor<3x1x1xf32> -> tensor<2x3x8x8xf32>
  %c0 = nn.max %y, %lo : tensor<2x3x8x8xf32>, tensor<f32> -> tensor<2x3x8x8xf32>
  %c1 = nn.min %c0, %hi : tensor<2x3x8x8xf32>, tensor<f32> -> tensor<2x3x8x8xf32>
  func.return %c1 : tensor<2x3x8x8xf32>
}

// -----
// The seed's spelling: sum / n, mean(x^2) - mean^2, division by sqrt, max(y, 0), then ^ gamma.
// CHECK-LABEL: func.func @moments_gamma
// CHECK-NEXT:    %[[Y:.*]] = fused.image_normalize %x gain %g bias %b {eps = 1.000000e-06 : f32, variance = "moments", clamp_min = 0.000000e+00 : f32, gamma = 1.800000e+00 : f32} : tensor<2x3x4x4xf32> gain tensor<1x3x1x1xf32> bias tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
// UNFUSE-LABEL: func.func @moments_gamma
// UNFUSE:         %[[SQ:.*]] = nn.mul %x, %x
// UNFUSE-NEXT:    nn.reduce_mean %[[SQ]]
// UNFUSE:         nn.max
// UNFUSE:         nn.pow
// UNFUSE-NEXT:    func.return
func.func @moments_gamma(%x: tensor<2x3x4x4xf32>, %g: tensor<1x3x1x1xf32>, %b: tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %n = nn.constant {value = dense<16.0> : tensor<f32>} : tensor<f32>
  %eps = nn.constant {value = dense<1.0e-6> : tensor<f32>} : tensor<f32>
  %zero = nn.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %gamma = nn.constant {value = dense<1.8> : tensor<f32>} : tensor<f32>
  %s = nn.reduce_sum %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x4x4xf32> -> tensor<2x3x1x1xf32>
  %mu = nn.div %s, %n : tensor<2x3x1x1xf32>, tensor<f32> -> tensor<2x3x1x1xf32>
  %x2 = nn.mul %x, %x : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %s2 = nn.reduce_sum %x2 {axes = array<i64: 2, 3>, keepdims = true} : tensor<2x3x4x4xf32> -> tensor<2x3x1x1xf32>
  %m2 = nn.div %s2, %n : tensor<2x3x1x1xf32>, tensor<f32> -> tensor<2x3x1x1xf32>
  %mm = nn.mul %mu, %mu : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  %var = nn.sub %m2, %mm : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  %ve = nn.add %eps, %var : tensor<f32>, tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  %sd = nn.sqrt %ve : tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  %d = nn.sub %x, %mu : tensor<2x3x4x4xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %q = nn.div %d, %sd : tensor<2x3x4x4xf32>, tensor<2x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %gq = nn.mul %g, %q : tensor<1x3x1x1xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %y = nn.add %b, %gq : tensor<1x3x1x1xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %c = nn.max %y, %zero : tensor<2x3x4x4xf32>, tensor<f32> -> tensor<2x3x4x4xf32>
  %out = nn.pow %c, %gamma : tensor<2x3x4x4xf32>, tensor<f32> -> tensor<2x3x4x4xf32>
  func.return %out : tensor<2x3x4x4xf32>
}

// -----
// sum * (1/n), pow(x - mean, 2) with its own subtraction, 1 / sqrt, no eps; gamma before a
// clamp written min first; an [H, W] image (rank 2).
// CHECK-LABEL: func.func @reciprocal
// CHECK-NEXT:    %[[Y:.*]] = fused.image_normalize %x {eps = 0.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, clamp_max = 4.000000e+00 : f32, gamma = 2.000000e+00 : f32, gamma_first = true} : tensor<4x5xf32> -> tensor<4x5xf32>
// CHECK-NEXT:    func.return %[[Y]]
// Its canonical form (canonicalize-nn: x * x for pow(x, 2), rsqrt for 1 / sqrt, the constant
// on the right) is the same op.
// CANON-LABEL: func.func @reciprocal
// CANON-NEXT:    %[[Y:.*]] = fused.image_normalize %x {eps = 0.000000e+00 : f32, clamp_min = 0.000000e+00 : f32, clamp_max = 4.000000e+00 : f32, gamma = 2.000000e+00 : f32, gamma_first = true} : tensor<4x5xf32> -> tensor<4x5xf32>
// CANON-NEXT:    func.return %[[Y]]
func.func @reciprocal(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %inv = nn.constant {value = dense<0.05> : tensor<f32>} : tensor<f32>
  %two = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %hi = nn.constant {value = dense<4.0> : tensor<f32>} : tensor<f32>
  %lo = nn.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %s = nn.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = true} : tensor<4x5xf32> -> tensor<1x1xf32>
  %mu = nn.mul %inv, %s : tensor<f32>, tensor<1x1xf32> -> tensor<1x1xf32>
  %d1 = nn.sub %x, %mu : tensor<4x5xf32>, tensor<1x1xf32> -> tensor<4x5xf32>
  %sq = nn.pow %d1, %two : tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: -2, -1>, keepdims = true} : tensor<4x5xf32> -> tensor<1x1xf32>
  %sd = nn.sqrt %var : tensor<1x1xf32> -> tensor<1x1xf32>
  %r = nn.div %one, %sd : tensor<f32>, tensor<1x1xf32> -> tensor<1x1xf32>
  %d = nn.sub %x, %mu : tensor<4x5xf32>, tensor<1x1xf32> -> tensor<4x5xf32>
  %n = nn.mul %r, %d : tensor<1x1xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %p = nn.pow %n, %two : tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
  %c0 = nn.min %p, %hi : tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
  %c1 = nn.max %c0, %lo : tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
  func.return %c1 : tensor<4x5xf32>
}

// -----
// MATLAB's nested means of a [C, H, W] image, pow(v + eps, -0.5); the normalized value is
// also returned, so the gain after it stays outside.
// CHECK-LABEL: func.func @nested_shared
// CHECK-NEXT:    %[[N:.*]] = fused.image_normalize %x : tensor<3x4x6xf32> -> tensor<3x4x6xf32>
// CHECK-NEXT:    %[[G:.*]] = nn.mul %[[N]], %g
// CHECK-NEXT:    func.return %[[G]], %[[N]]
func.func @nested_shared(%x: tensor<3x4x6xf32>, %g: tensor<3x1x1xf32>) -> (tensor<3x4x6xf32>, tensor<3x4x6xf32>) {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %h = nn.constant {value = dense<-0.5> : tensor<f32>} : tensor<f32>
  %m1 = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<3x4x6xf32> -> tensor<3x1x6xf32>
  %mu = nn.reduce_mean %m1 {axes = array<i64: 2>, keepdims = true} : tensor<3x1x6xf32> -> tensor<3x1x1xf32>
  %d = nn.sub %x, %mu : tensor<3x4x6xf32>, tensor<3x1x1xf32> -> tensor<3x4x6xf32>
  %sq = nn.mul %d, %d : tensor<3x4x6xf32>, tensor<3x4x6xf32> -> tensor<3x4x6xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1, 2>, keepdims = true} : tensor<3x4x6xf32> -> tensor<3x1x1xf32>
  %ve = nn.add %var, %eps : tensor<3x1x1xf32>, tensor<f32> -> tensor<3x1x1xf32>
  %r = nn.pow %ve, %h : tensor<3x1x1xf32>, tensor<f32> -> tensor<3x1x1xf32>
  %n = nn.mul %d, %r : tensor<3x4x6xf32>, tensor<3x1x1xf32> -> tensor<3x4x6xf32>
  %gn = nn.mul %n, %g : tensor<3x4x6xf32>, tensor<3x1x1xf32> -> tensor<3x4x6xf32>
  func.return %gn, %n : tensor<3x4x6xf32>, tensor<3x4x6xf32>
}

// -----
// A LayerNorm written out over the last axis is a row normalization: left to fuse-row-reduce.
// CHECK-LABEL: func.func @row
// CHECK-NOT:     fused.image_normalize
// DEFAULT-LABEL: func.func @row
// DEFAULT-NEXT:    fused.row_reduce
func.func @row(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %mu = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = nn.sub %x, %mu : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %sq = nn.mul %d, %d : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32> -> tensor<4x1xf32>
  %ve = nn.add %var, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %rs = nn.rsqrt %ve : tensor<4x1xf32> -> tensor<4x1xf32>
  %n = nn.mul %d, %rs : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  func.return %n : tensor<4x16xf32>
}

// -----
// Not a normalization: the "mean" divides the sum by 7, not by the plane's 16 elements, and the
// variance's square is a cube; neither fuses (the first is no mean: no remark).
// CHECK-LABEL: func.func @not_a_mean
// CHECK-NOT:     fused.image_normalize
// CHECK:         func.return
func.func @not_a_mean(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %seven = nn.constant {value = dense<7.0> : tensor<f32>} : tensor<f32>
  %eps = nn.constant {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %s = nn.reduce_sum %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %mu = nn.div %s, %seven : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %d = nn.sub %x, %mu : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %sq = nn.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %ve = nn.add %var, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %rs = nn.rsqrt %ve : tensor<1x2x1x1xf32> -> tensor<1x2x1x1xf32>
  %n = nn.mul %d, %rs : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}
