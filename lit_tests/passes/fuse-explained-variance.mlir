// RUN: fusec-opt %s -p fuse-explained-variance --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-explained-variance,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE

// sum(q * (g @ q), 0): the column-wise form.
// CHECK-LABEL: func.func @columns
// CHECK-NEXT:    %[[V:.*]] = fused.explained_variance %g, %q : tensor<6x6xf32>, tensor<6x2xf32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %[[V]] : tensor<2xf32>
// UNFUSE-LABEL: func.func @columns
// UNFUSE-NEXT:    %[[GQ:.*]] = nn.matmul %g, %q : tensor<6x6xf32>, tensor<6x2xf32> -> tensor<6x2xf32>
// UNFUSE-NEXT:    %[[P:.*]] = nn.mul %q, %[[GQ]] : tensor<6x2xf32>, tensor<6x2xf32> -> tensor<6x2xf32>
// UNFUSE-NEXT:    %[[V:.*]] = nn.reduce_sum %[[P]] {axes = array<i64: 0>} : tensor<6x2xf32> -> tensor<2xf32>
// UNFUSE-NEXT:    func.return %[[V]] : tensor<2xf32>
func.func @columns(%g: tensor<6x6xf32>, %q: tensor<6x2xf32>) -> tensor<2xf32> {
  %gq = nn.matmul %g, %q : tensor<6x6xf32>, tensor<6x2xf32> -> tensor<6x2xf32>
  %p = nn.mul %q, %gq : tensor<6x2xf32>, tensor<6x2xf32> -> tensor<6x2xf32>
  %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<6x2xf32> -> tensor<2xf32>
  func.return %v : tensor<2xf32>
}

// -----

// The product first, keepdims: a [1, k] result.
// CHECK-LABEL: func.func @keepdims
// CHECK-NEXT:    %[[V:.*]] = fused.explained_variance %g, %q : tensor<5x5xf32>, tensor<5x3xf32> -> tensor<1x3xf32>
func.func @keepdims(%g: tensor<5x5xf32>, %q: tensor<5x3xf32>) -> tensor<1x3xf32> {
  %gq = nn.matmul %g, %q : tensor<5x5xf32>, tensor<5x3xf32> -> tensor<5x3xf32>
  %p = nn.mul %gq, %q : tensor<5x3xf32>, tensor<5x3xf32> -> tensor<5x3xf32>
  %v = nn.reduce_sum %p {axes = array<i64: -2>, keepdims = true} : tensor<5x3xf32> -> tensor<1x3xf32>
  func.return %v : tensor<1x3xf32>
}

// -----

// The k x k form: q^T (g q), masked by an identity constant, summed over either axis.
// CHECK-LABEL: func.func @masked
// CHECK-NEXT:    %[[V:.*]] = fused.explained_variance %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<2xf32>
// CHECK-NEXT:    func.return %[[V]] : tensor<2xf32>
func.func @masked(%g: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> tensor<2xf32> {
  %gq = nn.matmul %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %qt = nn.transpose %q {perm = array<i64: 1, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
  %m = nn.matmul %qt, %gq : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %i = nn.constant {value = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %d = nn.mul %m, %i : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %v = nn.reduce_sum %d {axes = array<i64: 1>} : tensor<2x2xf32> -> tensor<2xf32>
  func.return %v : tensor<2xf32>
}

// -----

// Negative: the sum is over axis 1 (a row-wise dot product).
// CHECK-LABEL: func.func @over_columns
// CHECK-NOT:     fused.explained_variance
func.func @over_columns(%g: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> tensor<4xf32> {
  %gq = nn.matmul %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %p = nn.mul %q, %gq : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %v = nn.reduce_sum %p {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>
  func.return %v : tensor<4xf32>
}

// -----

// Negative: the product is multiplied by another tensor than q.
// CHECK-LABEL: func.func @other_weights
// CHECK-NOT:     fused.explained_variance
func.func @other_weights(%g: tensor<4x4xf32>, %q: tensor<4x2xf32>, %w: tensor<4x2xf32>) -> tensor<2xf32> {
  %gq = nn.matmul %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %p = nn.mul %w, %gq : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>
  func.return %v : tensor<2xf32>
}

// -----

// Negative: g @ q is also returned (fusing would compute it twice).
// CHECK-LABEL: func.func @product_returned
// CHECK-NOT:     fused.explained_variance
func.func @product_returned(%g: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> (tensor<2xf32>, tensor<4x2xf32>) {
  %gq = nn.matmul %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %p = nn.mul %q, %gq : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>
  func.return %v, %gq : tensor<2xf32>, tensor<4x2xf32>
}

// -----

// Negative: g is not square: g @ q is one row, broadcast against q by the mul.
// CHECK-LABEL: func.func @not_square
// CHECK-NOT:     fused.explained_variance
func.func @not_square(%g: tensor<1x4xf32>, %q: tensor<4x2xf32>) -> tensor<2xf32> {
  %gq = nn.matmul %g, %q : tensor<1x4xf32>, tensor<4x2xf32> -> tensor<1x2xf32>
  %p = nn.mul %q, %gq : tensor<4x2xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
  %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>
  func.return %v : tensor<2xf32>
}

// -----

// Negative: the k x k form with a mask that is not the identity.
// CHECK-LABEL: func.func @not_identity
// CHECK-NOT:     fused.explained_variance
func.func @not_identity(%g: tensor<4x4xf32>, %q: tensor<4x2xf32>) -> tensor<2xf32> {
  %gq = nn.matmul %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  %qt = nn.transpose %q {perm = array<i64: 1, 0>} : tensor<4x2xf32> -> tensor<2x4xf32>
  %m = nn.matmul %qt, %gq : tensor<2x4xf32>, tensor<4x2xf32> -> tensor<2x2xf32>
  %i = nn.constant {value = dense<[[1.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %d = nn.mul %m, %i : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %v = nn.reduce_sum %d {axes = array<i64: 1>} : tensor<2x2xf32> -> tensor<2xf32>
  func.return %v : tensor<2xf32>
}

// -----

// Negative: f16.
// CHECK-LABEL: func.func @half
// CHECK-NOT:     fused.explained_variance
func.func @half(%g: tensor<4x4xf16>, %q: tensor<4x2xf16>) -> tensor<2xf16> {
  %gq = nn.matmul %g, %q : tensor<4x4xf16>, tensor<4x2xf16> -> tensor<4x2xf16>
  %p = nn.mul %q, %gq : tensor<4x2xf16>, tensor<4x2xf16> -> tensor<4x2xf16>
  %v = nn.reduce_sum %p {axes = array<i64: 0>} : tensor<4x2xf16> -> tensor<2xf16>
  func.return %v : tensor<2xf16>
}
