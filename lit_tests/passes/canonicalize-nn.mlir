// RUN: fusec-opt %s -p canonicalize-nn --split-input-file | filecheck %s
// RUN: fusec-opt %s -p canonicalize-nn --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: fusec-opt %s -p canonicalize-nn --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s --check-prefix=MISSED

// A softmax whose reductions drop the axis and are reshaped back: the keepdims form.
// CHECK-LABEL: func.func @softmax_dropped_axis
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = nn.sub %x, %[[M]] : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = nn.exp %[[D]]
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.div %[[E]], %[[S]] : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 2]]:3: remark: [canonicalize-nn] rewrote #0: canonical form 'keepdims'
func.func @softmax_dropped_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = nn.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %m2 = nn.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
  %d = nn.sub %x, %m2 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %e = nn.exp %d : tensor<4x8xf32> -> tensor<4x8xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %s2 = nn.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
  %y = nn.div %e, %s2 : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// A middle axis of a 3-d tensor, reshaped back; a reshape to another shape reads the kept form.
// CHECK-LABEL: func.func @middle_axis
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x5x3xf32> -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.sub %x, %[[M]] : tensor<2x5x3xf32>, tensor<2x1x3xf32> -> tensor<2x5x3xf32>
// CHECK-NEXT:    %[[F:.*]] = nn.reshape %[[M]] : tensor<2x1x3xf32> -> tensor<6xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[F]]
func.func @middle_axis(%x: tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<6xf32>) {
  %m = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<2x5x3xf32> -> tensor<2x3xf32>
  %k = nn.reshape %m : tensor<2x3xf32> -> tensor<2x1x3xf32>
  %y = nn.sub %x, %k : tensor<2x5x3xf32>, tensor<2x1x3xf32> -> tensor<2x5x3xf32>
  %f = nn.reshape %m : tensor<2x3xf32> -> tensor<6xf32>
  func.return %y, %f : tensor<2x5x3xf32>, tensor<6xf32>
}

// -----

// A column mean without keepdims read by a broadcasting op: numpy puts it where keepdims does.
// CHECK-LABEL: func.func @leading_axis_broadcast
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<16x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.sub %x, %[[M]] : tensor<16x4xf32>, tensor<1x4xf32> -> tensor<16x4xf32>
func.func @leading_axis_broadcast(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %m = nn.reduce_mean %x {axes = array<i64: 0>} : tensor<16x4xf32> -> tensor<4xf32>
  %y = nn.sub %x, %m : tensor<16x4xf32>, tensor<4xf32> -> tensor<16x4xf32>
  func.return %y : tensor<16x4xf32>
}

// -----

// A returned reduction keeps its form (the caller gets the shape it asked for); so does a
// last-axis one read by a broadcasting op (it broadcasts along another axis than keepdims).
// CHECK-LABEL: func.func @negative_returned
// CHECK-NEXT:    nn.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    nn.reshape
// CHECK-NEXT:    nn.reduce_sum %z {axes = array<i64: 1>} : tensor<4x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    nn.div
func.func @negative_returned(%x: tensor<4x8xf32>, %z: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4x1xf32>, tensor<4x4xf32>) {
  %m = nn.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %k = nn.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
  %s = nn.reduce_sum %z {axes = array<i64: 1>} : tensor<4x4xf32> -> tensor<4xf32>
  %y = nn.div %z, %s : tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  func.return %m, %k, %y : tensor<4xf32>, tensor<4x1xf32>, tensor<4x4xf32>
}

// -----

// x / sqrt(v) is x * rsqrt(v); 1 / sqrt(v) is rsqrt(v).
// CHECK-LABEL: func.func @divide_by_sqrt
// CHECK-NEXT:    %[[R:.*]] = nn.rsqrt %v : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.mul %x, %[[R]] : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[I:.*]] = nn.rsqrt %w : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Y]], %[[I]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 6]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'x * rsqrt(v)'
func.func @divide_by_sqrt(%x: tensor<4x8xf32>, %v: tensor<4x1xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = nn.sqrt %v : tensor<4x1xf32> -> tensor<4x1xf32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %t = nn.sqrt %w : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.div %x, %s : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %i = nn.div %one, %t : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %i : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A sqrt that something else reads stays (rsqrt would be a second kernel's work).
// CHECK-LABEL: func.func @negative_sqrt_shared
// CHECK-NEXT:    nn.sqrt
// CHECK-NEXT:    nn.div
func.func @negative_sqrt_shared(%x: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = nn.sqrt %v : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.div %x, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// pow(x, 2) is x * x and pow(x, 1) is x; pow(x, 0.5) stays (pow(-inf, 0.5) is +inf, sqrt's NaN).
// CHECK-LABEL: func.func @powers
// CHECK-NEXT:    %[[H:.*]] = nn.constant {value = dense<5.000000e-01> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[Q:.*]] = nn.mul %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.pow %x, %[[H]] : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Q]], %x, %[[R]]
func.func @powers(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %half = nn.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %q = nn.pow %x, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %p = nn.pow %x, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %r = nn.pow %x, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %q, %p, %r : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Constants fold in float32 (n - 1 of a sample variance, sqrt of eps); a commutative op reads
// its constant on the right.
// CHECK-LABEL: func.func @folds
// CHECK-NEXT:    %[[C:.*]] = nn.constant {value = dense<1.500000e+01> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[Y:.*]] = nn.div %x, %[[C]] : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[E:.*]] = nn.constant {value = dense<1.000000e-03> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[Z:.*]] = nn.add %[[Y]], %[[E]] : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[Z]]
func.func @folds(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %n = nn.constant {value = dense<16.0> : tensor<f32>} : tensor<f32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %n1 = nn.sub %n, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %y = nn.div %x, %n1 : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %e2 = nn.constant {value = dense<1.0e-06> : tensor<f32>} : tensor<f32>
  %e = nn.sqrt %e2 : tensor<f32> -> tensor<f32>
  %z = nn.add %e, %y : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}

// -----

// GPT-2 as exported: the rows flattened around each 2-D MatMul and unflattened after its bias
// and activation. Each reshape moves up its epilogue chain to the GEMM's input, where it meets
// the other reshape and both go: the GEMM, bias and GELU read the 3-D rows.
// CHECK-LABEL: func.func @rows_around_gemm
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %h, %w : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.add %[[M]], %b : tensor<2x4x16xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    %[[G:.*]] = nn.gelu %[[B]] {approximate = "tanh"} : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.add %[[G]], %r : tensor<2x4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT:    func.return %[[R]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 8]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'reshape toward inputs'
// REMARK: rewrote #{{[0-9]+}}: canonical form 'reshape of a reshape'
// REMARK: rewrote #{{[0-9]+}}: canonical form 'identity reshape'
func.func @rows_around_gemm(%h: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %r: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %flat = nn.reshape %h : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %m = nn.matmul %flat, %w : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %mb = nn.add %m, %b : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %g = nn.gelu %mb {approximate = "tanh"} : tensor<8x16xf32> -> tensor<8x16xf32>
  %u = nn.reshape %g : tensor<8x16xf32> -> tensor<2x4x16xf32>
  %y = nn.add %u, %r : tensor<2x4x16xf32>, tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// -----

// A reshape of a GEMM's rows to a vector stays below it: moved above, it would leave the GEMM a
// rank-1 lhs, which no GEMM takes (fuzz program 600111).
// CHECK-LABEL: func.func @rows_to_a_vector
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %x, %w : tensor<1x1x4xf32>, tensor<4x7xf32> -> tensor<1x1x7xf32>
// CHECK-NEXT:    %[[V:.*]] = nn.reshape %[[M]] : tensor<1x1x7xf32> -> tensor<7xf32>
// CHECK-NEXT:    func.return %[[V]]
func.func @rows_to_a_vector(%x: tensor<1x1x4xf32>, %w: tensor<4x7xf32>) -> tensor<7xf32> {
  %m = nn.matmul %x, %w : tensor<1x1x4xf32>, tensor<4x7xf32> -> tensor<1x1x7xf32>
  %v = nn.reshape %m : tensor<1x1x7xf32> -> tensor<7xf32>
  func.return %v : tensor<7xf32>
}

// -----

// torch's encoder with one batch: (B, S, E) -> (S, B, E) and back move only a unit axis, so
// they are reshapes, and the one after the GEMM's bias moves to the GEMM's input.
// CHECK-LABEL: func.func @unit_axes_transpose
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %x, %w : tensor<1x8x4xf32>, tensor<4x6xf32> -> tensor<1x8x6xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.add %b, %[[M]] : tensor<6xf32>, tensor<1x8x6xf32> -> tensor<1x8x6xf32>
// CHECK-NEXT:    func.return %[[B]]
// REMARK: canonical form 'transpose of unit axes'
func.func @unit_axes_transpose(%x: tensor<1x8x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<1x8x6xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<1x8x4xf32> -> tensor<8x1x4xf32>
  %m = nn.matmul %t, %w : tensor<8x1x4xf32>, tensor<4x6xf32> -> tensor<8x1x6xf32>
  %mb = nn.add %b, %m : tensor<6xf32>, tensor<8x1x6xf32> -> tensor<8x1x6xf32>
  %u = nn.transpose %mb {perm = array<i64: 1, 0, 2>} : tensor<8x1x6xf32> -> tensor<1x8x6xf32>
  func.return %u : tensor<1x8x6xf32>
}

// -----

// Guards: a reshape whose chain does not reach a GEMM stays (here a rotary-like chain over a
// narrow); a value with another reader keeps its reshape (the sum is returned too); a reshape
// that changes the last axis stays; a transpose of axes longer than 1 stays.
// CHECK-LABEL: func.func @negative_reshapes_stay
// CHECK-NEXT:    %[[XS:.*]] = nn.reshape %x
// CHECK-NEXT:    %[[N:.*]] = nn.narrow %[[XS]]
// CHECK-NEXT:    %[[E:.*]] = nn.exp %[[N]]
// CHECK-NEXT:    %[[R1:.*]] = nn.reshape %[[E]] : tensor<2x4x4xf32> -> tensor<2x4x1x4xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.matmul %x, %w
// CHECK-NEXT:    %[[S:.*]] = nn.add %[[M]], %b
// CHECK-NEXT:    %[[R2:.*]] = nn.reshape %[[S]] : tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[R3:.*]] = nn.reshape %[[M]] : tensor<8x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %[[R2]] {perm = array<i64: 1, 0, 2>}
// CHECK-NEXT:    func.return %[[R1]], %[[S]], %[[R3]], %[[T]]
func.func @negative_reshapes_stay(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<2x4x1x4xf32>, tensor<8x8xf32>, tensor<4x16xf32>, tensor<4x2x8xf32>) {
  %xs = nn.reshape %x : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %n = nn.narrow %xs {axis = 2 : i64, start = 0 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %e = nn.exp %n : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %r1 = nn.reshape %e : tensor<2x4x4xf32> -> tensor<2x4x1x4xf32>
  %m = nn.matmul %x, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %s = nn.add %m, %b : tensor<8x8xf32>, tensor<8xf32> -> tensor<8x8xf32>
  %r2 = nn.reshape %s : tensor<8x8xf32> -> tensor<2x4x8xf32>
  %r3 = nn.reshape %m : tensor<8x8xf32> -> tensor<4x16xf32>
  %t = nn.transpose %r2 {perm = array<i64: 1, 0, 2>} : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  func.return %r1, %s, %r3, %t : tensor<2x4x1x4xf32>, tensor<8x8xf32>, tensor<4x16xf32>, tensor<4x2x8xf32>
}

// -----

// Grouped-query attention: k is a Gather of [0, 0, 1, 1] over the heads of a rotated
// projection (TorchScript's repeat_kv), v an Unsqueeze/Expand/Reshape (a where on a constant
// true); both read the 2 kv heads once, with num_kv_heads = 2, and the repeats are gone.
// CHECK-LABEL: func.func @grouped_heads
// CHECK-NEXT:    %[[R:.*]] = nn.mul %kh, %kh : tensor<1x2x6x8xf32>
// CHECK-NEXT:    %[[T:.*]] = nn.transpose %[[R]] {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x6x8xf32> -> tensor<1x6x2x8xf32>
// CHECK-NEXT:    %[[K:.*]] = nn.reshape %[[T]] : tensor<1x6x2x8xf32> -> tensor<1x6x16xf32>
// CHECK-NEXT:    %[[A:.*]] = nn.attention %q, %[[K]], %v mask %m {num_heads = 4 : i64, head_dim = 8 : i64, causal = true, num_kv_heads = 2 : i64} : tensor<1x6x32xf32>, tensor<1x6x16xf32>, tensor<1x6x16xf32>, tensor<1x6xi32> -> tensor<1x6x32xf32>
// CHECK-NEXT:    func.return %[[A]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 11]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'grouped heads'
func.func @grouped_heads(%q: tensor<1x6x32xf32>, %kh: tensor<1x2x6x8xf32>, %v: tensor<1x6x16xf32>, %m: tensor<1x6xi32>) -> tensor<1x6x32xf32> {
  %r = nn.mul %kh, %kh : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32>
  %i = nn.constant {value = dense<[0, 0, 1, 1]> : tensor<4xi32>} : tensor<4xi32>
  %g = nn.gather %r, %i {axis = 1 : i64} : tensor<1x2x6x8xf32>, tensor<4xi32> -> tensor<1x4x6x8xf32>
  %gt = nn.transpose %g {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x6x8xf32> -> tensor<1x6x4x8xf32>
  %k = nn.reshape %gt : tensor<1x6x4x8xf32> -> tensor<1x6x32xf32>
  %v5 = nn.reshape %v : tensor<1x6x16xf32> -> tensor<1x6x2x1x8xf32>
  %c = nn.constant {value = dense<true> : tensor<1x6x2x2x8xi1>} : tensor<1x6x2x2x8xi1>
  %w = nn.where %c, %v5, %v5 : tensor<1x6x2x2x8xi1>, tensor<1x6x2x1x8xf32>, tensor<1x6x2x1x8xf32> -> tensor<1x6x2x2x8xf32>
  %vr = nn.reshape %w : tensor<1x6x2x2x8xf32> -> tensor<1x6x32xf32>
  %a = nn.attention %q, %k, %vr mask %m {num_heads = 4 : i64, head_dim = 8 : i64, causal = true} : tensor<1x6x32xf32>, tensor<1x6x32xf32>, tensor<1x6x32xf32>, tensor<1x6xi32> -> tensor<1x6x32xf32>
  func.return %a : tensor<1x6x32xf32>
}

// -----

// A gather from a table of one repeated value (RoBERTa's token-type buffer, reshaped) is
// that value in gather's shape; a gather from any other constant stays.
// CHECK-LABEL: func.func @gather_of_a_splat
// CHECK-NEXT:    %[[Z:.*]] = nn.constant {value = dense<0> : tensor<2x6xi32>} : tensor<2x6xi32>
// CHECK-NEXT:    %[[N:.*]] = nn.constant {value = dense<[0, 1, 0, 1]> : tensor<4xi32>} : tensor<4xi32>
// CHECK-NEXT:    %[[G:.*]] = nn.gather %[[N]], %ids : tensor<4xi32>, tensor<2x6xi32> -> tensor<2x6xi32>
// CHECK-NEXT:    func.return %[[Z]], %[[G]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 4]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'gather of a splat'
func.func @gather_of_a_splat(%ids: tensor<2x6xi32>) -> (tensor<2x6xi32>, tensor<2x6xi32>) {
  %buffer = nn.constant {value = dense<0> : tensor<1x4xi32>} : tensor<1x4xi32>
  %flat = nn.reshape %buffer : tensor<1x4xi32> -> tensor<4xi32>
  %types = nn.gather %flat, %ids : tensor<4xi32>, tensor<2x6xi32> -> tensor<2x6xi32>
  %not_splat = nn.constant {value = dense<[0, 1, 0, 1]> : tensor<4xi32>} : tensor<4xi32>
  %other = nn.gather %not_splat, %ids : tensor<4xi32>, tensor<2x6xi32> -> tensor<2x6xi32>
  func.return %types, %other : tensor<2x6xi32>, tensor<2x6xi32>
}

// -----

// A subtraction written as the add of a neg (either side) is a sub; the neg goes once unread.
// CHECK-LABEL: func.func @add_of_neg
// CHECK-NEXT:    %[[A:.*]] = nn.sub %x, %y : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.sub %x, %y : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 3]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'x - y'
func.func @add_of_neg(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %n = nn.neg %y : tensor<4x1xf32> -> tensor<4x1xf32>
  %a = nn.add %x, %n : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %b = nn.add %n, %x : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A gathered row times a constant is a row of the scaled table when the table is bound and
// read by nothing else (fold_params then scales it once); unbound, or read twice, it stays.
// CHECK-LABEL: func.func @scale_the_gathered_table
// CHECK-NEXT:    %[[C:.*]] = nn.constant {value = dense<2.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[T:.*]] = nn.mul %table, %[[C]] : tensor<12x4xf32>, tensor<f32> -> tensor<12x4xf32>
// CHECK-NEXT:    %[[G:.*]] = nn.gather %[[T]], %ids : tensor<12x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %[[U:.*]] = nn.gather %free, %ids
// CHECK-NEXT:    %[[V:.*]] = nn.mul %[[U]], %[[C]]
// CHECK-NEXT:    %[[S:.*]] = nn.gather %shared, %ids
// CHECK-NEXT:    %[[W:.*]] = nn.mul %[[S]], %[[C]]
// CHECK-NEXT:    func.return %[[G]], %[[V]], %[[W]], %shared
// REMARK: canonicalize-nn.mlir:[[# @LINE + 4]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'scale the gathered table'
func.func @scale_the_gathered_table(%ids: tensor<2x6xi32>, %table: tensor<12x4xf32> {fusec.bound}, %free: tensor<12x4xf32>, %shared: tensor<12x4xf32> {fusec.bound}) -> (tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<12x4xf32>) {
  %c = nn.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %rows = nn.gather %table, %ids : tensor<12x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
  %y = nn.mul %rows, %c : tensor<2x6x4xf32>, tensor<f32> -> tensor<2x6x4xf32>
  %free_rows = nn.gather %free, %ids : tensor<12x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
  %z = nn.mul %free_rows, %c : tensor<2x6x4xf32>, tensor<f32> -> tensor<2x6x4xf32>
  %shared_rows = nn.gather %shared, %ids : tensor<12x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>
  %s = nn.mul %shared_rows, %c : tensor<2x6x4xf32>, tensor<f32> -> tensor<2x6x4xf32>
  func.return %y, %z, %s, %shared : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<12x4xf32>
}

// -----

// A gather of consecutive constant indices (negative ones count from the end) is a narrow; one
// of a step 2 (the odd elements) is the source reshaped to pairs and narrowed to the second of
// each; indices that are no strided box stay a gather.
// CHECK-LABEL: func.func @gather_as_narrow
// CHECK-NEXT:    %[[H:.*]] = nn.narrow %x {axis = 1 : i64, start = 4 : i64, length = 4 : i64} : tensor<2x8xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %x : tensor<2x8xf32> -> tensor<2x4x2xf32>
// CHECK-NEXT:    %[[N:.*]] = nn.narrow %[[R]] {axis = 2 : i64, start = 1 : i64, length = 1 : i64} : tensor<2x4x2xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    %[[O:.*]] = nn.reshape %[[N]] : tensor<2x4x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.constant {value = dense<[0, 3, 4, 7]> : tensor<4xi32>} : tensor<4xi32>
// CHECK-NEXT:    %[[E:.*]] = nn.gather %x, %[[P]] {axis = 1 : i64}
// CHECK-NEXT:    func.return %[[H]], %[[O]], %[[E]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 4]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'narrow for gather'
// REMARK: canonicalize-nn.mlir:[[# @LINE + 5]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'strided gather'
func.func @gather_as_narrow(%x: tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %i = nn.constant {value = dense<[-4, 5, 6, 7]> : tensor<4xi32>} : tensor<4xi32>
  %h = nn.gather %x, %i {axis = 1 : i64} : tensor<2x8xf32>, tensor<4xi32> -> tensor<2x4xf32>
  %s = nn.constant {value = dense<[1, 3, 5, 7]> : tensor<4xi32>} : tensor<4xi32>
  %o = nn.gather %x, %s {axis = 1 : i64} : tensor<2x8xf32>, tensor<4xi32> -> tensor<2x4xf32>
  %p = nn.constant {value = dense<[0, 3, 4, 7]> : tensor<4xi32>} : tensor<4xi32>
  %e = nn.gather %x, %p {axis = 1 : i64} : tensor<2x8xf32>, tensor<4xi32> -> tensor<2x4xf32>
  func.return %h, %o, %e : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A softmax over an axis other than the last, or one read only by elementwise ops, is written
// out with keepdims reductions (which fuse-row-reduce runs as one kernel over that axis, with
// its readers); over the last axis, returned, it stays.
// CHECK-LABEL: func.func @softmax_middle_axis
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<2x9x3xf32> -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[D:.*]] = nn.sub %x, %[[M]] : tensor<2x9x3xf32>, tensor<2x1x3xf32> -> tensor<2x9x3xf32>
// CHECK-NEXT:    %[[E:.*]] = nn.exp %[[D]]
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true} : tensor<2x9x3xf32> -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.div %[[E]], %[[S]] : tensor<2x9x3xf32>, tensor<2x1x3xf32> -> tensor<2x9x3xf32>
// CHECK-NEXT:    %[[L:.*]] = nn.softmax %x :
// CHECK-NEXT:    func.return %[[Y]], %[[L]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 2]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'softmax written out'
func.func @softmax_middle_axis(%x: tensor<2x9x3xf32>) -> (tensor<2x9x3xf32>, tensor<2x9x3xf32>) {
  %y = nn.softmax %x {axis = -2 : i64} : tensor<2x9x3xf32> -> tensor<2x9x3xf32>
  %l = nn.softmax %x {axis = -1 : i64} : tensor<2x9x3xf32> -> tensor<2x9x3xf32>
  func.return %y, %l : tensor<2x9x3xf32>, tensor<2x9x3xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = nn.sub %x, %[[M]]
// CHECK-NEXT:    %[[E:.*]] = nn.exp %[[D]]
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.div %[[E]], %[[S]]
// CHECK-NEXT:    %[[L:.*]] = nn.log %[[Y]]
// CHECK-NEXT:    func.return %[[L]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 2]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'softmax written out'
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = nn.softmax %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %l = nn.log %y : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %l : tensor<4x8xf32>
}

// -----

// A mean times n (the count it reduces) is a sum; a sum divided by n stays (a kernel's mean is
// sum * (1/n), not sum / n), as does a mean times another constant.
// CHECK-LABEL: func.func @scaled_reductions
// CHECK-NEXT:    %[[N:.*]] = nn.constant {value = dense<4.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %x {axes = array<i64: -1>} : tensor<5x4xf32> -> tensor<5xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.div %[[S]], %[[N]]
// CHECK-NEXT:    %[[C:.*]] = nn.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<5x4xf32> -> tensor<f32>
// CHECK-NEXT:    %[[K:.*]] = nn.constant {value = dense<3.000000e+00> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<5x4xf32> -> tensor<5xf32>
// CHECK-NEXT:    %[[D:.*]] = nn.mul %[[M]], %[[K]]
// CHECK-NEXT:    func.return %[[B]], %[[C]], %[[D]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 8]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'constant on the right'
// REMARK: canonicalize-nn.mlir:[[# @LINE + 7]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'sum for mean * n'
func.func @scaled_reductions(%x: tensor<5x4xf32>) -> (tensor<5xf32>, tensor<f32>, tensor<5xf32>) {
  %four = nn.constant {value = dense<4.0> : tensor<f32>} : tensor<f32>
  %s1 = nn.reduce_sum %x {axes = array<i64: -1>} : tensor<5x4xf32> -> tensor<5xf32>
  %b = nn.div %s1, %four : tensor<5xf32>, tensor<f32> -> tensor<5xf32>
  %twenty = nn.constant {value = dense<20.0> : tensor<f32>} : tensor<f32>
  %m = nn.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<5x4xf32> -> tensor<f32>
  %c = nn.mul %twenty, %m : tensor<f32>, tensor<f32> -> tensor<f32>
  %three = nn.constant {value = dense<3.0> : tensor<f32>} : tensor<f32>
  %m3 = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<5x4xf32> -> tensor<5xf32>
  %d = nn.mul %m3, %three : tensor<5xf32>, tensor<f32> -> tensor<5xf32>
  func.return %b, %c, %d : tensor<5xf32>, tensor<f32>, tensor<5xf32>
}

// -----

// The max of a negation negated is the min (and back); a double negation is nothing.
// CHECK-LABEL: func.func @negated_extremum
// CHECK-NEXT:    %[[A:.*]] = nn.reduce_max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.reduce_min %x {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %x
// REMARK: canonicalize-nn.mlir:[[# @LINE + 5]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'extremum of a negation'
// REMARK: canonicalize-nn.mlir:[[# @LINE + 7]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'neg(neg(x))'
func.func @negated_extremum(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<1x8xf32>, tensor<4x8xf32>) {
  %n = nn.neg %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %m = nn.reduce_min %n {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %a = nn.neg %m : tensor<4xf32> -> tensor<4xf32>
  %k = nn.reduce_max %n {axes = array<i64: 0>, keepdims = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %b = nn.neg %k : tensor<1x8xf32> -> tensor<1x8xf32>
  %c = nn.neg %n : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %b, %c : tensor<4xf32>, tensor<1x8xf32>, tensor<4x8xf32>
}

// -----

// Transposes around a reduce-then-broadcast region cancel: the region is computed on x, its
// reduction over the axis the transpose put there (a column statistic over axis 0).
// CHECK-LABEL: func.func @transposes_around_rows
// CHECK-NEXT:    %[[M:.*]] = nn.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<7x5xf32> -> tensor<1x5xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.sub %x, %[[M]] : tensor<7x5xf32>, tensor<1x5xf32> -> tensor<7x5xf32>
// CHECK-NEXT:    func.return %[[Y]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 5]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'views that cancel around a region'
func.func @transposes_around_rows(%x: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<7x5xf32> -> tensor<5x7xf32>
  %m = nn.reduce_mean %t {axes = array<i64: 1>, keepdims = true} : tensor<5x7xf32> -> tensor<5x1xf32>
  %d = nn.sub %t, %m : tensor<5x7xf32>, tensor<5x1xf32> -> tensor<5x7xf32>
  %y = nn.transpose %d {perm = array<i64: 1, 0>} : tensor<5x7xf32> -> tensor<7x5xf32>
  func.return %y : tensor<7x5xf32>
}

// -----

// A reshape splitting the last axis into halves and the reshape back cancel: the narrows and
// the concat of the split axis are narrows and a concat of the last axis (start and length
// times the inner size 4); a bias per position (size 1 in the split group) is reshaped along.
// CHECK-LABEL: func.func @reshapes_around_halves
// CHECK-NEXT:    %[[HI:.*]] = nn.narrow %x {axis = 2 : i64, start = 4 : i64, length = 4 : i64} : tensor<2x6x8xf32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %[[N:.*]] = nn.neg %[[HI]] : tensor<2x6x4xf32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %[[LO:.*]] = nn.narrow %x {axis = 2 : i64, start = 0 : i64, length = 4 : i64} : tensor<2x6x8xf32> -> tensor<2x6x4xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.concat %[[N]], %[[LO]] {axis = 2 : i64} : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x6x8xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.reshape %b : tensor<6x1x1xf32> -> tensor<1x6x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.add %[[C]], %[[B]] : tensor<2x6x8xf32>, tensor<1x6x1xf32> -> tensor<2x6x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 8]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'views that cancel around a region'
func.func @reshapes_around_halves(%x: tensor<2x6x8xf32>, %b: tensor<6x1x1xf32>) -> tensor<2x6x8xf32> {
  %r = nn.reshape %x : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %lo = nn.narrow %r {axis = 2 : i64, start = 0 : i64, length = 1 : i64} : tensor<2x6x2x4xf32> -> tensor<2x6x1x4xf32>
  %hi = nn.narrow %r {axis = 2 : i64, start = 1 : i64, length = 1 : i64} : tensor<2x6x2x4xf32> -> tensor<2x6x1x4xf32>
  %n = nn.neg %hi : tensor<2x6x1x4xf32> -> tensor<2x6x1x4xf32>
  %c = nn.concat %n, %lo {axis = 2 : i64} : (tensor<2x6x1x4xf32>, tensor<2x6x1x4xf32>) -> tensor<2x6x2x4xf32>
  %a = nn.add %c, %b : tensor<2x6x2x4xf32>, tensor<6x1x1xf32> -> tensor<2x6x2x4xf32>
  %y = nn.reshape %a : tensor<2x6x2x4xf32> -> tensor<2x6x8xf32>
  func.return %y : tensor<2x6x8xf32>
}

// -----

// Blocked: a bias along the inner half only (it would repeat along the merged axis), and an
// operand computed outside a reduce-then-broadcast region that would need a transpose of its
// own.
// CHECK-LABEL: func.func @cancelling_views_blocked
// CHECK-NEXT:    nn.reshape %x
// CHECK-NEXT:    nn.add
// CHECK-NEXT:    nn.reshape
// CHECK-NEXT:    nn.transpose %u
// CHECK:         nn.transpose
// MISSED: canonicalize-nn.mlir:[[# @LINE + 5]]:3: remark: [canonicalize-nn] not fused: canonical form 'views that cancel around a region' not applied: the operand [4] of nn.add from outside cannot be read through a reshape of it (it would need a transpose, or spans part of a group of reshaped axes)
// MISSED: canonicalize-nn.mlir:[[# @LINE + 10]]:3: remark: [canonicalize-nn] not fused: canonical form 'views that cancel around a region' not applied: the operand [6, 4] of nn.mul from outside cannot be read through a reshape of it (it would need a transpose, or spans part of a group of reshaped axes)
func.func @cancelling_views_blocked(%x: tensor<2x6x8xf32>, %b: tensor<4xf32>, %u: tensor<4x6xf32>, %w: tensor<6x4xf32>) -> (tensor<2x6x8xf32>, tensor<4x6xf32>, tensor<6x4xf32>) {
  %r = nn.reshape %x : tensor<2x6x8xf32> -> tensor<2x6x2x4xf32>
  %a = nn.add %r, %b : tensor<2x6x2x4xf32>, tensor<4xf32> -> tensor<2x6x2x4xf32>
  %y = nn.reshape %a : tensor<2x6x2x4xf32> -> tensor<2x6x8xf32>
  %t = nn.transpose %u {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %s = nn.sigmoid %w : tensor<6x4xf32> -> tensor<6x4xf32>
  %m = nn.mul %t, %s : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x4xf32>
  %k = nn.reduce_sum %m {axes = array<i64: 1>, keepdims = true} : tensor<6x4xf32> -> tensor<6x1xf32>
  %d = nn.sub %m, %k : tensor<6x4xf32>, tensor<6x1xf32> -> tensor<6x4xf32>
  %z = nn.transpose %d {perm = array<i64: 1, 0>} : tensor<6x4xf32> -> tensor<4x6xf32>
  func.return %y, %z, %s : tensor<2x6x8xf32>, tensor<4x6xf32>, tensor<6x4xf32>
}

// -----

// A reduction through a transpose: exp of a transposed tensor summed over the last axis is a
// sum over the axis the transpose moved there (the kept axes stay in order, so the reduced
// value needs no transpose back); a keepdims result is read through a reshape of its unit axes.
// CHECK-LABEL: func.func @transposed_reduction
// CHECK-NEXT:    %[[C:.*]] = nn.constant
// CHECK-NEXT:    %[[H:.*]] = nn.mul %x, %[[C]] : tensor<6x5x7xf32>, tensor<f32> -> tensor<6x5x7xf32>
// CHECK-NEXT:    %[[E:.*]] = nn.exp %[[H]] : tensor<6x5x7xf32> -> tensor<6x5x7xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[E]] {axes = array<i64: 0>} : tensor<6x5x7xf32> -> tensor<5x7xf32>
// CHECK-NEXT:    %[[K:.*]] = nn.reduce_max %x {axes = array<i64: 0>, keepdims = true} : tensor<6x5x7xf32> -> tensor<1x5x7xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.reshape %[[K]] : tensor<1x5x7xf32> -> tensor<5x7x1xf32>
// CHECK-NEXT:    func.return %[[S]], %[[R]]
// REMARK: canonicalize-nn.mlir:[[# @LINE + 7]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'transposed reduction'
// REMARK: canonicalize-nn.mlir:[[# @LINE + 7]]:3: remark: [canonicalize-nn] rewrote #{{[0-9]+}}: canonical form 'transposed reduction'
func.func @transposed_reduction(%x: tensor<6x5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7x1xf32>) {
  %t = nn.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<6x5x7xf32> -> tensor<5x7x6xf32>
  %c = nn.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %h = nn.mul %t, %c : tensor<5x7x6xf32>, tensor<f32> -> tensor<5x7x6xf32>
  %e = nn.exp %h : tensor<5x7x6xf32> -> tensor<5x7x6xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 2>} : tensor<5x7x6xf32> -> tensor<5x7xf32>
  %k = nn.reduce_max %t {axes = array<i64: 2>, keepdims = true} : tensor<5x7x6xf32> -> tensor<5x7x1xf32>
  func.return %s, %k : tensor<5x7xf32>, tensor<5x7x1xf32>
}

// -----

// Left alone: the axes the reduction keeps would come out of order (the reduced value would
// need a transpose of its own).
// CHECK-LABEL: func.func @transposed_reduction_out_of_order
// CHECK-NEXT:    nn.transpose %x
// CHECK-NEXT:    nn.reduce_sum
func.func @transposed_reduction_out_of_order(%x: tensor<6x5x7xf32>) -> tensor<7x5xf32> {
  %t = nn.transpose %x {perm = array<i64: 2, 1, 0>} : tensor<6x5x7xf32> -> tensor<7x5x6xf32>
  %s = nn.reduce_sum %t {axes = array<i64: 2>} : tensor<7x5x6xf32> -> tensor<7x5xf32>
  func.return %s : tensor<7x5xf32>
}
