// RUN: fusec-opt %s -p unfuse-elementwise --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-elementwise,fuse-reductions,unfuse-elementwise --split-input-file | filecheck %s --check-prefix=ROUND

// Every step gets the broadcast shape of its operands and its scalar op's element type; a
// scalar constant becomes a rank-0 nn.constant; casts change the dtype of what follows.
// CHECK-LABEL: func.func @hand_written
// CHECK-NEXT:    %[[C:.*]] = nn.constant {value = dense<2.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = nn.mul %b, %[[C]] : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK-NEXT:    %[[F:.*]] = nn.cast %i : tensor<8xi32> -> tensor<8xf32>
// CHECK-NEXT:    %[[Q:.*]] = nn.add %[[P]], %[[F]] : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[LT:.*]] = nn.cmp %a, %[[Q]] {predicate = "lt"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %[[S:.*]] = nn.where %[[LT]], %a, %[[Q]] : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[H:.*]] = nn.cast %[[S]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    func.return %[[H]] : tensor<4x8xf16>
func.func @hand_written(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<8xi32>) -> tensor<4x8xf16> {
  %0 = fused.elementwise %a, %b, %i : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xi32>) -> tensor<4x8xf16> {
  ^bb0(%x: f32, %y: f32, %n: i32):
    %c = arith.constant 2.0 : f32
    %p = arith.mulf %y, %c : f32
    %f = arith.sitofp %n : i32 to f32
    %q = arith.addf %p, %f : f32
    %lt = arith.cmpf olt, %x, %q : f32
    %s = arith.select %lt, %x, %q : f32
    %h = arith.truncf %s : f32 to f16
    fused.yield %h : f16
  }
  func.return %0 : tensor<4x8xf16>
}

// -----

// When the body's value is smaller than the result (an input it does not read gave the shape),
// it is broadcast with a where on a true splat.
// CHECK-LABEL: func.func @unused_input
// CHECK-NEXT:    %[[E:.*]] = nn.exp %b : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.constant {value = dense<true> : tensor<4x8xi1>} : tensor<4x8xi1>
// CHECK-NEXT:    %[[W:.*]] = nn.where %[[T]], %[[E]], %[[E]] : tensor<4x8xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[W]]
func.func @unused_input(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %y : f32
    fused.yield %e : f32
  }
  func.return %0 : tensor<4x8xf32>
}

// -----

// fused.reduce: the prologue, then the nn reduction with its axes and keepdims.
// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    %[[D:.*]] = nn.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[Q:.*]] = nn.mul %[[D]], %[[D]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.reduce_mean %[[Q]] {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @reduce(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %0 = fused.reduce %a, %b {kind = "mean", axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32> {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    %q = arith.mulf %d, %d : f32
    fused.yield %q : f32
  }
  func.return %0 : tensor<4x1xf32>
}

// -----

// A composite form comes back as one op even when one of its steps is also used elsewhere;
// that step is then computed on its own too.
// CHECK-LABEL: func.func @shared_inside_pattern
// CHECK-NEXT:    %[[N:.*]] = nn.neg %a
// CHECK-NEXT:    %[[E:.*]] = nn.exp %[[N]]
// CHECK-NEXT:    %[[S:.*]] = nn.sigmoid %a
// CHECK-NEXT:    %[[R:.*]] = nn.add %[[S]], %[[E]]
// CHECK-NEXT:    func.return %[[R]]
func.func @shared_inside_pattern(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = fused.elementwise %a : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %x : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    %r = arith.addf %s, %e : f32
    fused.yield %r : f32
  }
  func.return %0 : tensor<8xf32>
}

// -----

// Round trip: fuse-elementwise then unfuse-elementwise gives the primitives back, composite
// activations included.
// ROUND-LABEL: func.func @round_trip_composites
// ROUND-NEXT:    %[[R:.*]] = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// ROUND-NEXT:    %[[S:.*]] = nn.silu %[[R]] : tensor<4x8xf32> -> tensor<4x8xf32>
// ROUND-NEXT:    %[[G:.*]] = nn.gelu %b : tensor<8xf32> -> tensor<8xf32>
// ROUND-NEXT:    %[[A:.*]] = nn.add %[[S]], %[[G]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// ROUND-NEXT:    %[[SG:.*]] = nn.sigmoid %[[A]] : tensor<4x8xf32> -> tensor<4x8xf32>
// ROUND-NEXT:    %[[GT:.*]] = nn.gelu %[[SG]] {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
// ROUND-NEXT:    %[[RS:.*]] = nn.rsqrt %[[GT]] : tensor<4x8xf32> -> tensor<4x8xf32>
// ROUND-NEXT:    func.return %[[RS]]
func.func @round_trip_composites(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.silu %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.gelu %b : tensor<8xf32> -> tensor<8xf32>
  %3 = nn.add %1, %2 : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = nn.sigmoid %3 : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = nn.gelu %4 {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = nn.rsqrt %5 : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %6 : tensor<4x8xf32>
}

// -----

// Integers, casts to and from i1 and f16, broadcast where: the same ops, types and shapes.
// ROUND-LABEL: func.func @round_trip_ints_and_casts
// ROUND-NEXT:    %[[N:.*]] = nn.neg %i : tensor<3xi32> -> tensor<3xi32>
// ROUND-NEXT:    %[[D:.*]] = nn.div %j, %[[N]] : tensor<2x3xi32>, tensor<3xi32> -> tensor<2x3xi32>
// ROUND-NEXT:    %[[B:.*]] = nn.cast %[[D]] : tensor<2x3xi32> -> tensor<2x3xi1>
// ROUND-NEXT:    %[[F:.*]] = nn.cast %h : tensor<3xf16> -> tensor<3xf32>
// ROUND-NEXT:    %[[W:.*]] = nn.where %[[B]], %[[F]], %x : tensor<2x3xi1>, tensor<3xf32>, tensor<f32> -> tensor<2x3xf32>
// ROUND-NEXT:    %[[Z:.*]] = nn.cast %[[W]] : tensor<2x3xf32> -> tensor<2x3xi1>
// ROUND-NEXT:    %[[O:.*]] = nn.cast %[[Z]] : tensor<2x3xi1> -> tensor<2x3xf32>
// ROUND-NEXT:    %[[M:.*]] = nn.max %[[W]], %[[O]] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// ROUND-NEXT:    %[[R:.*]] = nn.cast %[[M]] : tensor<2x3xf32> -> tensor<2x3xf16>
// ROUND-NEXT:    func.return %[[R]]
func.func @round_trip_ints_and_casts(%i: tensor<3xi32>, %j: tensor<2x3xi32>, %h: tensor<3xf16>, %x: tensor<f32>) -> tensor<2x3xf16> {
  %0 = nn.neg %i : tensor<3xi32> -> tensor<3xi32>
  %1 = nn.div %j, %0 : tensor<2x3xi32>, tensor<3xi32> -> tensor<2x3xi32>
  %2 = nn.cast %1 : tensor<2x3xi32> -> tensor<2x3xi1>
  %3 = nn.cast %h : tensor<3xf16> -> tensor<3xf32>
  %4 = nn.where %2, %3, %x : tensor<2x3xi1>, tensor<3xf32>, tensor<f32> -> tensor<2x3xf32>
  %5 = nn.cast %4 : tensor<2x3xf32> -> tensor<2x3xi1>
  %6 = nn.cast %5 : tensor<2x3xi1> -> tensor<2x3xf32>
  %7 = nn.max %4, %6 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %8 = nn.cast %7 : tensor<2x3xf32> -> tensor<2x3xf16>
  func.return %8 : tensor<2x3xf16>
}

// -----

// A reduction with a prologue: fuse-reductions, then back.
// ROUND-LABEL: func.func @round_trip_reduce
// ROUND-NEXT:    %[[D:.*]] = nn.sub %a, %b
// ROUND-NEXT:    %[[Q:.*]] = nn.mul %[[D]], %[[D]]
// ROUND-NEXT:    %[[R:.*]] = nn.reduce_sum %[[Q]] {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
// ROUND-NEXT:    func.return %[[R]]
func.func @round_trip_reduce(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<f32> {
  %0 = nn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.mul %0, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.reduce_sum %1 {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  func.return %2 : tensor<f32>
}
