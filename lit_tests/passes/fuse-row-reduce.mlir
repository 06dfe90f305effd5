// RUN: fusec-opt %s -p fuse-row-reduce --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-row-reduce,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p 'fuse-row-reduce{max-row=8}' --split-input-file | filecheck %s --check-prefix=ROW8

// A softmax written out: max, then the sum of exp(x - max), in one body.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %[[Y:.*]] = fused.row_reduce %x : (tensor<4x17xf32>) -> tensor<4x17xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = fused.reduce_value %[[X]] {kind = "max"} : f32 -> f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      %[[S:.*]] = fused.reduce_value %[[E]] {kind = "sum"} : f32 -> f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[R]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x17xf32>
// Un-fusion gives the primitives back, reductions over the last axis with keepdims.
// UNFUSE-LABEL: func.func @softmax
// UNFUSE-NEXT:    %[[M:.*]] = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x17xf32> -> tensor<4x1xf32>
// UNFUSE-NEXT:    %[[D:.*]] = nn.sub %x, %[[M]] : tensor<4x17xf32>, tensor<4x1xf32> -> tensor<4x17xf32>
// UNFUSE-NEXT:    %[[E:.*]] = nn.exp %[[D]] : tensor<4x17xf32> -> tensor<4x17xf32>
// UNFUSE-NEXT:    %[[S:.*]] = nn.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true} : tensor<4x17xf32> -> tensor<4x1xf32>
// UNFUSE-NEXT:    %[[R:.*]] = nn.div %[[E]], %[[S]] : tensor<4x17xf32>, tensor<4x1xf32> -> tensor<4x17xf32>
// UNFUSE-NEXT:    func.return %[[R]] : tensor<4x17xf32>
// Rows longer than max-row keep their separate kernels.
// ROW8-LABEL: func.func @softmax
// ROW8-NEXT:    nn.reduce_max
func.func @softmax(%x: tensor<4x17xf32>) -> tensor<4x17xf32> {
  %m = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x17xf32> -> tensor<4x1xf32>
  %d = nn.sub %x, %m : tensor<4x17xf32>, tensor<4x1xf32> -> tensor<4x17xf32>
  %e = nn.exp %d : tensor<4x17xf32> -> tensor<4x17xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : tensor<4x17xf32> -> tensor<4x1xf32>
  %y = nn.div %e, %s : tensor<4x17xf32>, tensor<4x1xf32> -> tensor<4x17xf32>
  func.return %y : tensor<4x17xf32>
}

// -----

// Centering with a [N] scale after it (an epilogue input read per column), axes = -1, and a
// fused.reduce prologue (what fuse-reductions leaves) is merged into the body.
// CHECK-LABEL: func.func @center_scaled
// CHECK-NEXT:    %[[Y:.*]] = fused.row_reduce %x, %g : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %[[G:.*]]: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:      %[[M:.*]] = fused.reduce_value %[[Q]] {kind = "mean"} : f32 -> f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.mulf %[[D]], %[[G]] : f32
// CHECK-NEXT:      fused.yield %[[R]] : f32
func.func @center_scaled(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = fused.reduce %x {kind = "mean", axes = array<i64: -1>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> {
  ^bb0(%a: f32):
    %q = arith.mulf %a, %a : f32
    fused.yield %q : f32
  }
  %d = nn.sub %x, %m : tensor<2x3x8xf32>, tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %y = nn.mul %d, %g : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}

// -----

// A rank-1 row reduced without keepdims (a scalar) broadcasts back as well.
// CHECK-LABEL: func.func @rank_one
// CHECK-NEXT:    fused.row_reduce %x : (tensor<8xf32>) -> tensor<8xf32>
func.func @rank_one(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s = nn.reduce_sum %x {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %y = nn.div %x, %s : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// -----

// The row statistic is also returned: it is materialised, so the reduction stays outside and
// only the elementwise part remains (a region without a reduction is not a row region).
// CHECK-LABEL: func.func @negative_statistic_returned
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %x
// CHECK-NEXT:    nn.sub %x, %[[M]]
// CHECK-NOT:     fused.row_reduce
func.func @negative_statistic_returned(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %m = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %y = nn.sub %x, %m : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %y, %m : tensor<4x8xf32>, tensor<4x1xf32>
}

// -----

// Column standardisation: reductions over the first axis (the rows are strided: axis = 0),
// the second without keepdims (the first axis, so broadcasting restores it).
// CHECK-LABEL: func.func @column_axis
// CHECK-NEXT:    %[[Y:.*]] = fused.row_reduce %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = fused.reduce_value %[[X]] {kind = "mean"} : f32 -> f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:      %[[V:.*]] = fused.reduce_value %[[Q]] {kind = "mean"} : f32 -> f32
// CHECK-NEXT:      %[[R:.*]] = math.rsqrt %[[V]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.mulf %[[D]], %[[R]] : f32
// CHECK-NEXT:      fused.yield %[[Z]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
// UNFUSE-LABEL: func.func @column_axis
// UNFUSE-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
// UNFUSE-NEXT:    %[[D:.*]] = nn.sub %x, %[[M]] : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:    %[[Q:.*]] = nn.mul %[[D]], %[[D]]
// UNFUSE-NEXT:    %[[V:.*]] = nn.reduce_mean %[[Q]] {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
func.func @column_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %d = nn.sub %x, %m : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %q = nn.mul %d, %d : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %v = nn.reduce_mean %q {axes = array<i64: 0>} : tensor<4x8xf32> -> tensor<8xf32>
  %r = nn.rsqrt %v : tensor<8xf32> -> tensor<8xf32>
  %y = nn.mul %d, %r : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Centering over the middle axis of a 3-d tensor.
// CHECK-LABEL: func.func @middle_axis
// CHECK-NEXT:    fused.row_reduce %x {axis = 1 : i64} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
// UNFUSE-LABEL: func.func @middle_axis
// UNFUSE-NEXT:    nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x5x3xf32> -> tensor<2x1x3xf32>
func.func @middle_axis(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x5x3xf32> -> tensor<2x1x3xf32>
  %y = nn.sub %x, %m : tensor<2x5x3xf32>, tensor<2x1x3xf32> -> tensor<2x5x3xf32>
  func.return %y : tensor<2x5x3xf32>
}

// -----

// Reductions over two different axes are not one row region: the later one (the root's
// region grows upward from it) is fused, the other stays.
// CHECK-LABEL: func.func @negative_two_axes
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true}
// CHECK-NEXT:    fused.row_reduce %x, %[[M]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %[[MS:.*]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X]], %[[MS]] : f32
// CHECK-NEXT:      fused.reduce_value %[[D]] {kind = "max"}
func.func @negative_two_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %d = nn.sub %x, %m : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  %s = nn.reduce_max %d {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %y = nn.sub %d, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Without keepdims a [4] statistic would broadcast along the wrong axis: left alone.
// CHECK-LABEL: func.func @negative_no_keepdims
// CHECK-NEXT:    nn.reduce_sum %x {axes = array<i64: 1>}
// CHECK-NOT:     fused.row_reduce
func.func @negative_no_keepdims(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<4x4xf32> -> tensor<4xf32>
  %y = nn.div %x, %s : tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// -----

// Integer rows are not fused (the kernel computes on f32).
// CHECK-LABEL: func.func @negative_integer
// CHECK-NEXT:    nn.reduce_max
// CHECK-NOT:     fused.row_reduce
func.func @negative_integer(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %m = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xi32> -> tensor<4x1xi32>
  %y = nn.sub %x, %m : tensor<4x8xi32>, tensor<4x1xi32> -> tensor<4x8xi32>
  func.return %y : tensor<4x8xi32>
}
