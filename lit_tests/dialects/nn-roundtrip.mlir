// Every nn op prints in its custom form, and custom -> generic -> custom gives the same text.
// Properties at their default are elided in the custom form and spelled out in the generic one.

// RUN: fusec-opt %s --split-input-file | filecheck %s
// RUN: FUSEC_ROUNDTRIP
// RUN: fusec-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @binary
// CHECK-NEXT:    %{{.*}} = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sub %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.mul %c, %x : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.div %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.max %c, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.min %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.pow %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.add %h, %h : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.pow %h, %h : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
// CHECK-NEXT:    %{{.*}} = nn.mul %i, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
// CHECK-NEXT:    %{{.*}} = nn.max %i, %s : tensor<2x3xi32>, tensor<i32> -> tensor<2x3xi32>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "binary"
// GENERIC:       "nn.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC:       "nn.max"(%i, %s) : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
func.func @binary(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>,
                  %h: tensor<2x3xf16>, %i: tensor<2x3xi32>, %s: tensor<i32>) {
  %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = nn.sub %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.mul %c, %x : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = nn.div %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = nn.max %c, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %5 = nn.min %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %6 = nn.pow %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %7 = nn.add %h, %h : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
  %8 = nn.pow %h, %h : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
  %9 = nn.mul %i, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  %10 = nn.max %i, %s : tensor<2x3xi32>, tensor<i32> -> tensor<2x3xi32>
  func.return
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-NEXT:    %{{.*}} = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.gelu %x {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.tanh %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.log %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.rsqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.neg %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.abs %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.gelu %h {approximate = "tanh"} : tensor<2xf16> -> tensor<2xf16>
// CHECK-NEXT:    %{{.*}} = nn.exp %h : tensor<2xf16> -> tensor<2xf16>
// CHECK-NEXT:    %{{.*}} = nn.relu %i : tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT:    %{{.*}} = nn.neg %i : tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT:    %{{.*}} = nn.abs %i : tensor<2xi32> -> tensor<2xi32>
// CHECK-NEXT:    %{{.*}} = nn.sigmoid %s : tensor<f32> -> tensor<f32>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "unary"
// GENERIC:       "nn.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "nn.gelu"(%x) <{approximate = "none"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "nn.gelu"(%x) <{approximate = "none"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "nn.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @unary(%x: tensor<4x8xf32>, %h: tensor<2xf16>, %i: tensor<2xi32>, %s: tensor<f32>) {
  %0 = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.gelu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.gelu %x {approximate = "none"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = nn.gelu %x {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = nn.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %5 = nn.sigmoid %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = nn.tanh %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %7 = nn.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %8 = nn.log %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %9 = nn.sqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %10 = nn.rsqrt %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %11 = nn.neg %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %12 = nn.abs %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %13 = nn.gelu %h {approximate = "tanh"} : tensor<2xf16> -> tensor<2xf16>
  %14 = nn.exp %h : tensor<2xf16> -> tensor<2xf16>
  %15 = nn.relu %i : tensor<2xi32> -> tensor<2xi32>
  %16 = nn.neg %i : tensor<2xi32> -> tensor<2xi32>
  %17 = nn.abs %i : tensor<2xi32> -> tensor<2xi32>
  %18 = nn.sigmoid %s : tensor<f32> -> tensor<f32>
  func.return
}

// -----

// CHECK-LABEL: func.func @cast_cmp_where_constant
// CHECK-NEXT:    %{{.*}} = nn.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    %{{.*}} = nn.cast %x : tensor<4x8xf32> -> tensor<4x8xi32>
// CHECK-NEXT:    %[[MASK:.*]] = nn.cmp %x, %b {predicate = "eq"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.cmp %x, %b {predicate = "ne"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.cmp %x, %b {predicate = "lt"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.cmp %x, %b {predicate = "le"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.cmp %x, %b {predicate = "gt"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = nn.cmp %i, %i {predicate = "ge"} : tensor<8xi32>, tensor<8xi32> -> tensor<8xi1>
// CHECK-NEXT:    %{{.*}} = nn.cast %[[MASK]] : tensor<4x8xi1> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.where %[[MASK]], %x, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.where %m, %i, %i : tensor<1xi1>, tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT:    %{{.*}} = nn.constant {value = dense<1.000000e+00> : tensor<8xf32>} : tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = nn.constant {value = dense<[1, 2, 3]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT:    %{{.*}} = nn.constant {value = dense<[true, false]> : tensor<2xi1>} : tensor<2xi1>
// CHECK-NEXT:    %{{.*}} = nn.constant {value = dense<5.000000e-01> : tensor<2x2xf16>} : tensor<2x2xf16>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "cast_cmp_where_constant"
// GENERIC:       "nn.cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// GENERIC:       "nn.cmp"(%x, %b) <{predicate = "eq"}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// GENERIC:       "nn.where"(%{{.*}}, %x, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC:       "nn.constant"() <{value = dense<1.000000e+00> : tensor<8xf32>}> : () -> tensor<8xf32>
func.func @cast_cmp_where_constant(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<8xi32>,
                                   %m: tensor<1xi1>) {
  %0 = nn.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %1 = nn.cast %x : tensor<4x8xf32> -> tensor<4x8xi32>
  %2 = nn.cmp %x, %b {predicate = "eq"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %3 = nn.cmp %x, %b {predicate = "ne"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %4 = nn.cmp %x, %b {predicate = "lt"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %5 = nn.cmp %x, %b {predicate = "le"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %6 = nn.cmp %x, %b {predicate = "gt"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
  %7 = nn.cmp %i, %i {predicate = "ge"} : tensor<8xi32>, tensor<8xi32> -> tensor<8xi1>
  %8 = nn.cast %2 : tensor<4x8xi1> -> tensor<4x8xf32>
  %9 = nn.where %2, %x, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %10 = nn.where %m, %i, %i : tensor<1xi1>, tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  %11 = nn.constant {value = dense<1.0> : tensor<8xf32>} : tensor<8xf32>
  %12 = nn.constant {value = dense<[1, 2, 3]> : tensor<3xi32>} : tensor<3xi32>
  %13 = nn.constant {value = dense<[true, false]> : tensor<2xi1>} : tensor<2xi1>
  %14 = nn.constant {value = dense<0.5> : tensor<2x2xf16>} : tensor<2x2xf16>
  func.return
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-NEXT:    %{{.*}} = nn.matmul %a, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.matmul %ba, %w : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.matmul %ba, %bw : tensor<2x4x16xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.matmul %ha, %hw : tensor<4x16xf16>, tensor<16x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    %{{.*}} = nn.matmul %ia, %iw : tensor<4x16xi32>, tensor<16x8xi32> -> tensor<4x8xi32>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "matmul"
// GENERIC:       "nn.matmul"(%a, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
func.func @matmul(%a: tensor<4x16xf32>, %w: tensor<16x8xf32>, %ba: tensor<2x4x16xf32>,
                  %bw: tensor<2x16x8xf32>, %ha: tensor<4x16xf16>, %hw: tensor<16x8xf16>,
                  %ia: tensor<4x16xi32>, %iw: tensor<16x8xi32>) {
  %0 = nn.matmul %a, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %1 = nn.matmul %ba, %w : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %2 = nn.matmul %ba, %bw : tensor<2x4x16xf32>, tensor<2x16x8xf32> -> tensor<2x4x8xf32>
  %3 = nn.matmul %ha, %hw : tensor<4x16xf16>, tensor<16x8xf16> -> tensor<4x8xf16>
  %4 = nn.matmul %ia, %iw : tensor<4x16xi32>, tensor<16x8xi32> -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK-NEXT:    %{{.*}} = nn.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %{{.*}} = nn.transpose %i {perm = array<i64: 0>} : tensor<5xi32> -> tensor<5xi32>
// CHECK-NEXT:    %{{.*}} = nn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reshape %i : tensor<5xi32> -> tensor<1x5xi32>
// CHECK-NEXT:    %{{.*}} = nn.narrow %x {axis = 2 : i64, start = 1 : i64, length = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:    %{{.*}} = nn.narrow %x {axis = -2 : i64, start = 0 : i64, length = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.concat %x, %x, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x9x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.concat %x {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.concat %m, %m {axis = 0 : i64} : (tensor<2xi1>, tensor<2xi1>) -> tensor<4xi1>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "data_movement"
// GENERIC:       "nn.transpose"(%x) <{perm = array<i64: 2, 0, 1>}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// GENERIC:       "nn.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// GENERIC:       "nn.narrow"(%x) <{axis = 2 : i64, start = 1 : i64, length = 2 : i64}> : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
// GENERIC:       "nn.concat"(%x, %x, %x) <{axis = 1 : i64}> : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x9x4xf32>
func.func @data_movement(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>, %m: tensor<2xi1>) {
  %0 = nn.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = nn.transpose %i {perm = array<i64: 0>} : tensor<5xi32> -> tensor<5xi32>
  %2 = nn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %3 = nn.reshape %i : tensor<5xi32> -> tensor<1x5xi32>
  %4 = nn.narrow %x {axis = 2 : i64, start = 1 : i64, length = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %5 = nn.narrow %x {axis = -2 : i64, start = 0 : i64, length = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %6 = nn.concat %x, %x, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x9x4xf32>
  %7 = nn.concat %x {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %8 = nn.concat %m, %m {axis = 0 : i64} : (tensor<2xi1>, tensor<2xi1>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK-LABEL: func.func @norms
// CHECK-NEXT:    %{{.*}} = nn.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.layer_norm %x, %g2, %g2 {axis = 0 : i64, eps = 1.000000e-12 : f32} : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.rms_norm %x, %g : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.rms_norm %x, %g {eps = 1.000000e-05 : f32} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.rms_norm %h, %hg {axis = 0 : i64} : tensor<8x2xf16>, tensor<8xf16> -> tensor<8x2xf16>
// CHECK-NEXT:    %{{.*}} = nn.softmax %x : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.softmax %x {axis = 0 : i64} : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.softmax %h : tensor<8x2xf16> -> tensor<8x2xf16>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "norms"
// GENERIC:       "nn.layer_norm"(%x, %g, %b) <{eps = 1.000000e-05 : f32, axis = -1 : i64}>
// GENERIC:       "nn.rms_norm"(%x, %g) <{eps = 1.000000e-06 : f32, axis = -1 : i64}>
// GENERIC:       "nn.softmax"(%x) <{axis = -1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
func.func @norms(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %g2: tensor<2xf32>,
                 %h: tensor<8x2xf16>, %hg: tensor<8xf16>) {
  %0 = nn.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %1 = nn.layer_norm %x, %g, %b {axis = -1 : i64, eps = 1.0e-5 : f32} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %2 = nn.layer_norm %x, %g2, %g2 {axis = 0 : i64, eps = 1.0e-12 : f32} : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<2x8xf32>
  %3 = nn.rms_norm %x, %g : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %4 = nn.rms_norm %x, %g {eps = 1.0e-5 : f32} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %5 = nn.rms_norm %h, %hg {axis = 0 : i64} : tensor<8x2xf16>, tensor<8xf16> -> tensor<8x2xf16>
  %6 = nn.softmax %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %7 = nn.softmax %x {axis = 0 : i64} : tensor<2x8xf32> -> tensor<2x8xf32>
  %8 = nn.softmax %h : tensor<8x2xf16> -> tensor<8x2xf16>
  func.return
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_max %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_min %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_sum %i {axes = array<i64: 0>, keepdims = true} : tensor<5xi32> -> tensor<1xi32>
// CHECK-NEXT:    %{{.*}} = nn.reduce_max %h {axes = array<i64: 0>} : tensor<5xf16> -> tensor<f16>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "reductions"
// GENERIC:       "nn.reduce_sum"(%x) <{axes = array<i64: 1>, keepdims = false}> : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// GENERIC:       "nn.reduce_mean"(%x) <{axes = array<i64: -1>, keepdims = true}> : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// GENERIC:       "nn.reduce_max"(%x) <{axes = array<i64: 0, 2>, keepdims = false}>
// GENERIC:       "nn.reduce_min"(%x) <{axes = array<i64: 0, 1, 2>, keepdims = false}>
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>, %h: tensor<5xf16>) {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %1 = nn.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %2 = nn.reduce_max %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
  %3 = nn.reduce_min %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
  %4 = nn.reduce_sum %i {axes = array<i64: 0>, keepdims = true} : tensor<5xi32> -> tensor<1xi32>
  %5 = nn.reduce_max %h {axes = array<i64: 0>} : tensor<5xf16> -> tensor<f16>
  func.return
}

// -----

// CHECK-LABEL: func.func @attention
// CHECK-NEXT:    %{{.*}} = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32> -> tensor<1x3x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.attention %q, %k, %v mask %m {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x5xi1> -> tensor<1x3x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.attention %q, %k, %v mask %fm {num_heads = 4 : i64, head_dim = 2 : i64, scale = 1.250000e-01 : f32, causal = true} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x5xf32> -> tensor<1x3x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.attention %h, %h, %h {num_heads = 1 : i64, head_dim = 8 : i64, causal = true} : tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16> -> tensor<2x4x8xf16>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "attention"
// GENERIC:       "nn.attention"(%q, %k, %v) <{num_heads = 2 : i64, head_dim = 4 : i64, causal = false}>
// GENERIC:       "nn.attention"(%q, %k, %v, %m) <{num_heads = 2 : i64, head_dim = 4 : i64, causal = false}>
// GENERIC:       "nn.attention"(%q, %k, %v, %fm) <{num_heads = 4 : i64, head_dim = 2 : i64, scale = 1.250000e-01 : f32, causal = true}>
func.func @attention(%q: tensor<1x3x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>,
                     %m: tensor<1x5xi1>, %fm: tensor<1x5xf32>, %h: tensor<2x4x8xf16>) {
  %0 = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32> -> tensor<1x3x8xf32>
  %1 = nn.attention %q, %k, %v mask %m {num_heads = 2 : i64, head_dim = 4 : i64, causal = false} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x5xi1> -> tensor<1x3x8xf32>
  %2 = nn.attention %q, %k, %v mask %fm {num_heads = 4 : i64, head_dim = 2 : i64, scale = 0.125 : f32, causal = true} : tensor<1x3x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>, tensor<1x5xf32> -> tensor<1x3x8xf32>
  %3 = nn.attention %h, %h, %h {num_heads = 1 : i64, head_dim = 8 : i64, causal = true} : tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16> -> tensor<2x4x8xf16>
  func.return
}
