// Every fused op prints in its custom form, and custom -> generic -> custom gives the same text.
// Properties at their default are elided in the custom form and spelled out in the generic one.

// RUN: fusec-opt %s --split-input-file | filecheck %s
// RUN: FUSEC_ROUNDTRIP
// RUN: fusec-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @matmul_bias_act
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b {activation = "gelu_tanh"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b {activation = "sigmoid"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %x, %w, %b {activation = "tanh"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %bx, %w, %s : tensor<2x4x16xf32>, tensor<16x32xf32>, tensor<1xf32> -> tensor<2x4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %bx, %bw, %r : tensor<2x4x16xf32>, tensor<2x16x32xf32>, tensor<f32> -> tensor<2x4x32xf32>
// CHECK-NEXT:    %{{.*}} = fused.matmul_bias_act %hx, %hw, %hb {activation = "silu"} : tensor<4x16xf16>, tensor<16x32xf16>, tensor<32xf16> -> tensor<4x32xf16>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "matmul_bias_act"
// GENERIC:       "fused.matmul_bias_act"(%x, %w, %b) <{activation = "none"}> : (tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
// GENERIC-NEXT:  "fused.matmul_bias_act"(%x, %w, %b) <{activation = "none"}>
// GENERIC-NEXT:  "fused.matmul_bias_act"(%x, %w, %b) <{activation = "relu"}>
func.func @matmul_bias_act(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>,
                           %bx: tensor<2x4x16xf32>, %bw: tensor<2x16x32xf32>, %s: tensor<1xf32>,
                           %r: tensor<f32>, %hx: tensor<4x16xf16>, %hw: tensor<16x32xf16>,
                           %hb: tensor<32xf16>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %1 = fused.matmul_bias_act %x, %w, %b {activation = "none"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %2 = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %3 = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %4 = fused.matmul_bias_act %x, %w, %b {activation = "gelu_tanh"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %5 = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %6 = fused.matmul_bias_act %x, %w, %b {activation = "sigmoid"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %7 = fused.matmul_bias_act %x, %w, %b {activation = "tanh"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %8 = fused.matmul_bias_act %bx, %w, %s : tensor<2x4x16xf32>, tensor<16x32xf32>, tensor<1xf32> -> tensor<2x4x32xf32>
  %9 = fused.matmul_bias_act %bx, %bw, %r : tensor<2x4x16xf32>, tensor<2x16x32xf32>, tensor<f32> -> tensor<2x4x32xf32>
  %10 = fused.matmul_bias_act %hx, %hw, %hb {activation = "silu"} : tensor<4x16xf16>, tensor<16x32xf16>, tensor<32xf16> -> tensor<4x32xf16>
  func.return
}

// -----

// CHECK-LABEL: func.func @residual_norms_and_swiglu
// CHECK-NEXT:    %{{.*}} = fused.residual_layer_norm %x, %y, %g, %b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %{{.*}} = fused.residual_layer_norm %x, %y, %g, %b {eps = 1.000000e-12 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %{{.*}} = fused.residual_rms_norm %x, %y, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %{{.*}} = fused.residual_rms_norm %h, %h, %hg {eps = 1.000000e-05 : f32} : (tensor<3x8xf16>, tensor<3x8xf16>, tensor<8xf16>) -> tensor<3x8xf16>
// CHECK-NEXT:    %{{.*}} = fused.swiglu %x : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT:    %{{.*}} = fused.swiglu %x : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT:    %{{.*}} = fused.swiglu %h {gate_first = true} : tensor<3x8xf16> -> tensor<3x4xf16>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "residual_norms_and_swiglu"
// GENERIC:       "fused.residual_layer_norm"(%x, %y, %g, %b) <{eps = 1.000000e-05 : f32}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC-NEXT:  "fused.residual_layer_norm"(%x, %y, %g, %b) <{eps = 1.000000e-12 : f32}>
// GENERIC-NEXT:  "fused.residual_rms_norm"(%x, %y, %g) <{eps = 1.000000e-06 : f32}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC-NEXT:  "fused.residual_rms_norm"(%h, %h, %hg) <{eps = 1.000000e-05 : f32}>
// GENERIC-NEXT:  "fused.swiglu"(%x) <{gate_first = false}> : (tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
// GENERIC-NEXT:  "fused.swiglu"(%x) <{gate_first = false}>
// GENERIC-NEXT:  "fused.swiglu"(%h) <{gate_first = true}> : (tensor<3x8xf16>) -> tensor<3x4xf16>
func.func @residual_norms_and_swiglu(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>,
                                     %g: tensor<8xf32>, %b: tensor<8xf32>, %h: tensor<3x8xf16>,
                                     %hg: tensor<8xf16>) {
  %0 = fused.residual_layer_norm %x, %y, %g, %b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %1 = fused.residual_layer_norm %x, %y, %g, %b {eps = 1.0e-12 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %2 = fused.residual_rms_norm %x, %y, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %3 = fused.residual_rms_norm %h, %h, %hg {eps = 1.0e-5 : f32} : (tensor<3x8xf16>, tensor<3x8xf16>, tensor<8xf16>) -> tensor<3x8xf16>
  %4 = fused.swiglu %x : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %5 = fused.swiglu %x {gate_first = false} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %6 = fused.swiglu %h {gate_first = true} : tensor<3x8xf16> -> tensor<3x4xf16>
  func.return
}

// -----

// An attention block and a transformer layer: batch 1, seq 4, hidden 8, 2 heads of 4, FFN 16.

// CHECK-LABEL: func.func @attention_block_and_transformer_layer
// CHECK-NEXT:    %{{.*}} = fused.attention_block %x, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT:    %{{.*}} = fused.attention_block %x, %qkv_w, %qkv_b, %proj_w, %proj_b, %bmask {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<6xf32>, tensor<1x4xi1>) -> tensor<1x4x6xf32>
// CHECK-NEXT:    %{{.*}} = fused.transformer_layer %x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g, %b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g, %b {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT:    %{{.*}} = fused.transformer_layer %x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g, %b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g, %b {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, eps1 = 1.000000e-12 : f32, eps2 = 1.000000e-06 : f32, activation = "relu"} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "attention_block_and_transformer_layer"
// GENERIC:       "fused.attention_block"(%x, %qkv_w, %qkv_b, %out_w, %out_b, %mask) <{num_heads = 2 : i64, head_dim = 4 : i64}>
// GENERIC:       "fused.transformer_layer"(%x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g, %b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g, %b) <{num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, {{.*}}eps1 = 1.000000e-05 : f32{{.*}}}>
// GENERIC:       "fused.transformer_layer"(%x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g, %b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g, %b) <{num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, eps1 = 1.000000e-12 : f32, eps2 = 1.000000e-06 : f32, activation = "relu"}>
func.func @attention_block_and_transformer_layer(
    %x: tensor<1x4x8xf32>, %mask: tensor<1x4xf32>, %bmask: tensor<1x4xi1>,
    %qkv_w: tensor<8x24xf32>, %qkv_b: tensor<24xf32>, %out_w: tensor<8x8xf32>,
    %out_b: tensor<8xf32>, %proj_w: tensor<8x6xf32>, %proj_b: tensor<6xf32>,
    %g: tensor<8xf32>, %b: tensor<8xf32>, %fc1_w: tensor<8x16xf32>, %fc1_b: tensor<16xf32>,
    %fc2_w: tensor<16x8xf32>, %fc2_b: tensor<8xf32>) {
  %0 = fused.attention_block %x, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  %1 = fused.attention_block %x, %qkv_w, %qkv_b, %proj_w, %proj_b, %bmask {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x6xf32>, tensor<6xf32>, tensor<1x4xi1>) -> tensor<1x4x6xf32>
  %2 = fused.transformer_layer %x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g, %b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g, %b {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  %3 = fused.transformer_layer %x, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %g, %b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %g, %b {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, eps1 = 1.0e-12 : f32, eps2 = 1.0e-6 : f32, activation = "relu"} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT:    %[[E:.*]] = fused.elementwise %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[C]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[S]], %[[HALF]] : f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[M]] : f32
// CHECK-NEXT:      fused.yield %[[T]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = fused.elementwise %p, %x, %e : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%{{.*}}: i1, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %{{.*}} = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      fused.yield %{{.*}} : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = fused.elementwise %x : (tensor<4x8xf32>) -> tensor<4x8xi1> {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %{{.*}} = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      fused.yield %{{.*}} : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = fused.elementwise %h, %i : (tensor<3xf16>, tensor<3xi32>) -> tensor<3xf16> {
// CHECK-NEXT:    ^bb0(%{{.*}}: f16, %{{.*}}: i32):
// CHECK-NEXT:      %{{.*}} = arith.sitofp %{{.*}} : i32 to f16
// CHECK-NEXT:      %{{.*}} = math.exp %{{.*}} : f16
// CHECK-NEXT:      %{{.*}} = arith.maximumf %{{.*}}, %{{.*}} : f16
// CHECK-NEXT:      fused.yield %{{.*}} : f16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[E]] : tensor<4x8xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "elementwise"
// GENERIC:       "fused.elementwise"(%x, %b) ({
// GENERIC-NEXT:  ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// GENERIC:         "fused.yield"(%{{.*}}) : (f32) -> ()
// GENERIC-NEXT:  }) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @elementwise(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %p: tensor<4x1xi1>,
                       %e: tensor<f32>, %h: tensor<3xf16>, %i: tensor<3xi32>) -> tensor<4x8xf32> {
  %0 = fused.elementwise %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %s, %half : f32
    %t = math.tanh %m : f32
    fused.yield %t : f32
  }
  %1 = fused.elementwise %p, %x, %e : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> {
  ^bb0(%c: i1, %t: f32, %f: f32):
    %r = arith.select %c, %t, %f : f32
    fused.yield %r : f32
  }
  %2 = fused.elementwise %x : (tensor<4x8xf32>) -> tensor<4x8xi1> {
  ^bb0(%a: f32):
    %zero = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %a, %zero : f32
    fused.yield %gt : i1
  }
  %3 = fused.elementwise %h, %i : (tensor<3xf16>, tensor<3xi32>) -> tensor<3xf16> {
  ^bb0(%a: f16, %n: i32):
    %nf = arith.sitofp %n : i32 to f16
    %ea = math.exp %a : f16
    %r = arith.maximumf %ea, %nf : f16
    fused.yield %r : f16
  }
  func.return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:    %{{.*}} = fused.reduce %x {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT:      fused.yield %[[SQ]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = fused.reduce %x, %b {kind = "mean", axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %{{.*}} = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      fused.yield %{{.*}} : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = fused.reduce %x {kind = "max", axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32> {
// CHECK:         %{{.*}} = fused.reduce %i {kind = "min", axes = array<i64: 0>} : (tensor<3xi32>) -> tensor<i32> {
// CHECK-NEXT:    ^bb0(%{{.*}}: i32):
// CHECK-NEXT:      fused.yield %{{.*}} : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "reduce"
// GENERIC:       "fused.reduce"(%x) <{kind = "sum", axes = array<i64: 1>, keepdims = false}> ({
// GENERIC:       "fused.reduce"(%x, %b) <{kind = "mean", axes = array<i64: -1>, keepdims = true}> ({
// GENERIC:       "fused.reduce"(%x) <{kind = "max", axes = array<i64: 0, 1>, keepdims = false}> ({
// GENERIC:       "fused.reduce"(%i) <{kind = "min", axes = array<i64: 0>, keepdims = false}> ({
func.func @reduce(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<3xi32>) {
  %0 = fused.reduce %x {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    %sq = arith.mulf %a, %a : f32
    fused.yield %sq : f32
  }
  %1 = fused.reduce %x, %b {kind = "mean", axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: f32, %c: f32):
    %d = arith.subf %a, %c : f32
    fused.yield %d : f32
  }
  %2 = fused.reduce %x {kind = "max", axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32> {
  ^bb0(%a: f32):
    %n = math.absf %a : f32
    fused.yield %n : f32
  }
  %3 = fused.reduce %i {kind = "min", axes = array<i64: 0>} : (tensor<3xi32>) -> tensor<i32> {
  ^bb0(%n: i32):
    fused.yield %n : i32
  }
  func.return
}

// -----

// A row_reduce over the last axis prints no axis; over another axis it prints it.
// CHECK-LABEL: func.func @row_reduce_axes
// CHECK-NEXT:    fused.row_reduce %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK:         fused.row_reduce %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// GENERIC-LABEL: "func.func"() <{sym_name = "row_reduce_axes"
// GENERIC:       "fused.row_reduce"(%{{.*}}) <{axis = -1 : i64}>
// GENERIC:       "fused.row_reduce"(%{{.*}}) <{axis = 0 : i64}>
func.func @row_reduce_axes(%x: tensor<4x8xf32>) {
  %0 = fused.row_reduce %x {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    %m = fused.reduce_value %a {kind = "max"} : f32 -> f32
    fused.yield %m : f32
  }
  %1 = fused.row_reduce %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    %m = fused.reduce_value %a {kind = "mean"} : f32 -> f32
    %d = arith.subf %a, %m : f32
    fused.yield %d : f32
  }
  func.return
}
