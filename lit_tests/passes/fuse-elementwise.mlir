// RUN: fusec-opt %s -p fuse-elementwise --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-elementwise{max-steps=2}' --split-input-file | filecheck %s --check-prefix=STEPS
// RUN: fusec-opt %s -p 'fuse-elementwise{max-inputs=3}' --split-input-file | filecheck %s --check-prefix=INPUTS

// A chain with a [N] input broadcast over [M, N]: one region, inputs deduplicated.
// CHECK-LABEL: func.func @chain_broadcast
// CHECK-NEXT:    %[[R:.*]] = fused.elementwise %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[A]] : f32
// CHECK-NEXT:      fused.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x8xf32>
func.func @chain_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = nn.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = nn.exp %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.mul %1, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// Splat constants (rank-0 or full) become arith.constant in the body, not inputs; the
// nn.constant ops left without users are erased.
// CHECK-LABEL: func.func @scalar_constants
// CHECK-NEXT:    %[[R:.*]] = fused.elementwise %x : (tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[X]], %[[H]] : f32
// CHECK-NEXT:      %[[O:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[M]], %[[O]] : f32
// CHECK-NEXT:      fused.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @scalar_constants(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %half = nn.constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
  %ones = nn.constant {value = dense<1.000000e+00> : tensor<2x3xf32>} : tensor<2x3xf32>
  %0 = nn.mul %x, %half : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %1 = nn.add %0, %ones : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// -----

// A non-splat constant is an ordinary input.
// CHECK-LABEL: func.func @dense_constant_is_input
// CHECK-NEXT:    %[[C:.*]] = nn.constant
// CHECK-NEXT:    fused.elementwise %x, %[[C]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
func.func @dense_constant_is_input(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = nn.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %0 = nn.mul %x, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %1 = nn.exp %0 : tensor<2xf32> -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}

// -----

// Casts keep their real conversions; the element type changes along the body.
// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    fused.elementwise %h, %i : (tensor<8xf16>, tensor<8xi32>) -> tensor<8xf16> {
// CHECK-NEXT:    ^{{.*}}(%[[H:.*]]: f16, %[[I:.*]]: i32):
// CHECK-NEXT:      %[[A:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT:      %[[B:.*]] = arith.sitofp %[[I]] : i32 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.fptosi %[[S]] : f32 to i32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[R:.*]] = arith.maxsi %[[T]], %[[Z]] : i32
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[NZ:.*]] = arith.cmpi ne, %[[R]], %[[Z2]] : i32
// CHECK-NEXT:      %[[F:.*]] = arith.uitofp %[[NZ]] : i1 to f32
// CHECK-NEXT:      %[[N:.*]] = arith.truncf %[[F]] : f32 to f16
// CHECK-NEXT:      fused.yield %[[N]] : f16
func.func @casts(%h: tensor<8xf16>, %i: tensor<8xi32>) -> tensor<8xf16> {
  %0 = nn.cast %h : tensor<8xf16> -> tensor<8xf32>
  %1 = nn.cast %i : tensor<8xi32> -> tensor<8xf32>
  %2 = nn.add %0, %1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %3 = nn.cast %2 : tensor<8xf32> -> tensor<8xi32>
  %4 = nn.relu %3 : tensor<8xi32> -> tensor<8xi32>
  %5 = nn.cast %4 : tensor<8xi32> -> tensor<8xi1>
  %6 = nn.cast %5 : tensor<8xi1> -> tensor<8xf32>
  %7 = nn.cast %6 : tensor<8xf32> -> tensor<8xf16>
  func.return %7 : tensor<8xf16>
}

// -----

// cmp and where (with a rank-0 input) in one region; "ne" is unordered, as numpy's !=.
// CHECK-LABEL: func.func @cmp_where
// CHECK-NEXT:    fused.elementwise %a, %b, %c : (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.cmpf une, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[C]] : f32
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[P]], %[[N]], %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[W]] : f32
func.func @cmp_where(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<f32>) -> tensor<4x8xf32> {
  %0 = nn.cmp %a, %b {predicate = "ne"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %1 = nn.neg %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.sqrt %c : tensor<f32> -> tensor<f32>
  %3 = nn.where %0, %1, %2 : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// Activations expand to their scalar formulas: sigmoid = 1 / (1 + exp(-x)), then the tanh GELU,
// 0.5 x (1 + tanh(z)) as x / (1 + exp(-2 z)) (no cancellation for very negative z).
// CHECK-LABEL: func.func @activations
// CHECK-NEXT:    fused.elementwise %x : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NX:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[NX]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:      %[[S2:.*]] = arith.mulf %[[S]], %[[S]] : f32
// CHECK-NEXT:      %[[S3:.*]] = arith.mulf %[[S2]], %[[S]] : f32
// CHECK-NEXT:      %[[K:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT:      %[[KS3:.*]] = arith.mulf %[[K]], %[[S3]] : f32
// CHECK-NEXT:      %[[IN:.*]] = arith.addf %[[S]], %[[KS3]] : f32
// CHECK-NEXT:      %[[C:.*]] = arith.constant -1.59576917 : f32
// CHECK-NEXT:      %[[SC:.*]] = arith.mulf %[[C]], %[[IN]] : f32
// CHECK-NEXT:      %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[E2:.*]] = math.exp %[[SC]] : f32
// CHECK-NEXT:      %[[D2:.*]] = arith.addf %[[ONE2]], %[[E2]] : f32
// CHECK-NEXT:      %[[G:.*]] = arith.divf %[[S]], %[[D2]] : f32
// CHECK-NEXT:      fused.yield %[[G]] : f32
func.func @activations(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.sigmoid %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.gelu %0 {approximate = "tanh"} : tensor<8xf32> -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}

// -----

// Existing fused.elementwise ops merge with their neighbours; their body ops are moved.
// CHECK-LABEL: func.func @merge_existing
// CHECK-NEXT:    %[[R:.*]] = fused.elementwise %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[A]] : f32
// CHECK-NEXT:      fused.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]]
func.func @merge_existing(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = fused.elementwise %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    fused.yield %s : f32
  }
  %1 = nn.exp %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = fused.elementwise %1, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%c: f32, %d: f32):
    %m = arith.mulf %c, %d : f32
    fused.yield %m : f32
  }
  func.return %2 : tensor<8xf32>
}

// -----

// One user that reads a value twice is still its only user.
// CHECK-LABEL: func.func @one_user_reads_twice
// CHECK-NEXT:    fused.elementwise %x : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[E]], %[[E]] : f32
// CHECK-NEXT:      fused.yield %[[M]] : f32
func.func @one_user_reads_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.mul %0, %0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}

// -----

// A value read by two regions is materialised: it ends both regions.
// CHECK-LABEL: func.func @negative_multi_consumer
// CHECK-NEXT:    %[[E:.*]] = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[R1:.*]] = fused.elementwise %[[E]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[L:.*]] = math.log %[[A]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[L]] : f32
// CHECK-NEXT:      fused.yield %[[N]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R2:.*]] = fused.elementwise %[[E]] : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[B]] : f32
// CHECK-NEXT:      %[[T:.*]] = math.absf %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[T]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R1]], %[[R2]]
func.func @negative_multi_consumer(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.log %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = nn.neg %1 : tensor<8xf32> -> tensor<8xf32>
  %3 = nn.sqrt %0 : tensor<8xf32> -> tensor<8xf32>
  %4 = nn.abs %3 : tensor<8xf32> -> tensor<8xf32>
  func.return %2, %4 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A value whose users all join one region (a diamond) joins it too: nothing else reads it.
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT:    fused.elementwise %x : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[L:.*]] = math.log %[[E]] : f32
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[E]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[L]], %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[R]] : f32
func.func @diamond(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.log %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = nn.sqrt %0 : tensor<8xf32> -> tensor<8xf32>
  %3 = nn.add %1, %2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %3 : tensor<8xf32>
}

// -----

// A returned value is a graph output: it is never fused away.
// CHECK-LABEL: func.func @negative_returned
// CHECK-NEXT:    %[[E:.*]] = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %[[L:.*]] = nn.log %[[E]] : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT:    func.return %[[E]], %[[L]]
func.func @negative_returned(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = nn.exp %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.log %0 : tensor<8xf32> -> tensor<8xf32>
  func.return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A region of one op (constants do not count) is left alone.
// CHECK-LABEL: func.func @negative_single_op
// CHECK-NEXT:    %[[C:.*]] = nn.constant
// CHECK-NEXT:    nn.mul %x, %[[C]]
// CHECK-NEXT:    func.return
func.func @negative_single_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = nn.constant {value = dense<2.000000e+00> : tensor<f32>} : tensor<f32>
  %0 = nn.mul %x, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

// matmul, norms and reshapes are boundaries: one region on each side.
// CHECK-LABEL: func.func @negative_boundaries
// CHECK-NEXT:    %[[A:.*]] = fused.elementwise %x
// CHECK:         math.exp
// CHECK-NEXT:    math.log
// CHECK:         %[[MM:.*]] = nn.matmul %[[A]], %w
// CHECK-NEXT:    %[[B:.*]] = fused.elementwise %[[MM]]
// CHECK:         arith.maximumf
// CHECK-NEXT:    arith.negf
// CHECK:         %[[N:.*]] = nn.rms_norm %[[B]], %g
// CHECK-NEXT:    %[[C:.*]] = fused.elementwise %[[N]]
// CHECK:         math.tanh
// CHECK-NEXT:    math.absf
// CHECK:         %[[RS:.*]] = nn.reshape %[[C]]
// CHECK-NEXT:    %[[D:.*]] = fused.elementwise %[[RS]]
// CHECK:         func.return %[[D]]
func.func @negative_boundaries(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %g: tensor<8xf32>) -> tensor<32xf32> {
  %0 = nn.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.log %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.matmul %1, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %3 = nn.relu %2 : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = nn.neg %3 : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = nn.rms_norm %4, %g : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %6 = nn.tanh %5 : tensor<4x8xf32> -> tensor<4x8xf32>
  %7 = nn.abs %6 : tensor<4x8xf32> -> tensor<4x8xf32>
  %8 = nn.reshape %7 : tensor<4x8xf32> -> tensor<32xf32>
  %9 = nn.exp %8 : tensor<32xf32> -> tensor<32xf32>
  %10 = nn.log %9 : tensor<32xf32> -> tensor<32xf32>
  func.return %10 : tensor<32xf32>
}

// -----

// Reductions, softmax and layer_norm are boundaries too; between them nothing fuses.
// CHECK-LABEL: func.func @negative_reduce_softmax_boundaries
// CHECK-NOT:     fused.elementwise
// CHECK:         func.return
func.func @negative_reduce_softmax_boundaries(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4xf32> {
  %0 = nn.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.softmax %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.log %1 : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = nn.layer_norm %2, %g, %g : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = nn.sqrt %3 : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = nn.reduce_sum %4 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %6 = nn.neg %5 : tensor<4xf32> -> tensor<4xf32>
  func.return %6 : tensor<4xf32>
}

// -----

// Limits: ops are visited last to first and join their user's region while it fits.
// Default limits: one region.
// CHECK-LABEL: func.func @limit_cuts
// CHECK-NEXT:    fused.elementwise %a, %b, %c, %d
// CHECK-NOT:     fused.elementwise
// CHECK:         func.return
// max-steps=2: {add, add} from the end, then {log, add}; exp is left alone.
// STEPS-LABEL: func.func @limit_cuts
// STEPS-NEXT:    %[[E:.*]] = nn.exp %a : tensor<8xf32> -> tensor<8xf32>
// STEPS-NEXT:    %[[R1:.*]] = fused.elementwise %[[E]], %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// STEPS-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %[[B:.*]]: f32):
// STEPS-NEXT:      %[[L:.*]] = math.log %[[X]] : f32
// STEPS-NEXT:      %[[S:.*]] = arith.addf %[[L]], %[[B]] : f32
// STEPS-NEXT:      fused.yield %[[S]] : f32
// STEPS-NEXT:    }
// STEPS-NEXT:    %[[R2:.*]] = fused.elementwise %[[R1]], %c, %d
// STEPS-NEXT:    ^{{.*}}(%[[Y:.*]]: f32, %[[C:.*]]: f32, %[[D:.*]]: f32):
// STEPS-NEXT:      %[[T:.*]] = arith.addf %[[Y]], %[[C]] : f32
// STEPS-NEXT:      %[[U:.*]] = arith.addf %[[T]], %[[D]] : f32
// STEPS-NEXT:      fused.yield %[[U]] : f32
// STEPS-NEXT:    }
// STEPS-NEXT:    func.return %[[R2]]
// max-inputs=3: the region from the last add takes one more add, then {exp, log, add}.
// INPUTS-LABEL: func.func @limit_cuts
// INPUTS-NEXT:    %[[R1:.*]] = fused.elementwise %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// INPUTS:         %[[R2:.*]] = fused.elementwise %[[R1]], %c, %d : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// INPUTS:         func.return %[[R2]]
func.func @limit_cuts(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.exp %a : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.log %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = nn.add %1, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %3 = nn.add %2, %c : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %4 = nn.add %3, %d : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %4 : tensor<8xf32>
}

// -----

// An op alone over the limits (sigmoid is 4 steps) stays an nn op under max-steps=2.
// STEPS-LABEL: func.func @negative_op_over_limit
// STEPS-NEXT:    nn.sigmoid %x
// STEPS-NEXT:    nn.sigmoid
// STEPS-NEXT:    func.return
func.func @negative_op_over_limit(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.sigmoid %x : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.sigmoid %0 : tensor<8xf32> -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}

// -----

// An operand that is already an input is not counted twice: under max-inputs=3 the four ops
// fit, as they read only x, c and b.
// INPUTS-LABEL: func.func @inputs_deduplicated
// INPUTS-NEXT:    fused.elementwise %x, %c, %b : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// INPUTS-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %[[C:.*]]: f32, %[[B:.*]]: f32):
// INPUTS-NEXT:      %[[S:.*]] = arith.subf %[[X]], %[[C]] : f32
// INPUTS-NEXT:      %[[A:.*]] = arith.addf %[[X]], %[[B]] : f32
// INPUTS-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[X]] : f32
// INPUTS-NEXT:      %[[R:.*]] = arith.divf %[[M]], %[[S]] : f32
// INPUTS-NEXT:      fused.yield %[[R]] : f32
func.func @inputs_deduplicated(%x: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.sub %x, %c : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %1 = nn.add %x, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %2 = nn.mul %1, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %3 = nn.div %2, %0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %3 : tensor<8xf32>
}
