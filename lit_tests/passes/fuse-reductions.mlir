// RUN: fusec-opt %s -p fuse-reductions --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-reductions{max-steps=1}' --split-input-file | filecheck %s --check-prefix=STEPS

// sum((a - b) * (a - b)) over all elements: the chain is absorbed one producer at a time.
// CHECK-LABEL: func.func @sum_of_squares_all
// CHECK-NEXT:    %[[R:.*]] = fused.reduce %a, %b {kind = "sum", axes = array<i64: 0, 1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:      fused.yield %[[Q]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<f32>
// max-steps=1: only the square fits in the prologue.
// STEPS-LABEL: func.func @sum_of_squares_all
// STEPS-NEXT:    %[[D:.*]] = nn.sub %a, %b
// STEPS-NEXT:    %[[R:.*]] = fused.reduce %[[D]] {kind = "sum", axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32> {
// STEPS-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// STEPS-NEXT:      %[[Q:.*]] = arith.mulf %[[X]], %[[X]] : f32
// STEPS-NEXT:      fused.yield %[[Q]] : f32
func.func @sum_of_squares_all(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<f32> {
  %0 = nn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.mul %0, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.reduce_sum %1 {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  func.return %2 : tensor<f32>
}

// -----

// A reduction over given axes keeps its axes and keepdims; a [N] input broadcasts over [M, N].
// CHECK-LABEL: func.func @max_over_axis_keepdims
// CHECK-NEXT:    %[[R:.*]] = fused.reduce %x, %b {kind = "max", axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[E]] : f32
func.func @max_over_axis_keepdims(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = nn.exp %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.reduce_max %1 {axes = array<i64: -1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %2 : tensor<4x1xf32>
}

// -----

// A fused.elementwise region (what fuse-elementwise makes) becomes the prologue as a whole.
// CHECK-LABEL: func.func @region_prologue
// CHECK-NEXT:    %[[R:.*]] = fused.reduce %x {kind = "mean", axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[L:.*]] = math.log %[[X]] : f32
// CHECK-NEXT:      %[[A:.*]] = math.absf %[[L]] : f32
// CHECK-NEXT:      fused.yield %[[A]] : f32
func.func @region_prologue(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = fused.elementwise %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    %l = math.log %a : f32
    %b = math.absf %l : f32
    fused.yield %b : f32
  }
  %1 = nn.reduce_mean %0 {axes = array<i64: 0>} : tensor<4x8xf32> -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}

// -----

// Counting with integers: cmp, cast to i32, sum.
// CHECK-LABEL: func.func @count_less
// CHECK-NEXT:    fused.reduce %a, %b {kind = "sum", axes = array<i64: 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<i32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[I:.*]] = arith.extui %[[P]] : i1 to i32
// CHECK-NEXT:      fused.yield %[[I]] : i32
func.func @count_less(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<i32> {
  %0 = nn.cmp %a, %b {predicate = "lt"} : tensor<8xf32>, tensor<8xf32> -> tensor<8xi1>
  %1 = nn.cast %0 : tensor<8xi1> -> tensor<8xi32>
  %2 = nn.reduce_sum %1 {axes = array<i64: 0>} : tensor<8xi32> -> tensor<i32>
  func.return %2 : tensor<i32>
}

// -----

// A producer that is also returned stays materialised.
// CHECK-LABEL: func.func @negative_returned_producer
// CHECK-NEXT:    %[[E:.*]] = nn.exp %x
// CHECK-NEXT:    %[[R:.*]] = nn.reduce_sum %[[E]]
// CHECK-NEXT:    func.return %[[E]], %[[R]]
func.func @negative_returned_producer(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.reduce_sum %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  func.return %0, %1 : tensor<8xf32>, tensor<f32>
}

// -----

// Sibling reductions of one producer (all its readers reductions of the same shape): each
// takes a copy of it into its prologue, and the producer is gone (launch fusion then runs the
// two, which read the same input, as one kernel).
// CHECK-LABEL: func.func @sibling_reductions
// CHECK-NEXT:    %[[S:.*]] = fused.reduce %x {kind = "sum", axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:      fused.yield %[[E]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M:.*]] = fused.reduce %x {kind = "max", axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32> {
// CHECK-NEXT:    ^{{.*}}(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[F:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT:      fused.yield %[[F]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[S]], %[[M]]
func.func @sibling_reductions(%x: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.reduce_sum %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = nn.reduce_max %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  func.return %1, %2 : tensor<f32>, tensor<f32>
}

// -----

// A producer read by a reduction and by another kind of op stays materialised.
// CHECK-LABEL: func.func @negative_reduction_and_elementwise_reader
// CHECK-NEXT:    %[[E:.*]] = nn.exp %x
// CHECK-NEXT:    nn.reduce_sum %[[E]]
// CHECK-NEXT:    nn.add %[[E]], %[[E]]
func.func @negative_reduction_and_elementwise_reader(%x: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>) {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.reduce_sum %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = nn.add %0, %0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %1, %2 : tensor<f32>, tensor<8xf32>
}

// -----

// A reduction of a plain tensor, or of a non-elementwise producer, stays an nn reduction.
// CHECK-LABEL: func.func @negative_no_elementwise_producer
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %x
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %x, %w
// CHECK-NEXT:    %[[R:.*]] = nn.reduce_min %[[M]]
// CHECK-NEXT:    func.return %[[S]], %[[R]]
func.func @negative_no_elementwise_producer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %1 = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %2 = nn.reduce_min %1 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  func.return %0, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// When a splat constant gives the reduced shape, the inputs alone would not cover it: no fusion.
// CHECK-LABEL: func.func @negative_shape_from_constant
// CHECK-NEXT:    %[[C:.*]] = nn.constant
// CHECK-NEXT:    %[[M:.*]] = nn.mul %x, %[[C]]
// CHECK-NEXT:    nn.reduce_sum %[[M]]
func.func @negative_shape_from_constant(%x: tensor<8xf32>) -> tensor<4xf32> {
  %c = nn.constant {value = dense<3.000000e+00> : tensor<4x8xf32>} : tensor<4x8xf32>
  %0 = nn.mul %x, %c : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.reduce_sum %0 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
