// RUN: fusec-opt %s -p fuse-elementwise,fuse-multi-output --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-elementwise,fuse-multi-output,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p 'fuse-elementwise,fuse-multi-output{max-steps=2}' --split-input-file | filecheck %s --check-prefix=STEPS

// An intermediate that is also returned is stored by the region's kernel: one op, two results.
// CHECK-LABEL: func.func @returned_intermediate
// CHECK-NEXT:    %[[Y:.*]], %[[T:.*]] = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[M]], %[[A]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[E]], %[[M]] : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>
// UNFUSE-LABEL: func.func @returned_intermediate
// UNFUSE-NEXT:    %[[T:.*]] = nn.mul %a, %b
// UNFUSE-NEXT:    %[[S:.*]] = nn.add %[[T]], %a
// UNFUSE-NEXT:    %[[Y:.*]] = nn.exp %[[S]]
// UNFUSE-NEXT:    func.return %[[Y]], %[[T]]
// max-steps=2: the merged body would hold 3 steps; the regions stay apart.
// STEPS-LABEL: func.func @returned_intermediate
// STEPS-NEXT:    nn.mul
// STEPS-NEXT:    fused.elementwise
func.func @returned_intermediate(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %t = nn.mul %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %u = nn.add %t, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.exp %u : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %t : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A value with two elementwise consumers no longer splits the region: it joins the first
// consumer, then the merged op joins the second; it is no longer stored.
// CHECK-LABEL: func.func @two_consumers
// CHECK-NEXT:    %[[V:.*]], %[[U:.*]] = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[M]] : f32
// CHECK-NEXT:      %[[H:.*]] = math.tanh %[[M]] : f32
// CHECK-NEXT:      fused.yield %[[H]], %[[E]] : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[U]], %[[V]]
func.func @two_consumers(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %t = nn.mul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %u = nn.exp %t : tensor<4x8xf32> -> tensor<4x8xf32>
  %v = nn.tanh %t : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %u, %v : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The intermediate feeds a matmul before the consumer: the merged op stands where the
// producer stood (the consumer's other input is defined before it).
// CHECK-LABEL: func.func @read_before_consumer
// CHECK-NEXT:    %[[Y:.*]], %[[T:.*]] = fused.elementwise %a, %c
// CHECK:         nn.matmul %[[T]], %w
// CHECK-NEXT:    func.return
func.func @read_before_consumer(%a: tensor<4x4xf32>, %c: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %t = nn.exp %a : tensor<4x4xf32> -> tensor<4x4xf32>
  %p = nn.matmul %t, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %y = nn.add %t, %c : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y, %p : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The consumer also reads what the matmul made of the intermediate: neither place works.
// CHECK-LABEL: func.func @negative_cycle
// CHECK-NEXT:    nn.exp
// CHECK-NEXT:    nn.matmul
// CHECK-NEXT:    nn.add
func.func @negative_cycle(%a: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %t = nn.exp %a : tensor<4x4xf32> -> tensor<4x4xf32>
  %p = nn.matmul %t, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %y = nn.add %t, %p : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// -----

// An intermediate of a smaller shape than the consumer's iteration space is not merged.
// CHECK-LABEL: func.func @negative_shapes
// CHECK-NEXT:    nn.exp %b
// CHECK-NEXT:    nn.add
func.func @negative_shapes(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %t = nn.exp %b : tensor<8xf32> -> tensor<8xf32>
  %y = nn.add %a, %t : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y, %t : tensor<4x8xf32>, tensor<8xf32>
}
