// RUN: fusec-opt %s -p fuse-centered-gram --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-centered-gram,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE

// A sample covariance: reduce_mean over the rows, the Gram divided by n - 1.
// CHECK-LABEL: func.func @covariance
// CHECK-NEXT:    %[[G:.*]] = fused.centered_gram %x {scale = 1.250000e-01 : f32} : tensor<9x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %[[G]] : tensor<4x4xf32>
// UNFUSE-LABEL: func.func @covariance
// UNFUSE-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<9x4xf32> -> tensor<1x4xf32>
// UNFUSE-NEXT:    %[[C:.*]] = nn.sub %x, %[[M]] : tensor<9x4xf32>, tensor<1x4xf32> -> tensor<9x4xf32>
// UNFUSE-NEXT:    %[[T:.*]] = nn.transpose %[[C]] {perm = array<i64: 1, 0>} : tensor<9x4xf32> -> tensor<4x9xf32>
// UNFUSE-NEXT:    %[[G:.*]] = nn.matmul %[[T]], %[[C]] : tensor<4x9xf32>, tensor<9x4xf32> -> tensor<4x4xf32>
// UNFUSE-NEXT:    %[[S:.*]] = nn.constant {value = dense<1.250000e-01> : tensor<f32>} : tensor<f32>
// UNFUSE-NEXT:    %[[V:.*]] = nn.mul %[[G]], %[[S]] : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
// UNFUSE-NEXT:    func.return %[[V]] : tensor<4x4xf32>
func.func @covariance(%x: tensor<9x4xf32>) -> tensor<4x4xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<9x4xf32> -> tensor<1x4xf32>
  %c = nn.sub %x, %m : tensor<9x4xf32>, tensor<1x4xf32> -> tensor<9x4xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<9x4xf32> -> tensor<4x9xf32>
  %g = nn.matmul %t, %c : tensor<4x9xf32>, tensor<9x4xf32> -> tensor<4x4xf32>
  %s = nn.constant {value = dense<8.0> : tensor<f32>} : tensor<f32>
  %v = nn.div %g, %s : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
  func.return %v : tensor<4x4xf32>
}

// -----

// The mean as a column sum times 1/n (no keepdims), the scale as a multiplication by the
// reciprocal of n - 1 on the left.
// CHECK-LABEL: func.func @sum_times_reciprocal
// CHECK-NEXT:    %[[G:.*]] = fused.centered_gram %x {scale = 2.500000e-01 : f32} : tensor<5x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT:    func.return %[[G]] : tensor<3x3xf32>
func.func @sum_times_reciprocal(%x: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %sum = nn.reduce_sum %x {axes = array<i64: 0>} : tensor<5x3xf32> -> tensor<3xf32>
  %r = nn.constant {value = dense<0.2> : tensor<f32>} : tensor<f32>
  %m = nn.mul %sum, %r : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %c = nn.sub %x, %m : tensor<5x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<5x3xf32> -> tensor<3x5xf32>
  %g = nn.matmul %t, %c : tensor<3x5xf32>, tensor<5x3xf32> -> tensor<3x3xf32>
  %q = nn.constant {value = dense<0.25> : tensor<f32>} : tensor<f32>
  %v = nn.mul %q, %g : tensor<f32>, tensor<3x3xf32> -> tensor<3x3xf32>
  func.return %v : tensor<3x3xf32>
}

// -----

// sum / n with axis -2, no scaling; two separate centerings of x (not CSE'd).
// CHECK-LABEL: func.func @sum_div_two_centerings
// CHECK-NEXT:    %[[G:.*]] = fused.centered_gram %x : tensor<6x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[G]] : tensor<2x2xf32>
func.func @sum_div_two_centerings(%x: tensor<6x2xf32>) -> tensor<2x2xf32> {
  %sum = nn.reduce_sum %x {axes = array<i64: -2>, keepdims = true} : tensor<6x2xf32> -> tensor<1x2xf32>
  %n = nn.constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
  %m = nn.div %sum, %n : tensor<1x2xf32>, tensor<f32> -> tensor<1x2xf32>
  %c1 = nn.sub %x, %m : tensor<6x2xf32>, tensor<1x2xf32> -> tensor<6x2xf32>
  %c2 = nn.sub %x, %m : tensor<6x2xf32>, tensor<1x2xf32> -> tensor<6x2xf32>
  %t = nn.transpose %c1 {perm = array<i64: 1, 0>} : tensor<6x2xf32> -> tensor<2x6xf32>
  %g = nn.matmul %t, %c2 : tensor<2x6xf32>, tensor<6x2xf32> -> tensor<2x2xf32>
  func.return %g : tensor<2x2xf32>
}

// -----

// One row: n - 1 = 0, so the scale is 1/0 = inf (0 * inf = NaN, as 0 / 0).
// CHECK-LABEL: func.func @one_row
// CHECK-NEXT:    %[[G:.*]] = fused.centered_gram %x {scale = 0x7f800000 : f32} : tensor<1x3xf32> -> tensor<3x3xf32>
func.func @one_row(%x: tensor<1x3xf32>) -> tensor<3x3xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<1x3xf32> -> tensor<1x3xf32>
  %c = nn.sub %x, %m : tensor<1x3xf32>, tensor<1x3xf32> -> tensor<1x3xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<1x3xf32> -> tensor<3x1xf32>
  %g = nn.matmul %t, %c : tensor<3x1xf32>, tensor<1x3xf32> -> tensor<3x3xf32>
  %s = nn.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %v = nn.div %g, %s : tensor<3x3xf32>, tensor<f32> -> tensor<3x3xf32>
  func.return %v : tensor<3x3xf32>
}

// -----

// The centered matrix is also returned: it keeps its sub (and mean); the Gram still fuses.
// CHECK-LABEL: func.func @centered_returned
// CHECK-NEXT:    nn.reduce_mean
// CHECK-NEXT:    %[[C:.*]] = nn.sub
// CHECK-NEXT:    %[[G:.*]] = fused.centered_gram %x : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[G]], %[[C]]
func.func @centered_returned(%x: tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<4x2xf32>) {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x2xf32> -> tensor<1x2xf32>
  %c = nn.sub %x, %m : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
  %g = nn.matmul %t, %c : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  func.return %g, %c : tensor<2x2xf32>, tensor<4x2xf32>
}

// -----

// Negative: the mean is over the columns (axis 1).
// CHECK-LABEL: func.func @mean_over_columns
// CHECK-NOT:     fused.centered_gram
func.func @mean_over_columns(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x4xf32> -> tensor<4x1xf32>
  %c = nn.sub %x, %m : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x4xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
  %g = nn.matmul %t, %c : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %g : tensor<4x4xf32>
}

// -----

// Negative: the column sum is divided by 4, not the row count 5.
// CHECK-LABEL: func.func @wrong_count
// CHECK-NOT:     fused.centered_gram
func.func @wrong_count(%x: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %sum = nn.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : tensor<5x3xf32> -> tensor<1x3xf32>
  %n = nn.constant {value = dense<4.0> : tensor<f32>} : tensor<f32>
  %m = nn.div %sum, %n : tensor<1x3xf32>, tensor<f32> -> tensor<1x3xf32>
  %c = nn.sub %x, %m : tensor<5x3xf32>, tensor<1x3xf32> -> tensor<5x3xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<5x3xf32> -> tensor<3x5xf32>
  %g = nn.matmul %t, %c : tensor<3x5xf32>, tensor<5x3xf32> -> tensor<3x3xf32>
  func.return %g : tensor<3x3xf32>
}

// -----

// Negative: the column sum is multiplied by 0.25, not 1/5.
// CHECK-LABEL: func.func @wrong_reciprocal
// CHECK-NOT:     fused.centered_gram
func.func @wrong_reciprocal(%x: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %sum = nn.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : tensor<5x3xf32> -> tensor<1x3xf32>
  %n = nn.constant {value = dense<0.25> : tensor<f32>} : tensor<f32>
  %m = nn.mul %sum, %n : tensor<1x3xf32>, tensor<f32> -> tensor<1x3xf32>
  %c = nn.sub %x, %m : tensor<5x3xf32>, tensor<1x3xf32> -> tensor<5x3xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<5x3xf32> -> tensor<3x5xf32>
  %g = nn.matmul %t, %c : tensor<3x5xf32>, tensor<5x3xf32> -> tensor<3x3xf32>
  func.return %g : tensor<3x3xf32>
}

// -----

// Negative: the mean subtracted from x is the mean of another tensor y.
// CHECK-LABEL: func.func @mean_of_other
// CHECK-NOT:     fused.centered_gram
func.func @mean_of_other(%x: tensor<5x3xf32>, %y: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %m = nn.reduce_mean %y {axes = array<i64: 0>, keepdims = true} : tensor<5x3xf32> -> tensor<1x3xf32>
  %c = nn.sub %x, %m : tensor<5x3xf32>, tensor<1x3xf32> -> tensor<5x3xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<5x3xf32> -> tensor<3x5xf32>
  %g = nn.matmul %t, %c : tensor<3x5xf32>, tensor<5x3xf32> -> tensor<3x3xf32>
  func.return %g : tensor<3x3xf32>
}

// -----

// Negative: a cross-covariance of x and y, not a Gram.
// CHECK-LABEL: func.func @cross
// CHECK-NOT:     fused.centered_gram
func.func @cross(%x: tensor<5x3xf32>, %y: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<5x3xf32> -> tensor<1x3xf32>
  %c = nn.sub %x, %m : tensor<5x3xf32>, tensor<1x3xf32> -> tensor<5x3xf32>
  %my = nn.reduce_mean %y {axes = array<i64: 0>, keepdims = true} : tensor<5x3xf32> -> tensor<1x3xf32>
  %cy = nn.sub %y, %my : tensor<5x3xf32>, tensor<1x3xf32> -> tensor<5x3xf32>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<5x3xf32> -> tensor<3x5xf32>
  %g = nn.matmul %t, %cy : tensor<3x5xf32>, tensor<5x3xf32> -> tensor<3x3xf32>
  func.return %g : tensor<3x3xf32>
}

// -----

// Negative: f16 (the kernel computes on f32 only).
// CHECK-LABEL: func.func @half
// CHECK-NOT:     fused.centered_gram
func.func @half(%x: tensor<5x3xf16>) -> tensor<3x3xf16> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<5x3xf16> -> tensor<1x3xf16>
  %c = nn.sub %x, %m : tensor<5x3xf16>, tensor<1x3xf16> -> tensor<5x3xf16>
  %t = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<5x3xf16> -> tensor<3x5xf16>
  %g = nn.matmul %t, %c : tensor<3x5xf16>, tensor<5x3xf16> -> tensor<3x3xf16>
  func.return %g : tensor<3x3xf16>
}

// -----

// Negative: a plain x^T x (no centering) is no candidate (and gets no remark).
// CHECK-LABEL: func.func @uncentered
// CHECK-NOT:     fused.centered_gram
func.func @uncentered(%x: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<5x3xf32> -> tensor<3x5xf32>
  %g = nn.matmul %t, %x : tensor<3x5xf32>, tensor<5x3xf32> -> tensor<3x3xf32>
  func.return %g : tensor<3x3xf32>
}
