// RUN: fusec-opt %s -p 'clip-elementwise{max-steps=2}' --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'clip-elementwise{max-inputs=2}' --split-input-file | filecheck %s --check-prefix=INPUTS

// Three steps under max-steps=2: the last two stay a region, the first becomes an nn op.
// CHECK-LABEL: func.func @over_steps
// CHECK-NEXT:    %[[E:.*]] = nn.exp %a : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[R:.*]] = fused.elementwise %[[E]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[L:.*]] = math.log %[[X]] : f32
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[L]] : f32
// CHECK-NEXT:      fused.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
// INPUTS-LABEL: func.func @over_steps
// INPUTS-NEXT:    fused.elementwise %a
// INPUTS-NEXT:    ^
// INPUTS-NEXT:      math.exp
// INPUTS-NEXT:      math.log
// INPUTS-NEXT:      math.sqrt
func.func @over_steps(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = fused.elementwise %a : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: f32):
    %0 = math.exp %x : f32
    %1 = math.log %0 : f32
    %2 = math.sqrt %1 : f32
    fused.yield %2 : f32
  }
  func.return %r : tensor<8xf32>
}

// -----

// Four inputs under max-inputs=2: cut where the inputs run out, from the end.
// INPUTS-LABEL: func.func @over_inputs
// INPUTS-NEXT:    %[[S:.*]] = nn.add %a, %b
// INPUTS-NEXT:    %[[T:.*]] = nn.add %[[S]], %c
// INPUTS-NEXT:    %[[R:.*]] = fused.elementwise %[[T]], %d : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// INPUTS-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %[[D:.*]]: f32):
// INPUTS-NEXT:      %[[U:.*]] = arith.addf %[[X]], %[[D]] : f32
// INPUTS-NEXT:      %[[E:.*]] = math.exp %[[U]] : f32
// INPUTS-NEXT:      fused.yield %[[E]] : f32
// INPUTS-NEXT:    }
// INPUTS-NEXT:    func.return %[[R]]
func.func @over_inputs(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %r = fused.elementwise %a, %b, %c, %d : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: f32, %y: f32, %z: f32, %w: f32):
    %0 = arith.addf %x, %y : f32
    %1 = arith.addf %0, %z : f32
    %2 = arith.addf %1, %w : f32
    %3 = math.exp %2 : f32
    fused.yield %3 : f32
  }
  func.return %r : tensor<8xf32>
}

// -----

// A fused.reduce over the limits keeps as much of its prologue as fits.
// CHECK-LABEL: func.func @reduce_over_steps
// CHECK-NEXT:    %[[D:.*]] = nn.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = fused.reduce %[[D]] {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[Q]] : f32
// CHECK-NEXT:      fused.yield %[[E]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @reduce_over_steps(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %r = fused.reduce %a, %b {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.subf %x, %y : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = math.exp %1 : f32
    fused.yield %2 : f32
  }
  func.return %r : tensor<4xf32>
}

// -----

// An op that alone exceeds the limits (the erf GELU is 5 steps) becomes a plain nn op.
// CHECK-LABEL: func.func @op_over_steps
// CHECK-NEXT:    %[[G:.*]] = nn.gelu %a : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    func.return %[[G]]
func.func @op_over_steps(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = fused.elementwise %a : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: f32):
    %c = arith.constant 0.707106769 : f32
    %0 = arith.mulf %x, %c : f32
    %1 = math.erf %0 : f32
    %h = arith.constant 5.000000e-01 : f32
    %2 = arith.mulf %h, %x : f32
    %one = arith.constant 1.000000e+00 : f32
    %3 = arith.addf %one, %1 : f32
    %4 = arith.mulf %2, %3 : f32
    fused.yield %4 : f32
  }
  func.return %r : tensor<8xf32>
}

// -----

// Regions within the limits are untouched.
// CHECK-LABEL: func.func @negative_within_limits
// CHECK-NEXT:    fused.elementwise %a, %b
// CHECK-NEXT:    ^
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      math.exp
// CHECK-NEXT:      fused.yield
// INPUTS-LABEL: func.func @negative_within_limits
// INPUTS-NEXT:    fused.elementwise %a, %b
func.func @negative_within_limits(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %r = fused.elementwise %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.addf %x, %y : f32
    %1 = math.exp %0 : f32
    fused.yield %1 : f32
  }
  func.return %r : tensor<8xf32>
}
