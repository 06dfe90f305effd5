// RUN: fusec-opt %s -p fuse-power-step-normalize --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-power-step-normalize,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE

// y / (sqrt(sum(y * y, 0)) + eps), y = a @ q.
// CHECK-LABEL: func.func @step
// CHECK-NEXT:    %[[Z:.*]] = fused.power_step_normalize %a, %q {eps = 1.000000e-06 : f32} : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
// CHECK-NEXT:    func.return %[[Z]] : tensor<8x2xf32>
// UNFUSE-LABEL: func.func @step
// UNFUSE-NEXT:    %[[Y:.*]] = nn.matmul %a, %q : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
// UNFUSE-NEXT:    %[[S:.*]] = nn.mul %[[Y]], %[[Y]] : tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
// UNFUSE-NEXT:    %[[T:.*]] = nn.reduce_sum %[[S]] {axes = array<i64: 0>, keepdims = true} : tensor<8x2xf32> -> tensor<1x2xf32>
// UNFUSE-NEXT:    %[[N:.*]] = nn.sqrt %[[T]] : tensor<1x2xf32> -> tensor<1x2xf32>
// UNFUSE-NEXT:    %[[E:.*]] = nn.constant {value = dense<1.000000e-06> : tensor<f32>} : tensor<f32>
// UNFUSE-NEXT:    %[[D:.*]] = nn.add %[[N]], %[[E]] : tensor<1x2xf32>, tensor<f32> -> tensor<1x2xf32>
// UNFUSE-NEXT:    %[[Z:.*]] = nn.div %[[Y]], %[[D]] : tensor<8x2xf32>, tensor<1x2xf32> -> tensor<8x2xf32>
// UNFUSE-NEXT:    func.return %[[Z]] : tensor<8x2xf32>
func.func @step(%a: tensor<8x8xf32>, %q: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %y = nn.matmul %a, %q : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  %s = nn.mul %y, %y : tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<8x2xf32> -> tensor<1x2xf32>
  %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
  %e = nn.constant {value = dense<1.0e-06> : tensor<f32>} : tensor<f32>
  %d = nn.add %n, %e : tensor<1x2xf32>, tensor<f32> -> tensor<1x2xf32>
  %z = nn.div %y, %d : tensor<8x2xf32>, tensor<1x2xf32> -> tensor<8x2xf32>
  func.return %z : tensor<8x2xf32>
}

// -----

// The norm as sqrt(mean(pow(y, 2), 0) * m) without keepdims, eps on the left, and the
// division as a multiplication by the reciprocal.
// CHECK-LABEL: func.func @mean_times_rows
// CHECK-NEXT:    %[[Z:.*]] = fused.power_step_normalize %a, %q {eps = 1.000000e-03 : f32} : tensor<5x3xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT:    func.return %[[Z]] : tensor<5x4xf32>
func.func @mean_times_rows(%a: tensor<5x3xf32>, %q: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %y = nn.matmul %a, %q : tensor<5x3xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  %two = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %s = nn.pow %y, %two : tensor<5x4xf32>, tensor<f32> -> tensor<5x4xf32>
  %t = nn.reduce_mean %s {axes = array<i64: 0>} : tensor<5x4xf32> -> tensor<4xf32>
  %m = nn.constant {value = dense<5.0> : tensor<f32>} : tensor<f32>
  %u = nn.mul %t, %m : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %n = nn.sqrt %u : tensor<4xf32> -> tensor<4xf32>
  %e = nn.constant {value = dense<1.0e-03> : tensor<f32>} : tensor<f32>
  %d = nn.add %e, %n : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %r = nn.div %one, %d : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %z = nn.mul %y, %r : tensor<5x4xf32>, tensor<4xf32> -> tensor<5x4xf32>
  func.return %z : tensor<5x4xf32>
}

// -----

// No eps: eps = 0 (the default, not printed).
// CHECK-LABEL: func.func @no_eps
// CHECK-NEXT:    %[[Z:.*]] = fused.power_step_normalize %a, %q : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
func.func @no_eps(%a: tensor<4x4xf32>, %q: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %s = nn.mul %y, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x1xf32> -> tensor<1x1xf32>
  %n = nn.sqrt %t : tensor<1x1xf32> -> tensor<1x1xf32>
  %z = nn.div %y, %n : tensor<4x1xf32>, tensor<1x1xf32> -> tensor<4x1xf32>
  func.return %z : tensor<4x1xf32>
}

// -----

// No eps, written y * rsqrt(norm^2) (canonicalize-nn's form of y / sqrt(norm^2)): eps = 0.
// CHECK-LABEL: func.func @no_eps_rsqrt
// CHECK-NEXT:    %[[Z:.*]] = fused.power_step_normalize %a, %q : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %[[Z]]
func.func @no_eps_rsqrt(%a: tensor<4x4xf32>, %q: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %s = nn.mul %y, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x1xf32> -> tensor<1x1xf32>
  %n = nn.rsqrt %t : tensor<1x1xf32> -> tensor<1x1xf32>
  %z = nn.mul %n, %y : tensor<1x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  func.return %z : tensor<4x1xf32>
}

// -----

// y * rsqrt(norm^2 + eps) has eps inside the square root: another computation (fuse-row-reduce
// makes it one column kernel after the GEMM), no candidate, no remark.
// CHECK-LABEL: func.func @eps_inside_the_root
// CHECK-NEXT:    nn.matmul
// CHECK-NOT:     fused.power_step_normalize
func.func @eps_inside_the_root(%a: tensor<4x4xf32>, %q: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %s = nn.mul %y, %y : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x1xf32> -> tensor<1x1xf32>
  %e = nn.constant {value = dense<1.0e-06> : tensor<f32>} : tensor<f32>
  %te = nn.add %t, %e : tensor<1x1xf32>, tensor<f32> -> tensor<1x1xf32>
  %n = nn.rsqrt %te : tensor<1x1xf32> -> tensor<1x1xf32>
  %z = nn.mul %y, %n : tensor<4x1xf32>, tensor<1x1xf32> -> tensor<4x1xf32>
  func.return %z : tensor<4x1xf32>
}

// -----

// Negative: the norm is over the columns (axis 1): a row normalization.
// CHECK-LABEL: func.func @row_norm
// CHECK-NOT:     fused.power_step_normalize
func.func @row_norm(%a: tensor<4x4xf32>, %q: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %s = nn.mul %y, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 1>, keepdims = true} : tensor<4x3xf32> -> tensor<4x1xf32>
  %n = nn.sqrt %t : tensor<4x1xf32> -> tensor<4x1xf32>
  %z = nn.div %y, %n : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  func.return %z : tensor<4x3xf32>
}

// -----

// Negative: a mean of squares multiplied by 4, not the row count 5.
// CHECK-LABEL: func.func @wrong_count
// CHECK-NOT:     fused.power_step_normalize
func.func @wrong_count(%a: tensor<5x3xf32>, %q: tensor<3x2xf32>) -> tensor<5x2xf32> {
  %y = nn.matmul %a, %q : tensor<5x3xf32>, tensor<3x2xf32> -> tensor<5x2xf32>
  %s = nn.mul %y, %y : tensor<5x2xf32>, tensor<5x2xf32> -> tensor<5x2xf32>
  %t = nn.reduce_mean %s {axes = array<i64: 0>, keepdims = true} : tensor<5x2xf32> -> tensor<1x2xf32>
  %m = nn.constant {value = dense<4.0> : tensor<f32>} : tensor<f32>
  %u = nn.mul %t, %m : tensor<1x2xf32>, tensor<f32> -> tensor<1x2xf32>
  %n = nn.sqrt %u : tensor<1x2xf32> -> tensor<1x2xf32>
  %z = nn.div %y, %n : tensor<5x2xf32>, tensor<1x2xf32> -> tensor<5x2xf32>
  func.return %z : tensor<5x2xf32>
}

// -----

// Negative: the norm is of another tensor than the divided product.
// CHECK-LABEL: func.func @norm_of_other
// CHECK-NOT:     fused.power_step_normalize
func.func @norm_of_other(%a: tensor<4x4xf32>, %q: tensor<4x2xf32>, %w: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %s = nn.mul %w, %w : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x2xf32> -> tensor<1x2xf32>
  %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
  %z = nn.div %y, %n : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  func.return %z : tensor<4x2xf32>
}

// -----

// Negative: a negative eps.
// CHECK-LABEL: func.func @negative_eps
// CHECK-NOT:     fused.power_step_normalize
func.func @negative_eps(%a: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %s = nn.mul %y, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x2xf32> -> tensor<1x2xf32>
  %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
  %e = nn.constant {value = dense<-0.5> : tensor<f32>} : tensor<f32>
  %d = nn.add %n, %e : tensor<1x2xf32>, tensor<f32> -> tensor<1x2xf32>
  %z = nn.div %y, %d : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  func.return %z : tensor<4x2xf32>
}

// -----

// Negative: eps is a tensor, not a scalar constant.
// CHECK-LABEL: func.func @tensor_eps
// CHECK-NOT:     fused.power_step_normalize
func.func @tensor_eps(%a: tensor<4x4xf32>, %q: tensor<4x2xf32>, %e: tensor<1x2xf32>) -> tensor<4x2xf32> {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %s = nn.mul %y, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x2xf32> -> tensor<1x2xf32>
  %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
  %d = nn.add %n, %e : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<1x2xf32>
  %z = nn.div %y, %d : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  func.return %z : tensor<4x2xf32>
}

// -----

// Negative: the product is also returned (fusing would run the GEMM twice).
// CHECK-LABEL: func.func @product_returned
// CHECK-NOT:     fused.power_step_normalize
func.func @product_returned(%a: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %s = nn.mul %y, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x2xf32> -> tensor<1x2xf32>
  %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
  %z = nn.div %y, %n : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  func.return %z, %y : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Negative: the norm is also returned.
// CHECK-LABEL: func.func @norm_returned
// CHECK-NOT:     fused.power_step_normalize
func.func @norm_returned(%a: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<1x2xf32>) {
  %y = nn.matmul %a, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %s = nn.mul %y, %y : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<4x2xf32> -> tensor<1x2xf32>
  %n = nn.sqrt %t : tensor<1x2xf32> -> tensor<1x2xf32>
  %z = nn.div %y, %n : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  func.return %z, %n : tensor<4x2xf32>, tensor<1x2xf32>
}

// -----

// Negative: a batched product (rank 3).
// CHECK-LABEL: func.func @batched
// CHECK-NOT:     fused.power_step_normalize
func.func @batched(%a: tensor<2x4x4xf32>, %q: tensor<4x2xf32>) -> tensor<2x4x2xf32> {
  %y = nn.matmul %a, %q : tensor<2x4x4xf32>, tensor<4x2xf32> -> tensor<2x4x2xf32>
  %s = nn.mul %y, %y : tensor<2x4x2xf32>, tensor<2x4x2xf32> -> tensor<2x4x2xf32>
  %t = nn.reduce_sum %s {axes = array<i64: 0>, keepdims = true} : tensor<2x4x2xf32> -> tensor<1x4x2xf32>
  %n = nn.sqrt %t : tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  %z = nn.div %y, %n : tensor<2x4x2xf32>, tensor<1x4x2xf32> -> tensor<2x4x2xf32>
  func.return %z : tensor<2x4x2xf32>
}
