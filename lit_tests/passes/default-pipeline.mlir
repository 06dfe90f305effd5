// The default pipeline on the seed's whole-layer cases: what each model block fuses into.
// RUN: fusec-opt %s -p default --split-input-file | filecheck %s
// Everything comes back to nn ops:
// The seed's other SwiGLU path (its swiglu_ffn builder test): merge the gate/up matmuls, then
// match SwiGLU on the slices:
// RUN: fusec-opt %s -p fuse-shared-input-matmul,fuse-swiglu --split-input-file | filecheck %s --check-prefix=SLICES
// RUN: fusec-opt %s -p default,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p default,unfuse --split-input-file | filecheck %s --check-prefix=NOFUSED
// NOFUSED-NOT: fused.
// Idempotent as a whole:
// RUN: fusec-opt %s -p default --split-input-file > %t.once
// RUN: fusec-opt %s -p default,default --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The seed's BERT FFN block: output projection + residual + LayerNorm, then the FFN.
// CHECK-LABEL: func.func @bert_ffn(
// CHECK-NEXT:  %[[OUT_ADD:[^ ]+]] = fused.matmul_bias_act %hidden, %out_w, %out_b : tensor<2x3x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
// CHECK-NEXT:  %[[LN:[^ ]+]] = fused.residual_layer_norm %[[OUT_ADD]], %residual, %ln_g, %ln_b {eps = 1.000000e-12 : f32} : (tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x3x32xf32>
// CHECK-NEXT:  %[[GELU:[^ ]+]] = fused.matmul_bias_act %[[LN]], %int_w, %int_b {activation = "gelu"} : tensor<2x3x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<2x3x128xf32>
// CHECK-NEXT:  %[[OUT2_ADD:[^ ]+]] = fused.matmul_bias_act %[[GELU]], %out2_w, %out2_b : tensor<2x3x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
// CHECK-NEXT:  func.return %[[OUT2_ADD]] : tensor<2x3x32xf32>
func.func @bert_ffn(%hidden: tensor<2x3x32xf32>, %residual: tensor<2x3x32xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln_g: tensor<32xf32>, %ln_b: tensor<32xf32>, %int_w: tensor<32x128xf32>, %int_b: tensor<128xf32>, %out2_w: tensor<128x32xf32>, %out2_b: tensor<32xf32>) -> tensor<2x3x32xf32> {
  %out_mm = nn.matmul %hidden, %out_w : tensor<2x3x32xf32>, tensor<32x32xf32> -> tensor<2x3x32xf32>
  %out_add = nn.add %out_mm, %out_b : tensor<2x3x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
  %res_add = nn.add %out_add, %residual : tensor<2x3x32xf32>, tensor<2x3x32xf32> -> tensor<2x3x32xf32>
  %ln = nn.layer_norm %res_add, %ln_g, %ln_b {eps = 1.0e-12 : f32} : tensor<2x3x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
  %int_mm = nn.matmul %ln, %int_w : tensor<2x3x32xf32>, tensor<32x128xf32> -> tensor<2x3x128xf32>
  %int_add = nn.add %int_mm, %int_b : tensor<2x3x128xf32>, tensor<128xf32> -> tensor<2x3x128xf32>
  %gelu = nn.gelu %int_add : tensor<2x3x128xf32> -> tensor<2x3x128xf32>
  %out2_mm = nn.matmul %gelu, %out2_w : tensor<2x3x128xf32>, tensor<128x32xf32> -> tensor<2x3x32xf32>
  %out2_add = nn.add %out2_mm, %out2_b : tensor<2x3x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
  func.return %out2_add : tensor<2x3x32xf32>
}

// -----

// The seed's full BERT layer: 4 heads of 8, intermediate 128, batch 1, sequence 4.
// CHECK-LABEL: func.func @bert_layer(
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.transformer_layer %hidden, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %ln1_g, %ln1_b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %ln2_g, %ln2_b {num_heads = 4 : i64, head_dim = 8 : i64, intermediate_size = 128 : i64, eps1 = 1.000000e-12 : f32, eps2 = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
// UNFUSE-LABEL: func.func @bert_layer(
// UNFUSE-NEXT:  %[[QKV_MM:[^ ]+]] = nn.matmul %hidden, %qkv_w : tensor<1x4x32xf32>, tensor<32x96xf32> -> tensor<1x4x96xf32>
// UNFUSE-NEXT:  %[[QKV:[^ ]+]] = nn.add %[[QKV_MM]], %qkv_b : tensor<1x4x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// UNFUSE-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[ATTN:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[ATTN_OUT_MM:[^ ]+]] = nn.matmul %[[ATTN]], %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[ATTN_OUT:[^ ]+]] = nn.add %[[ATTN_OUT_MM]], %out_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[LN1_IN:[^ ]+]] = nn.add %[[ATTN_OUT]], %hidden : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[LN1:[^ ]+]] = nn.layer_norm %[[LN1_IN]], %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[FC1_MM:[^ ]+]] = nn.matmul %[[LN1]], %fc1_w : tensor<1x4x32xf32>, tensor<32x128xf32> -> tensor<1x4x128xf32>
// UNFUSE-NEXT:  %[[FC1:[^ ]+]] = nn.add %[[FC1_MM]], %fc1_b : tensor<1x4x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// UNFUSE-NEXT:  %[[FC1_ACT:[^ ]+]] = nn.gelu %[[FC1]] : tensor<1x4x128xf32> -> tensor<1x4x128xf32>
// UNFUSE-NEXT:  %[[FC2_MM:[^ ]+]] = nn.matmul %[[FC1_ACT]], %fc2_w : tensor<1x4x128xf32>, tensor<128x32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[FC2:[^ ]+]] = nn.add %[[FC2_MM]], %fc2_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[LN2_IN:[^ ]+]] = nn.add %[[FC2]], %[[LN1]] : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[LN2:[^ ]+]] = nn.layer_norm %[[LN2_IN]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  func.return %[[LN2]] : tensor<1x4x32xf32>
func.func @bert_layer(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> tensor<1x4x32xf32> {
  %qkv_mm = nn.matmul %hidden, %qkv_w : tensor<1x4x32xf32>, tensor<32x96xf32> -> tensor<1x4x96xf32>
  %qkv = nn.add %qkv_mm, %qkv_b : tensor<1x4x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %attn = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out_mm = nn.matmul %attn, %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
  %attn_out = nn.add %out_mm, %out_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %res1 = nn.add %attn_out, %hidden : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %h1 = nn.layer_norm %res1, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %fc1_mm = nn.matmul %h1, %fc1_w : tensor<1x4x32xf32>, tensor<32x128xf32> -> tensor<1x4x128xf32>
  %fc1_add = nn.add %fc1_mm, %fc1_b : tensor<1x4x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc1_act = nn.gelu %fc1_add : tensor<1x4x128xf32> -> tensor<1x4x128xf32>
  %fc2_mm = nn.matmul %fc1_act, %fc2_w : tensor<1x4x128xf32>, tensor<128x32xf32> -> tensor<1x4x32xf32>
  %ffn_out = nn.add %fc2_mm, %fc2_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %res2 = nn.add %ffn_out, %h1 : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %out = nn.layer_norm %res2, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// The same layer on 4 x 32 = 128 tokens: the attention chain stays, the rest fuses.
// CHECK-LABEL: func.func @bert_layer_large(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<4x32x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<4x32x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[ATTN_OUT:[^ ]+]] = fused.matmul_bias_act %[[ATTN]], %out_w, %out_b : tensor<4x32x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN_OUT]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[FC1_ACT:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<4x32x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<4x32x128xf32>
// CHECK-NEXT:  %[[FFN_OUT:[^ ]+]] = fused.matmul_bias_act %[[FC1_ACT]], %fc2_w, %fc2_b : tensor<4x32x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FFN_OUT]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<4x32x32xf32>
func.func @bert_layer_large(%hidden: tensor<4x32x32xf32>, %mask: tensor<4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> tensor<4x32x32xf32> {
  %qkv_mm = nn.matmul %hidden, %qkv_w : tensor<4x32x32xf32>, tensor<32x96xf32> -> tensor<4x32x96xf32>
  %qkv = nn.add %qkv_mm, %qkv_b : tensor<4x32x96xf32>, tensor<96xf32> -> tensor<4x32x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
  %attn = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32> -> tensor<4x32x32xf32>
  %out_mm = nn.matmul %attn, %out_w : tensor<4x32x32xf32>, tensor<32x32xf32> -> tensor<4x32x32xf32>
  %attn_out = nn.add %out_mm, %out_b : tensor<4x32x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
  %res1 = nn.add %attn_out, %hidden : tensor<4x32x32xf32>, tensor<4x32x32xf32> -> tensor<4x32x32xf32>
  %h1 = nn.layer_norm %res1, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
  %fc1_mm = nn.matmul %h1, %fc1_w : tensor<4x32x32xf32>, tensor<32x128xf32> -> tensor<4x32x128xf32>
  %fc1_add = nn.add %fc1_mm, %fc1_b : tensor<4x32x128xf32>, tensor<128xf32> -> tensor<4x32x128xf32>
  %fc1_act = nn.gelu %fc1_add : tensor<4x32x128xf32> -> tensor<4x32x128xf32>
  %fc2_mm = nn.matmul %fc1_act, %fc2_w : tensor<4x32x128xf32>, tensor<128x32xf32> -> tensor<4x32x32xf32>
  %ffn_out = nn.add %fc2_mm, %fc2_b : tensor<4x32x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
  %res2 = nn.add %ffn_out, %h1 : tensor<4x32x32xf32>, tensor<4x32x32xf32> -> tensor<4x32x32xf32>
  %out = nn.layer_norm %res2, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
  func.return %out : tensor<4x32x32xf32>
}

// -----

// Two layers; the first layer's post-attention residual sum is a graph output (the seed's
// multi-block encoder bug). Layer 1 keeps that sum: only its attention block and FFN fuse.
// Layer 2 becomes one fused.transformer_layer.
// CHECK-LABEL: func.func @two_layers_stage_output(
// CHECK-NEXT:  %[[ATTN_OUT:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[STAGE:[^ ]+]] = nn.add %[[ATTN_OUT]], %hidden : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = nn.layer_norm %[[STAGE]], %ln_g, %ln_b : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1_ACT:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FFN_OUT:[^ ]+]] = fused.matmul_bias_act %[[FC1_ACT]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[L1:[^ ]+]] = fused.residual_layer_norm %[[FFN_OUT]], %[[H1]], %ln_g, %ln_b : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[L2:[^ ]+]] = fused.transformer_layer %[[L1]], %mask, %qkv_w, %qkv_b, %out_w, %out_b, %ln_g, %ln_b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %ln_g, %ln_b {num_heads = 4 : i64, head_dim = 8 : i64, intermediate_size = 128 : i64} : (tensor<1x4x32xf32>, tensor<1x4xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[L2]], %[[STAGE]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @two_layers_stage_output(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln_g: tensor<32xf32>, %ln_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %qkv_mm = nn.matmul %hidden, %qkv_w : tensor<1x4x32xf32>, tensor<32x96xf32> -> tensor<1x4x96xf32>
  %qkv = nn.add %qkv_mm, %qkv_b : tensor<1x4x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %attn = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out_mm = nn.matmul %attn, %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
  %attn_out = nn.add %out_mm, %out_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %stage = nn.add %attn_out, %hidden : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %h1 = nn.layer_norm %stage, %ln_g, %ln_b : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %fc1_mm = nn.matmul %h1, %fc1_w : tensor<1x4x32xf32>, tensor<32x128xf32> -> tensor<1x4x128xf32>
  %fc1_add = nn.add %fc1_mm, %fc1_b : tensor<1x4x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc1_act = nn.gelu %fc1_add : tensor<1x4x128xf32> -> tensor<1x4x128xf32>
  %fc2_mm = nn.matmul %fc1_act, %fc2_w : tensor<1x4x128xf32>, tensor<128x32xf32> -> tensor<1x4x32xf32>
  %ffn_out = nn.add %fc2_mm, %fc2_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %res2 = nn.add %ffn_out, %h1 : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %l1 = nn.layer_norm %res2, %ln_g, %ln_b : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %qkv_mm2 = nn.matmul %l1, %qkv_w : tensor<1x4x32xf32>, tensor<32x96xf32> -> tensor<1x4x96xf32>
  %qkv2 = nn.add %qkv_mm2, %qkv_b : tensor<1x4x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q2 = nn.narrow %qkv2 {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k2 = nn.narrow %qkv2 {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v2 = nn.narrow %qkv2 {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %attn2 = nn.attention %q2, %k2, %v2 mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out_mm2 = nn.matmul %attn2, %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
  %attn_out2 = nn.add %out_mm2, %out_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %res3 = nn.add %attn_out2, %l1 : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %h2 = nn.layer_norm %res3, %ln_g, %ln_b : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %fc1_mm2 = nn.matmul %h2, %fc1_w : tensor<1x4x32xf32>, tensor<32x128xf32> -> tensor<1x4x128xf32>
  %fc1_add2 = nn.add %fc1_mm2, %fc1_b : tensor<1x4x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc1_act2 = nn.gelu %fc1_add2 : tensor<1x4x128xf32> -> tensor<1x4x128xf32>
  %fc2_mm2 = nn.matmul %fc1_act2, %fc2_w : tensor<1x4x128xf32>, tensor<128x32xf32> -> tensor<1x4x32xf32>
  %ffn_out2 = nn.add %fc2_mm2, %fc2_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %res4 = nn.add %ffn_out2, %h2 : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %l2 = nn.layer_norm %res4, %ln_g, %ln_b : tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %l2, %stage : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// The seed's QKV three-way split (no biases): one matmul, three slices.
// CHECK-LABEL: func.func @qkv_three_way(
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %wq, %wk, %wv {axis = 1 : i64} : (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x48xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %x, %[[SHARED_W]] : tensor<8x64xf32>, tensor<64x48xf32> -> tensor<8x48xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 16 : i64} : tensor<8x48xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 16 : i64, length = 16 : i64} : tensor<8x48xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 32 : i64, length = 16 : i64} : tensor<8x48xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  func.return %[[Q]], %[[K]], %[[V]] : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
func.func @qkv_three_way(%x: tensor<8x64xf32>, %wq: tensor<64x16xf32>, %wk: tensor<64x16xf32>, %wv: tensor<64x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %q = nn.matmul %x, %wq : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
  %k = nn.matmul %x, %wk : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
  %v = nn.matmul %x, %wv : tensor<8x64xf32>, tensor<64x16xf32> -> tensor<8x16xf32>
  func.return %q, %k, %v : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// The seed's MoE shared input: the shared expert's gate/up pair becomes a SwiGLU first; then
// its matmul merges with the two routers on the same hidden state.
// CHECK-LABEL: func.func @moe_shared_input(
// CHECK-NEXT:  %[[H2:[^ ]+]] = nn.reshape %h : tensor<1x4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[UP_GATE_W:[^ ]+]] = nn.concat %s_up_w, %s_gate_w {axis = 1 : i64} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %router_w, %shared_router_w, %[[UP_GATE_W]] {axis = 1 : i64} : (tensor<16x4xf32>, tensor<16x1xf32>, tensor<16x32xf32>) -> tensor<16x37xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %[[H2]], %[[SHARED_W]] : tensor<4x16xf32>, tensor<16x37xf32> -> tensor<4x37xf32>
// CHECK-NEXT:  %[[LOGITS:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 4 : i64} : tensor<4x37xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[UP_GATE:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 5 : i64, length = 32 : i64} : tensor<4x37xf32> -> tensor<4x32xf32>
// The router's slice and its sigmoid are one kernel reading the matmul's column 4 in place.
// CHECK-NEXT:  %[[SHARED_GATE:[^ ]+]] = fused.elementwise %[[SHARED]] {indexing_maps = [affine_map<(d0, d1) -> (d0, (d1 + 4))>]} : (tensor<4x37xf32>) -> tensor<4x1xf32> {
// CHECK:         fused.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[S_SWIGLU:[^ ]+]] = fused.swiglu %[[UP_GATE]] : tensor<4x32xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[LOGITS]], %[[SHARED_GATE]], %[[S_SWIGLU]] : tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x16xf32>
func.func @moe_shared_input(%h: tensor<1x4x16xf32>, %router_w: tensor<16x4xf32>, %shared_router_w: tensor<16x1xf32>, %s_gate_w: tensor<16x16xf32>, %s_up_w: tensor<16x16xf32>) -> (tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x16xf32>) {
  %h2 = nn.reshape %h : tensor<1x4x16xf32> -> tensor<4x16xf32>
  %logits = nn.matmul %h2, %router_w : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  %shared_logits = nn.matmul %h2, %shared_router_w : tensor<4x16xf32>, tensor<16x1xf32> -> tensor<4x1xf32>
  %shared_gate = nn.sigmoid %shared_logits : tensor<4x1xf32> -> tensor<4x1xf32>
  %s_gate = nn.matmul %h2, %s_gate_w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %s_up = nn.matmul %h2, %s_up_w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %s_silu = nn.silu %s_gate : tensor<4x16xf32> -> tensor<4x16xf32>
  %s_swiglu = nn.mul %s_silu, %s_up : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %logits, %shared_gate, %s_swiglu : tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x16xf32>
}

// -----

// A pre-norm SwiGLU block (the seed's swiglu_ffn builder and Qwen pre-norm): the residual sum
// stays (the stream continues), the norm writes 2-D rows, gate/up become one matmul + SwiGLU.
// CHECK-LABEL: func.func @prenorm_swiglu_block(
// CHECK-NEXT:  %[[R:[^ ]+]] = nn.add %x, %y : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[F:[^ ]+]] = nn.rms_norm %[[R]], %g : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:  %[[UP_GATE_W:[^ ]+]] = nn.concat %up_w, %gate_w {axis = 1 : i64} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x128xf32>
// CHECK-NEXT:  %[[UP_GATE:[^ ]+]] = nn.matmul %[[F]], %[[UP_GATE_W]] : tensor<4x32xf32>, tensor<32x128xf32> -> tensor<4x128xf32>
// CHECK-NEXT:  %[[H:[^ ]+]] = fused.swiglu %[[UP_GATE]] : tensor<4x128xf32> -> tensor<4x64xf32>
// CHECK-NEXT:  %[[DOWN:[^ ]+]] = nn.matmul %[[H]], %down_w : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>
// CHECK-NEXT:  func.return %[[DOWN]], %[[R]] : tensor<4x32xf32>, tensor<1x4x32xf32>
// SLICES-LABEL: func.func @prenorm_swiglu_block(
// SLICES-NEXT:  %[[R:[^ ]+]] = nn.add %x, %y : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// SLICES-NEXT:  %[[N:[^ ]+]] = nn.rms_norm %[[R]], %g : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// SLICES-NEXT:  %[[F:[^ ]+]] = nn.reshape %[[N]] : tensor<1x4x32xf32> -> tensor<4x32xf32>
// SLICES-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %up_w, %gate_w {axis = 1 : i64} : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x128xf32>
// SLICES-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %[[F]], %[[SHARED_W]] : tensor<4x32xf32>, tensor<32x128xf32> -> tensor<4x128xf32>
// SLICES-NEXT:  %[[H:[^ ]+]] = fused.swiglu %[[SHARED]] : tensor<4x128xf32> -> tensor<4x64xf32>
// SLICES-NEXT:  %[[DOWN:[^ ]+]] = nn.matmul %[[H]], %down_w : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>
// SLICES-NEXT:  func.return %[[DOWN]], %[[R]] : tensor<4x32xf32>, tensor<1x4x32xf32>
func.func @prenorm_swiglu_block(%x: tensor<1x4x32xf32>, %y: tensor<1x4x32xf32>, %g: tensor<32xf32>, %up_w: tensor<32x64xf32>, %gate_w: tensor<32x64xf32>, %down_w: tensor<64x32xf32>) -> (tensor<4x32xf32>, tensor<1x4x32xf32>) {
  %r = nn.add %x, %y : tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %n = nn.rms_norm %r, %g : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %f = nn.reshape %n : tensor<1x4x32xf32> -> tensor<4x32xf32>
  %up = nn.matmul %f, %up_w : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
  %gate = nn.matmul %f, %gate_w : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
  %act = nn.silu %gate : tensor<4x64xf32> -> tensor<4x64xf32>
  %h = nn.mul %up, %act : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  %down = nn.matmul %h, %down_w : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>
  func.return %down, %r : tensor<4x32xf32>, tensor<1x4x32xf32>
}
