// One post-LN BERT encoder layer, small enough for tests and the CPU: hidden 64, 4 heads of 16,
// FFN 256, batch 1, sequence 8. Written in nn ops with a packed QKV projection:
//   qkv = hidden @ qkv_w + qkv_b, split into q, k, v;  ctx = attention(q, k, v, mask)
//   h1  = layer_norm(ctx @ out_w + out_b + hidden)
//   out = layer_norm(gelu(h1 @ fc1_w + fc1_b) @ fc2_w + fc2_b + h1)
// The mask is [batch, seq] with 1 = attend, 0 = padding. examples/bert_layer.mlir is the same
// layer at BERT-base size (hidden 768, 12 heads, sequence 128) with separate Q, K, V weights.
// Run: fusec-opt examples/bert_layer_small.mlir -p default   (one fused.transformer_layer).
func.func @bert_layer_small(%hidden: tensor<1x8x64xf32>, %mask: tensor<1x8xf32>,
    %qkv_w: tensor<64x192xf32>, %qkv_b: tensor<192xf32>,
    %out_w: tensor<64x64xf32>, %out_b: tensor<64xf32>,
    %ln1_g: tensor<64xf32>, %ln1_b: tensor<64xf32>,
    %fc1_w: tensor<64x256xf32>, %fc1_b: tensor<256xf32>,
    %fc2_w: tensor<256x64xf32>, %fc2_b: tensor<64xf32>,
    %ln2_g: tensor<64xf32>, %ln2_b: tensor<64xf32>) -> tensor<1x8x64xf32> {
  %qkv_mm = nn.matmul %hidden, %qkv_w : tensor<1x8x64xf32>, tensor<64x192xf32> -> tensor<1x8x192xf32>
  %qkv = nn.add %qkv_mm, %qkv_b : tensor<1x8x192xf32>, tensor<192xf32> -> tensor<1x8x192xf32>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 64 : i64} : tensor<1x8x192xf32> -> tensor<1x8x64xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 64 : i64} : tensor<1x8x192xf32> -> tensor<1x8x64xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 128 : i64, length = 64 : i64} : tensor<1x8x192xf32> -> tensor<1x8x64xf32>
  %ctx = nn.attention %q, %k, %v mask %mask {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8xf32> -> tensor<1x8x64xf32>
  %attn_mm = nn.matmul %ctx, %out_w : tensor<1x8x64xf32>, tensor<64x64xf32> -> tensor<1x8x64xf32>
  %attn = nn.add %attn_mm, %out_b : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %res1 = nn.add %attn, %hidden : tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  %h1 = nn.layer_norm %res1, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %fc1_mm = nn.matmul %h1, %fc1_w : tensor<1x8x64xf32>, tensor<64x256xf32> -> tensor<1x8x256xf32>
  %fc1 = nn.add %fc1_mm, %fc1_b : tensor<1x8x256xf32>, tensor<256xf32> -> tensor<1x8x256xf32>
  %act = nn.gelu %fc1 : tensor<1x8x256xf32> -> tensor<1x8x256xf32>
  %fc2_mm = nn.matmul %act, %fc2_w : tensor<1x8x256xf32>, tensor<256x64xf32> -> tensor<1x8x64xf32>
  %fc2 = nn.add %fc2_mm, %fc2_b : tensor<1x8x64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  %res2 = nn.add %fc2, %h1 : tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  %out = nn.layer_norm %res2, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : tensor<1x8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<1x8x64xf32>
  func.return %out : tensor<1x8x64xf32>
}
