// A BERT-base encoder layer (post-LN): hidden 768, 12 heads, FFN 3072, batch 1, sequence 128.
// Written in nn ops; the default pipeline fuses it.
func.func @bert_layer(%hidden: tensor<1x128x768xf32>, %mask: tensor<1x128xf32>,
    %wq: tensor<768x768xf32>, %bq: tensor<768xf32>, %wk: tensor<768x768xf32>, %bk: tensor<768xf32>, %wv: tensor<768x768xf32>, %bv: tensor<768xf32>,
    %wo: tensor<768x768xf32>, %bo: tensor<768xf32>, %ln1_g: tensor<768xf32>, %ln1_b: tensor<768xf32>,
    %w1: tensor<768x3072xf32>, %b1: tensor<3072xf32>, %w2: tensor<3072x768xf32>, %b2: tensor<768xf32>, %ln2_g: tensor<768xf32>, %ln2_b: tensor<768xf32>) -> tensor<1x128x768xf32> {
  %q_mm = nn.matmul %hidden, %wq : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %q = nn.add %q_mm, %bq : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %k_mm = nn.matmul %hidden, %wk : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %k = nn.add %k_mm, %bk : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %v_mm = nn.matmul %hidden, %wv : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %v = nn.add %v_mm, %bv : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %ctx = nn.attention %q, %k, %v mask %mask {num_heads = 12 : i64, head_dim = 64 : i64} : tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128xf32> -> tensor<1x128x768xf32>
  %attn_mm = nn.matmul %ctx, %wo : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %attn = nn.add %attn_mm, %bo : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %res1 = nn.add %attn, %hidden : tensor<1x128x768xf32>, tensor<1x128x768xf32> -> tensor<1x128x768xf32>
  %h1 = nn.layer_norm %res1, %ln1_g, %ln1_b {eps = 1.0e-12 : f32} : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %fc1_mm = nn.matmul %h1, %w1 : tensor<1x128x768xf32>, tensor<768x3072xf32> -> tensor<1x128x3072xf32>
  %fc1 = nn.add %fc1_mm, %b1 : tensor<1x128x3072xf32>, tensor<3072xf32> -> tensor<1x128x3072xf32>
  %act = nn.gelu %fc1 : tensor<1x128x3072xf32> -> tensor<1x128x3072xf32>
  %fc2_mm = nn.matmul %act, %w2 : tensor<1x128x3072xf32>, tensor<3072x768xf32> -> tensor<1x128x768xf32>
  %fc2 = nn.add %fc2_mm, %b2 : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %res2 = nn.add %fc2, %h1 : tensor<1x128x768xf32>, tensor<1x128x768xf32> -> tensor<1x128x768xf32>
  %out = nn.layer_norm %res2, %ln2_g, %ln2_b {eps = 1.0e-12 : f32} : tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  func.return %out : tensor<1x128x768xf32>
}
