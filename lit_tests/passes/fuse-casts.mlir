// Casts between f32, f16, bf16, i8 and i32 fuse into elementwise regions: a region reads each
// input in its own type, computes in the types its ops say and yields each result in its
// type. `unfuse` gives the nn.cast ops back, the saturating i32 -> i8 clamp included.
// RUN: fusec-opt %s -p default --split-input-file | filecheck %s
// RUN: fusec-opt %s -p default,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE

// f16 in, computed in f32, bf16 out: one region.
// CHECK-LABEL: func.func @half_chain
// CHECK-NEXT:    %[[R:.*]] = fused.elementwise %x, %y : (tensor<4x8xf16>, tensor<4x8xf32>) -> tensor<4x8xbf16> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f16, %[[Y:.*]]: f32):
// CHECK-NEXT:      %[[A:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:      %[[B:.*]] = arith.mulf %[[A]], %[[Y]] : f32
// CHECK-NEXT:      %[[C:.*]] = math.tanh %[[B]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.truncf %[[C]] : f32 to bf16
// CHECK-NEXT:      fused.yield %[[D]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x8xbf16>
// UNFUSE-LABEL: func.func @half_chain
// UNFUSE-NEXT:    %[[A:.*]] = nn.cast %x : tensor<4x8xf16> -> tensor<4x8xf32>
// UNFUSE-NEXT:    %[[B:.*]] = nn.mul %[[A]], %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:    %[[C:.*]] = nn.tanh %[[B]] : tensor<4x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:    %[[D:.*]] = nn.cast %[[C]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// UNFUSE-NEXT:    func.return %[[D]] : tensor<4x8xbf16>
func.func @half_chain(%x: tensor<4x8xf16>, %y: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %a = nn.cast %x : tensor<4x8xf16> -> tensor<4x8xf32>
  %b = nn.mul %a, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = nn.tanh %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.cast %c : tensor<4x8xf32> -> tensor<4x8xbf16>
  func.return %d : tensor<4x8xbf16>
}

// -----

// Quantizing: f32 -> i8 is one (saturating) arith.fptosi; i32 -> i8 a clamp, then trunci;
// the i8 value also returned makes the second region a two-result one (i8 and f32).
// CHECK-LABEL: func.func @quantize
// CHECK:         fused.elementwise %x, %s : (tensor<16xf32>, tensor<f32>) -> tensor<16xi8>
// CHECK:           arith.divf
// CHECK-NEXT:      %[[Q:.*]] = arith.fptosi %{{.*}} : f32 to i8
// CHECK-NEXT:      fused.yield %[[Q]] : i8
// CHECK:         %{{.*}}, %{{.*}} = fused.elementwise %q, %s : (tensor<16xi32>, tensor<f32>) -> (tensor<16xf32>, tensor<16xi8>)
// CHECK:           %[[HI:.*]] = arith.constant 127 : i32
// CHECK-NEXT:      %[[MIN:.*]] = arith.minsi %{{.*}}, %[[HI]] : i32
// CHECK-NEXT:      %[[LO:.*]] = arith.constant -128 : i32
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxsi %[[MIN]], %[[LO]] : i32
// CHECK-NEXT:      %[[T:.*]] = arith.trunci %[[MAX]] : i32 to i8
// CHECK-NEXT:      %[[E:.*]] = arith.extsi %[[T]] : i8 to i32
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[E]] : i32 to bf16
// CHECK-NEXT:      %[[G:.*]] = arith.extf %[[F]] : bf16 to f32
// CHECK-NEXT:      %[[H:.*]] = arith.mulf %[[G]], %{{.*}} : f32
// CHECK-NEXT:      fused.yield %[[H]], %[[T]] : f32, i8
// UNFUSE-LABEL: func.func @quantize
// UNFUSE-NEXT:    %[[A:.*]] = nn.div %x, %s
// UNFUSE-NEXT:    %[[B:.*]] = nn.cast %[[A]] : tensor<16xf32> -> tensor<16xi8>
// UNFUSE-NEXT:    %[[C:.*]] = nn.neg %q
// UNFUSE-NEXT:    %[[D:.*]] = nn.cast %[[C]] : tensor<16xi32> -> tensor<16xi8>
// UNFUSE-NEXT:    %[[E:.*]] = nn.cast %[[D]] : tensor<16xi8> -> tensor<16xi32>
// UNFUSE-NEXT:    %[[F:.*]] = nn.cast %[[E]] : tensor<16xi32> -> tensor<16xbf16>
// UNFUSE-NEXT:    %[[G:.*]] = nn.cast %[[F]] : tensor<16xbf16> -> tensor<16xf32>
// UNFUSE-NEXT:    %[[H:.*]] = nn.mul %[[G]], %s
// UNFUSE-NEXT:    func.return %[[B]], %[[D]], %[[H]]
func.func @quantize(%x: tensor<16xf32>, %s: tensor<f32>, %q: tensor<16xi32>) -> (tensor<16xi8>, tensor<16xi8>, tensor<16xf32>) {
  %a = nn.div %x, %s : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %b = nn.cast %a : tensor<16xf32> -> tensor<16xi8>
  %c = nn.neg %q : tensor<16xi32> -> tensor<16xi32>
  %d = nn.cast %c : tensor<16xi32> -> tensor<16xi8>
  %e = nn.cast %d : tensor<16xi8> -> tensor<16xi32>
  %f = nn.cast %e : tensor<16xi32> -> tensor<16xbf16>
  %g = nn.cast %f : tensor<16xbf16> -> tensor<16xf32>
  %h = nn.mul %g, %s : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  func.return %b, %d, %h : tensor<16xi8>, tensor<16xi8>, tensor<16xf32>
}

// -----

// A softmax of bf16 rows, computed in f32: the casts are the row region's prologue and
// epilogue, so the region reads bf16 and stores bf16 (one fused.row_reduce).
// CHECK-LABEL: func.func @softmax_bf16
// CHECK-NEXT:    %[[R:.*]] = fused.row_reduce %x : (tensor<4x40xbf16>) -> tensor<4x40xbf16> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: bf16):
// CHECK-NEXT:      %[[A:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:      %[[M:.*]] = fused.reduce_value %[[A]] {kind = "max"} : f32 -> f32
// CHECK:           %[[S:.*]] = fused.reduce_value %{{.*}} {kind = "sum"} : f32 -> f32
// CHECK-NEXT:      %[[Y:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.truncf %[[Y]] : f32 to bf16
// CHECK-NEXT:      fused.yield %[[Z]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x40xbf16>
// UNFUSE-LABEL: func.func @softmax_bf16
// UNFUSE-NEXT:    nn.cast %x : tensor<4x40xbf16> -> tensor<4x40xf32>
// UNFUSE:         nn.reduce_max
// UNFUSE:         nn.reduce_sum
// UNFUSE:         %[[Y:.*]] = nn.div
// UNFUSE-NEXT:    %[[Z:.*]] = nn.cast %[[Y]] : tensor<4x40xf32> -> tensor<4x40xbf16>
// UNFUSE-NEXT:    func.return %[[Z]] : tensor<4x40xbf16>
func.func @softmax_bf16(%x: tensor<4x40xbf16>) -> tensor<4x40xbf16> {
  %a = nn.cast %x : tensor<4x40xbf16> -> tensor<4x40xf32>
  %m = nn.reduce_max %a {axes = array<i64: 1>, keepdims = true} : tensor<4x40xf32> -> tensor<4x1xf32>
  %d = nn.sub %a, %m : tensor<4x40xf32>, tensor<4x1xf32> -> tensor<4x40xf32>
  %e = nn.exp %d : tensor<4x40xf32> -> tensor<4x40xf32>
  %s = nn.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : tensor<4x40xf32> -> tensor<4x1xf32>
  %y = nn.div %e, %s : tensor<4x40xf32>, tensor<4x1xf32> -> tensor<4x40xf32>
  %z = nn.cast %y : tensor<4x40xf32> -> tensor<4x40xbf16>
  func.return %z : tensor<4x40xbf16>
}

// -----

// 0.5 * (A @ B) + C with C bf16, stored as bf16: one matmul epilogue reading C in bf16 and
// ending in the cast; unfuse gives the f32 nn.matmul and the casts back.
// CHECK-LABEL: func.func @gemm_bf16_out
// CHECK-NEXT:    %[[R:.*]] = fused.matmul_epilogue %a, %b, %c : (tensor<8x16xf32>, tensor<16x12xf32>, tensor<8x12xbf16>) -> tensor<8x12xbf16> {
// CHECK-NEXT:    ^{{.*}}(%[[ACC:.*]]: f32, %[[C:.*]]: bf16):
// CHECK:           %[[S:.*]] = arith.mulf %[[ACC]], %{{.*}} : f32
// CHECK-NEXT:      %[[CF:.*]] = arith.extf %[[C]] : bf16 to f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[S]], %[[CF]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT:      fused.yield %[[Y]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<8x12xbf16>
// UNFUSE-LABEL: func.func @gemm_bf16_out
// UNFUSE-NEXT:    %[[P:.*]] = nn.matmul %a, %b : tensor<8x16xf32>, tensor<16x12xf32> -> tensor<8x12xf32>
// UNFUSE:         nn.cast %c : tensor<8x12xbf16> -> tensor<8x12xf32>
// UNFUSE:         %[[Y:.*]] = nn.cast %{{.*}} : tensor<8x12xf32> -> tensor<8x12xbf16>
// UNFUSE-NEXT:    func.return %[[Y]] : tensor<8x12xbf16>
func.func @gemm_bf16_out(%a: tensor<8x16xf32>, %b: tensor<16x12xf32>, %c: tensor<8x12xbf16>) -> tensor<8x12xbf16> {
  %p = nn.matmul %a, %b : tensor<8x16xf32>, tensor<16x12xf32> -> tensor<8x12xf32>
  %h = nn.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %s = nn.mul %p, %h : tensor<8x12xf32>, tensor<f32> -> tensor<8x12xf32>
  %cf = nn.cast %c : tensor<8x12xbf16> -> tensor<8x12xf32>
  %t = nn.add %s, %cf : tensor<8x12xf32>, tensor<8x12xf32> -> tensor<8x12xf32>
  %y = nn.cast %t : tensor<8x12xf32> -> tensor<8x12xbf16>
  func.return %y : tensor<8x12xbf16>
}
