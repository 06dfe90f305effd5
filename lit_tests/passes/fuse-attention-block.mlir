// fuse-attention-block: QKV projection -> narrow x3 -> masked attention -> output projection becomes
// fused.attention_block when batch * seq <= max-tokens; and its guards.
// RUN: fusec-opt %s -p fuse-attention-block --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-attention-block{max-tokens=63}' --split-input-file | filecheck %s --check-prefix=LIMIT
// RUN: fusec-opt %s -p 'fuse-attention-block{max-tokens=128}' --split-input-file | filecheck %s --check-prefix=BIG
// RUN: fusec-opt %s -p 'fuse-attention-block,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-attention-block --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-attention-block,fuse-attention-block --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The seed's BERT attention block: 4 heads of 8, batch 1, sequence 4.
// CHECK-LABEL: func.func @block(
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
// LIMIT-LABEL: func.func @block(
// LIMIT-NEXT:  %[[OUT:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<1x4xf32>) -> tensor<1x4x32xf32>
// LIMIT-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
// UNFUSE-LABEL: func.func @block(
// UNFUSE-NEXT:  %[[QKV_MM:[^ ]+]] = nn.matmul %hidden, %qkv_w : tensor<1x4x32xf32>, tensor<32x96xf32> -> tensor<1x4x96xf32>
// UNFUSE-NEXT:  %[[QKV:[^ ]+]] = nn.add %[[QKV_MM]], %qkv_b : tensor<1x4x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// UNFUSE-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[ATTN:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[ATTN_OUT_MM:[^ ]+]] = nn.matmul %[[ATTN]], %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  %[[ATTN_OUT:[^ ]+]] = nn.add %[[ATTN_OUT_MM]], %out_b : tensor<1x4x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// UNFUSE-NEXT:  func.return %[[ATTN_OUT]] : tensor<1x4x32xf32>
func.func @block(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// batch * seq = 2 * 32 = 64: still fuses by default; the output width differs.
// CHECK-LABEL: func.func @at_max_tokens(
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<2x32x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<2x32xf32>) -> tensor<2x32x16xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<2x32x16xf32>
// LIMIT-LABEL: func.func @at_max_tokens(
// LIMIT-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<2x32x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<2x32x96xf32>
// LIMIT-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<2x32x96xf32> -> tensor<2x32x32xf32>
// LIMIT-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<2x32x96xf32> -> tensor<2x32x32xf32>
// LIMIT-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<2x32x96xf32> -> tensor<2x32x32xf32>
// LIMIT-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<2x32x32xf32>, tensor<2x32x32xf32>, tensor<2x32x32xf32>, tensor<2x32xf32> -> tensor<2x32x32xf32>
// LIMIT-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<2x32x32xf32>, tensor<32x16xf32>, tensor<16xf32> -> tensor<2x32x16xf32>
// LIMIT-NEXT:  func.return %[[OUT]] : tensor<2x32x16xf32>
func.func @at_max_tokens(%hidden: tensor<2x32x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x16xf32>, %out_b: tensor<16xf32>, %mask: tensor<2x32xf32>) -> (tensor<2x32x16xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<2x32x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<2x32x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<2x32x96xf32> -> tensor<2x32x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<2x32x96xf32> -> tensor<2x32x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<2x32x96xf32> -> tensor<2x32x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<2x32x32xf32>, tensor<2x32x32xf32>, tensor<2x32x32xf32>, tensor<2x32xf32> -> tensor<2x32x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<2x32x32xf32>, tensor<32x16xf32>, tensor<16xf32> -> tensor<2x32x16xf32>
  func.return %out : tensor<2x32x16xf32>
}

// -----

// The seed's large-input case: 4 * 32 = 128 tokens > max-tokens.
// CHECK-LABEL: func.func @negative_too_many_tokens(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<4x32x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<4x32x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<4x32x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<4x32x32xf32>
// BIG-LABEL: func.func @negative_too_many_tokens(
// BIG-NEXT:  %[[OUT:[^ ]+]] = fused.attention_block %hidden, %qkv_w, %qkv_b, %out_w, %out_b, %mask {num_heads = 4 : i64, head_dim = 8 : i64} : (tensor<4x32x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<4x32xf32>) -> tensor<4x32x32xf32>
// BIG-NEXT:  func.return %[[OUT]] : tensor<4x32x32xf32>
func.func @negative_too_many_tokens(%hidden: tensor<4x32x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<4x32xf32>) -> (tensor<4x32x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<4x32x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<4x32x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<4x32x96xf32> -> tensor<4x32x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32> -> tensor<4x32x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<4x32x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<4x32x32xf32>
  func.return %out : tensor<4x32x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_no_mask(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_no_mask(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_causal(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64, causal = true} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_causal(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64, causal = true} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_custom_scale(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64, scale = 2.500000e-01 : f32} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_custom_scale(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64, scale = 2.5e-01 : f32} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_qkv_activation(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_qkv_activation(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b {activation = "gelu"} : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_out_activation(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b {activation = "relu"} : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_out_activation(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b {activation = "relu"} : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// No bias on the output projection: not the fused op's shape.
// CHECK-LABEL: func.func @negative_out_plain_matmul(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = nn.matmul %[[A]], %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_out_plain_matmul(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = nn.matmul %a, %out_w : tensor<1x4x32xf32>, tensor<32x32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_qkv_returned(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[QKV]] : tensor<1x4x32xf32>, tensor<1x4x96xf32>
func.func @negative_qkv_returned(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x96xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out, %qkv : tensor<1x4x32xf32>, tensor<1x4x96xf32>
}

// -----

// CHECK-LABEL: func.func @negative_narrow_returned(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[K]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_narrow_returned(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out, %k : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_attention_returned(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[A]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_attention_returned(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out, %a : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_attention_extra_consumer(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[E:[^ ]+]] = nn.exp %[[A]] : tensor<1x4x32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]], %[[E]] : tensor<1x4x32xf32>, tensor<1x4x32xf32>
func.func @negative_attention_extra_consumer(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>, tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  %e = nn.exp %a : tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  func.return %out, %e : tensor<1x4x32xf32>, tensor<1x4x32xf32>
}

// -----

// K first, Q second: not the layout the fused op reads.
// CHECK-LABEL: func.func @negative_q_k_swapped(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_q_k_swapped(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<96xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<96xf32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// qkv has a fourth slice nobody reads: qkv_w is not [E, 3h].
// CHECK-LABEL: func.func @negative_qkv_wider(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x128xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x128xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x128xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_qkv_wider(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x128xf32>, %qkv_b: tensor<128xf32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x128xf32>, tensor<128xf32> -> tensor<1x4x128xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x128xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x128xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x128xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}

// -----

// A scalar QKV bias is fine for matmul_bias_act, not for the block.
// CHECK-LABEL: func.func @negative_scalar_bias(
// CHECK-NEXT:  %[[QKV:[^ ]+]] = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<f32> -> tensor<1x4x96xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[QKV]] {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.attention %[[Q]], %[[K]], %[[V]] mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  %[[OUT:[^ ]+]] = fused.matmul_bias_act %[[A]], %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
// CHECK-NEXT:  func.return %[[OUT]] : tensor<1x4x32xf32>
func.func @negative_scalar_bias(%hidden: tensor<1x4x32xf32>, %qkv_w: tensor<32x96xf32>, %qkv_b: tensor<f32>, %out_w: tensor<32x32xf32>, %out_b: tensor<32xf32>, %mask: tensor<1x4xf32>) -> (tensor<1x4x32xf32>) {
  %qkv = fused.matmul_bias_act %hidden, %qkv_w, %qkv_b : tensor<1x4x32xf32>, tensor<32x96xf32>, tensor<f32> -> tensor<1x4x96xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x4x96xf32> -> tensor<1x4x32xf32>
  %a = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4x32xf32>, tensor<1x4xf32> -> tensor<1x4x32xf32>
  %out = fused.matmul_bias_act %a, %out_w, %out_b : tensor<1x4x32xf32>, tensor<32x32xf32>, tensor<32xf32> -> tensor<1x4x32xf32>
  func.return %out : tensor<1x4x32xf32>
}
