// fuse-transformer-layer: attention block -> residual LN -> FFN (act, none) -> residual LN becomes one
// fused.transformer_layer when batch * seq <= max-tokens; and its guards.
// RUN: fusec-opt %s -p fuse-transformer-layer --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-transformer-layer{max-tokens=2}' --split-input-file | filecheck %s --check-prefix=LIMIT
// RUN: fusec-opt %s -p 'fuse-transformer-layer{max-tokens=128}' --split-input-file | filecheck %s --check-prefix=BIG
// RUN: fusec-opt %s -p 'fuse-transformer-layer,unfuse{ops=transformer_layer}' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-transformer-layer --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-transformer-layer,fuse-transformer-layer --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The seed's BERT layer: 4 heads of 8, intermediate 128, batch 1, sequence 4.
// CHECK-LABEL: func.func @layer(
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.transformer_layer %hidden, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %ln1_g, %ln1_b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %ln2_g, %ln2_b {num_heads = 4 : i64, head_dim = 8 : i64, intermediate_size = 128 : i64, eps1 = 1.000000e-12 : f32, eps2 = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
// LIMIT-LABEL: func.func @layer(
// LIMIT-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// LIMIT-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// LIMIT-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// LIMIT-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// LIMIT-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// LIMIT-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
// UNFUSE-LABEL: func.func @layer(
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
func.func @layer(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// Residual sums with their operands the other way round; a relu FFN; two eps.
// CHECK-LABEL: func.func @sums_swapped_relu(
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.transformer_layer %hidden, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %ln1_g, %ln1_b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %ln2_g, %ln2_b {num_heads = 4 : i64, head_dim = 8 : i64, intermediate_size = 128 : i64, eps2 = 1.000000e-06 : f32, activation = "relu"} : (tensor<1x4x32xf32>, tensor<1x4xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @sums_swapped_relu(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %hidden, %attn, %ln1_g, %ln1_b {eps = 1.0e-5 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "relu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %h1, %fc2, %ln2_g, %ln2_b {eps = 1.0e-6 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// batch * seq = 4 * 32 = 128 > max-tokens.
// CHECK-LABEL: func.func @negative_too_many_tokens(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<4x32x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<4x32x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<4x32x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<4x32x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<4x32x32xf32>
// BIG-LABEL: func.func @negative_too_many_tokens(
// BIG-NEXT:  %[[OUT:[^ ]+]] = fused.transformer_layer %hidden, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %ln1_g, %ln1_b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %ln2_g, %ln2_b {num_heads = 4 : i64, head_dim = 8 : i64, intermediate_size = 128 : i64, eps1 = 1.000000e-12 : f32, eps2 = 1.000000e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
// BIG-NEXT:  func.return %[[OUT]] : tensor<4x32x32xf32>
func.func @negative_too_many_tokens(%hidden: tensor<4x32x32xf32>, %mask: tensor<4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<4x32x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<4x32x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<4x32x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<4x32x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<4x32x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32x32xf32>
  func.return %out : tensor<4x32x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_attention_returned(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[ATTN]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_attention_returned(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out, %attn : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// h1 is a layer output too (three uses).
// CHECK-LABEL: func.func @negative_h1_returned(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[H1]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_h1_returned(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out, %h1 : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_h1_extra_consumer(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[E:[^ ]+]] = nn.exp %[[H1]] : tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[E]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_h1_extra_consumer(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %e = nn.exp %h1 : tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  func.return %out, %e : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_ffn_intermediate_returned(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[FC1]] : tensor<1x4x32xf32>, tensor<1x4x128xf32>
func.func @negative_ffn_intermediate_returned(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x128xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out, %fc1 : tensor<1x4x32xf32>, tensor<1x4x128xf32>
}

// -----

// CHECK-LABEL: func.func @negative_fc2_returned(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[FC2]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_fc2_returned(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out, %fc2 : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_fc1_no_activation(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_fc1_no_activation(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "none"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_fc2_activation(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b {activation = "gelu"} : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_fc2_activation(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b {activation = "gelu"} : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// The first sum adds another tensor, not the block's input.
// CHECK-LABEL: func.func @negative_first_residual_not_block_input(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %other, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_first_residual_not_block_input(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>, %other: tensor<1x4x32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %other, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// The second sum adds the layer input, not h1.
// CHECK-LABEL: func.func @negative_second_residual_not_h1(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %hidden, %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_second_residual_not_h1(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<128xf32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %hidden, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_scalar_fc1_bias(
// CHECK-NEXT:  %[[ATTN:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[H1:[^ ]+]] = fused.residual_layer_norm %[[ATTN]], %hidden, %ln1_g, %ln1_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[FC1:[^ ]+]] = fused.matmul_bias_act %[[H1]], %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<f32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[FC2:[^ ]+]] = fused.matmul_bias_act %[[FC1]], %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.residual_layer_norm %[[FC2]], %[[H1]], %ln2_g, %ln2_b {eps = 1.000000e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_scalar_fc1_bias(%hidden: tensor<1x4x32xf32>, %mask: tensor<1x4xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %fc1_w: tensor<32x128xf32>, %fc1_b: tensor<f32>, %fc2_w: tensor<128x32xf32>, %fc2_b: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %attn = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
  %h1 = fused.residual_layer_norm %attn, %hidden, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  %fc1 = fused.matmul_bias_act %h1, %fc1_w, %fc1_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<f32> -> tensor<1x4x128xf32>
  %fc2 = fused.matmul_bias_act %fc1, %fc2_w, %fc2_b : tensor<1x4x128xf32>, tensor<128x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %out = fused.residual_layer_norm %fc2, %h1, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}
