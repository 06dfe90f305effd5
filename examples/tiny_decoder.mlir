// A GPT-style decoder for text generation with a static KV cache (docs/generation.md),
// written by python -m fusec.bench.decoder: vocabulary 64, width 32, 2 pre-LN
// layers of grouped-query attention (4 query heads, 2 key/value heads of 8), a
// tanh-GELU MLP of 64, learned positions, biases, batch 2, a cache of 48 positions per layer.
// @prefill reads a 8-token prompt, @step one token; both write the new keys and values
// at %pos into the donated caches (updated in place) and return the caches, the greedy
// next token (nn.argmax on the device) and the next position: one compiled @step serves
// every position. Weights are arguments, bound at compile time (tests/runtime/test_generation.py).
func.func @prefill(%tokens: tensor<2x8xi32>,
    %pos: tensor<i32>,
    %k_cache0: tensor<2x48x16xf32> {fusec.aliasing_output = 0 : i64},
    %v_cache0: tensor<2x48x16xf32> {fusec.aliasing_output = 1 : i64},
    %k_cache1: tensor<2x48x16xf32> {fusec.aliasing_output = 2 : i64},
    %v_cache1: tensor<2x48x16xf32> {fusec.aliasing_output = 3 : i64},
    %wte: tensor<64x32xf32>,
    %wpe: tensor<48x32xf32>,
    %ln1_g0: tensor<32xf32>,
    %ln1_b0: tensor<32xf32>,
    %wqkv0: tensor<32x64xf32>,
    %bqkv0: tensor<64xf32>,
    %wo0: tensor<32x32xf32>,
    %bo0: tensor<32xf32>,
    %ln2_g0: tensor<32xf32>,
    %ln2_b0: tensor<32xf32>,
    %w10: tensor<32x64xf32>,
    %b10: tensor<64xf32>,
    %w20: tensor<64x32xf32>,
    %b20: tensor<32xf32>,
    %ln1_g1: tensor<32xf32>,
    %ln1_b1: tensor<32xf32>,
    %wqkv1: tensor<32x64xf32>,
    %bqkv1: tensor<64xf32>,
    %wo1: tensor<32x32xf32>,
    %bo1: tensor<32xf32>,
    %ln2_g1: tensor<32xf32>,
    %ln2_b1: tensor<32xf32>,
    %w11: tensor<32x64xf32>,
    %b11: tensor<64xf32>,
    %w21: tensor<64x32xf32>,
    %b21: tensor<32xf32>,
    %lnf_g: tensor<32xf32>,
    %lnf_b: tensor<32xf32>,
    %lm_head: tensor<32x64xf32>)
    -> (tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x1xi32>, tensor<i32>) {
  %offsets = nn.constant {value = dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>} : tensor<8xi32>
  %positions = nn.add %pos, %offsets : tensor<i32>, tensor<8xi32> -> tensor<8xi32>
  %tok_emb = nn.gather %wte, %tokens : tensor<64x32xf32>, tensor<2x8xi32> -> tensor<2x8x32xf32>
  %pos_emb = nn.gather %wpe, %positions : tensor<48x32xf32>, tensor<8xi32> -> tensor<8x32xf32>
  %x0 = nn.add %tok_emb, %pos_emb : tensor<2x8x32xf32>, tensor<8x32xf32> -> tensor<2x8x32xf32>
  %h0 = nn.layer_norm %x0, %ln1_g0, %ln1_b0 {eps = 1.000000e-05 : f32} : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %qkv0_w = nn.matmul %h0, %wqkv0 : tensor<2x8x32xf32>, tensor<32x64xf32> -> tensor<2x8x64xf32>
  %qkv0 = nn.add %qkv0_w, %bqkv0 : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  %q0 = nn.narrow %qkv0 {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<2x8x64xf32> -> tensor<2x8x32xf32>
  %k0 = nn.narrow %qkv0 {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x8x64xf32> -> tensor<2x8x16xf32>
  %v0 = nn.narrow %qkv0 {axis = 2 : i64, start = 48 : i64, length = 16 : i64} : tensor<2x8x64xf32> -> tensor<2x8x16xf32>
  %kc0 = nn.cache_update %k_cache0, %k0, %pos : tensor<2x48x16xf32>, tensor<2x8x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %vc0 = nn.cache_update %v_cache0, %v0, %pos : tensor<2x48x16xf32>, tensor<2x8x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %ctx0 = nn.cache_attention %q0, %kc0, %vc0, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64} : tensor<2x8x32xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<i32> -> tensor<2x8x32xf32>
  %attn0_w = nn.matmul %ctx0, %wo0 : tensor<2x8x32xf32>, tensor<32x32xf32> -> tensor<2x8x32xf32>
  %attn0 = nn.add %attn0_w, %bo0 : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %r0 = nn.add %x0, %attn0 : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %g0 = nn.layer_norm %r0, %ln2_g0, %ln2_b0 {eps = 1.000000e-05 : f32} : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %up0_w = nn.matmul %g0, %w10 : tensor<2x8x32xf32>, tensor<32x64xf32> -> tensor<2x8x64xf32>
  %up0 = nn.add %up0_w, %b10 : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  %act0 = nn.gelu %up0 {approximate = "tanh"} : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  %down0_w = nn.matmul %act0, %w20 : tensor<2x8x64xf32>, tensor<64x32xf32> -> tensor<2x8x32xf32>
  %down0 = nn.add %down0_w, %b20 : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %x1 = nn.add %r0, %down0 : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %h1 = nn.layer_norm %x1, %ln1_g1, %ln1_b1 {eps = 1.000000e-05 : f32} : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %qkv1_w = nn.matmul %h1, %wqkv1 : tensor<2x8x32xf32>, tensor<32x64xf32> -> tensor<2x8x64xf32>
  %qkv1 = nn.add %qkv1_w, %bqkv1 : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  %q1 = nn.narrow %qkv1 {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<2x8x64xf32> -> tensor<2x8x32xf32>
  %k1 = nn.narrow %qkv1 {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x8x64xf32> -> tensor<2x8x16xf32>
  %v1 = nn.narrow %qkv1 {axis = 2 : i64, start = 48 : i64, length = 16 : i64} : tensor<2x8x64xf32> -> tensor<2x8x16xf32>
  %kc1 = nn.cache_update %k_cache1, %k1, %pos : tensor<2x48x16xf32>, tensor<2x8x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %vc1 = nn.cache_update %v_cache1, %v1, %pos : tensor<2x48x16xf32>, tensor<2x8x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %ctx1 = nn.cache_attention %q1, %kc1, %vc1, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64} : tensor<2x8x32xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<i32> -> tensor<2x8x32xf32>
  %attn1_w = nn.matmul %ctx1, %wo1 : tensor<2x8x32xf32>, tensor<32x32xf32> -> tensor<2x8x32xf32>
  %attn1 = nn.add %attn1_w, %bo1 : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %r1 = nn.add %x1, %attn1 : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %g1 = nn.layer_norm %r1, %ln2_g1, %ln2_b1 {eps = 1.000000e-05 : f32} : tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %up1_w = nn.matmul %g1, %w11 : tensor<2x8x32xf32>, tensor<32x64xf32> -> tensor<2x8x64xf32>
  %up1 = nn.add %up1_w, %b11 : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  %act1 = nn.gelu %up1 {approximate = "tanh"} : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  %down1_w = nn.matmul %act1, %w21 : tensor<2x8x64xf32>, tensor<64x32xf32> -> tensor<2x8x32xf32>
  %down1 = nn.add %down1_w, %b21 : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %x2 = nn.add %r1, %down1 : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %last = nn.narrow %x2 {axis = 1 : i64, start = 7 : i64, length = 1 : i64} : tensor<2x8x32xf32> -> tensor<2x1x32xf32>
  %hf = nn.layer_norm %last, %lnf_g, %lnf_b {eps = 1.000000e-05 : f32} : tensor<2x1x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %logits = nn.matmul %hf, %lm_head : tensor<2x1x32xf32>, tensor<32x64xf32> -> tensor<2x1x64xf32>
  %next = nn.argmax %logits : tensor<2x1x64xf32> -> tensor<2x1xi32>
  %count = nn.constant {value = dense<8> : tensor<i32>} : tensor<i32>
  %next_pos = nn.add %pos, %count : tensor<i32>, tensor<i32> -> tensor<i32>
  func.return %kc0, %vc0, %kc1, %vc1, %next, %next_pos : tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x1xi32>, tensor<i32>
}

func.func @step(%tokens: tensor<2x1xi32>,
    %pos: tensor<i32>,
    %k_cache0: tensor<2x48x16xf32> {fusec.aliasing_output = 0 : i64},
    %v_cache0: tensor<2x48x16xf32> {fusec.aliasing_output = 1 : i64},
    %k_cache1: tensor<2x48x16xf32> {fusec.aliasing_output = 2 : i64},
    %v_cache1: tensor<2x48x16xf32> {fusec.aliasing_output = 3 : i64},
    %wte: tensor<64x32xf32>,
    %wpe: tensor<48x32xf32>,
    %ln1_g0: tensor<32xf32>,
    %ln1_b0: tensor<32xf32>,
    %wqkv0: tensor<32x64xf32>,
    %bqkv0: tensor<64xf32>,
    %wo0: tensor<32x32xf32>,
    %bo0: tensor<32xf32>,
    %ln2_g0: tensor<32xf32>,
    %ln2_b0: tensor<32xf32>,
    %w10: tensor<32x64xf32>,
    %b10: tensor<64xf32>,
    %w20: tensor<64x32xf32>,
    %b20: tensor<32xf32>,
    %ln1_g1: tensor<32xf32>,
    %ln1_b1: tensor<32xf32>,
    %wqkv1: tensor<32x64xf32>,
    %bqkv1: tensor<64xf32>,
    %wo1: tensor<32x32xf32>,
    %bo1: tensor<32xf32>,
    %ln2_g1: tensor<32xf32>,
    %ln2_b1: tensor<32xf32>,
    %w11: tensor<32x64xf32>,
    %b11: tensor<64xf32>,
    %w21: tensor<64x32xf32>,
    %b21: tensor<32xf32>,
    %lnf_g: tensor<32xf32>,
    %lnf_b: tensor<32xf32>,
    %lm_head: tensor<32x64xf32>)
    -> (tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x1xi32>, tensor<i32>) {
  %offsets = nn.constant {value = dense<[0]> : tensor<1xi32>} : tensor<1xi32>
  %positions = nn.add %pos, %offsets : tensor<i32>, tensor<1xi32> -> tensor<1xi32>
  %tok_emb = nn.gather %wte, %tokens : tensor<64x32xf32>, tensor<2x1xi32> -> tensor<2x1x32xf32>
  %pos_emb = nn.gather %wpe, %positions : tensor<48x32xf32>, tensor<1xi32> -> tensor<1x32xf32>
  %x0 = nn.add %tok_emb, %pos_emb : tensor<2x1x32xf32>, tensor<1x32xf32> -> tensor<2x1x32xf32>
  %h0 = nn.layer_norm %x0, %ln1_g0, %ln1_b0 {eps = 1.000000e-05 : f32} : tensor<2x1x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %qkv0_w = nn.matmul %h0, %wqkv0 : tensor<2x1x32xf32>, tensor<32x64xf32> -> tensor<2x1x64xf32>
  %qkv0 = nn.add %qkv0_w, %bqkv0 : tensor<2x1x64xf32>, tensor<64xf32> -> tensor<2x1x64xf32>
  %q0 = nn.narrow %qkv0 {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<2x1x64xf32> -> tensor<2x1x32xf32>
  %k0 = nn.narrow %qkv0 {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x1x64xf32> -> tensor<2x1x16xf32>
  %v0 = nn.narrow %qkv0 {axis = 2 : i64, start = 48 : i64, length = 16 : i64} : tensor<2x1x64xf32> -> tensor<2x1x16xf32>
  %kc0 = nn.cache_update %k_cache0, %k0, %pos : tensor<2x48x16xf32>, tensor<2x1x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %vc0 = nn.cache_update %v_cache0, %v0, %pos : tensor<2x48x16xf32>, tensor<2x1x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %ctx0 = nn.cache_attention %q0, %kc0, %vc0, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64} : tensor<2x1x32xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<i32> -> tensor<2x1x32xf32>
  %attn0_w = nn.matmul %ctx0, %wo0 : tensor<2x1x32xf32>, tensor<32x32xf32> -> tensor<2x1x32xf32>
  %attn0 = nn.add %attn0_w, %bo0 : tensor<2x1x32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %r0 = nn.add %x0, %attn0 : tensor<2x1x32xf32>, tensor<2x1x32xf32> -> tensor<2x1x32xf32>
  %g0 = nn.layer_norm %r0, %ln2_g0, %ln2_b0 {eps = 1.000000e-05 : f32} : tensor<2x1x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %up0_w = nn.matmul %g0, %w10 : tensor<2x1x32xf32>, tensor<32x64xf32> -> tensor<2x1x64xf32>
  %up0 = nn.add %up0_w, %b10 : tensor<2x1x64xf32>, tensor<64xf32> -> tensor<2x1x64xf32>
  %act0 = nn.gelu %up0 {approximate = "tanh"} : tensor<2x1x64xf32> -> tensor<2x1x64xf32>
  %down0_w = nn.matmul %act0, %w20 : tensor<2x1x64xf32>, tensor<64x32xf32> -> tensor<2x1x32xf32>
  %down0 = nn.add %down0_w, %b20 : tensor<2x1x32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %x1 = nn.add %r0, %down0 : tensor<2x1x32xf32>, tensor<2x1x32xf32> -> tensor<2x1x32xf32>
  %h1 = nn.layer_norm %x1, %ln1_g1, %ln1_b1 {eps = 1.000000e-05 : f32} : tensor<2x1x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %qkv1_w = nn.matmul %h1, %wqkv1 : tensor<2x1x32xf32>, tensor<32x64xf32> -> tensor<2x1x64xf32>
  %qkv1 = nn.add %qkv1_w, %bqkv1 : tensor<2x1x64xf32>, tensor<64xf32> -> tensor<2x1x64xf32>
  %q1 = nn.narrow %qkv1 {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<2x1x64xf32> -> tensor<2x1x32xf32>
  %k1 = nn.narrow %qkv1 {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x1x64xf32> -> tensor<2x1x16xf32>
  %v1 = nn.narrow %qkv1 {axis = 2 : i64, start = 48 : i64, length = 16 : i64} : tensor<2x1x64xf32> -> tensor<2x1x16xf32>
  %kc1 = nn.cache_update %k_cache1, %k1, %pos : tensor<2x48x16xf32>, tensor<2x1x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %vc1 = nn.cache_update %v_cache1, %v1, %pos : tensor<2x48x16xf32>, tensor<2x1x16xf32>, tensor<i32> -> tensor<2x48x16xf32>
  %ctx1 = nn.cache_attention %q1, %kc1, %vc1, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64} : tensor<2x1x32xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<i32> -> tensor<2x1x32xf32>
  %attn1_w = nn.matmul %ctx1, %wo1 : tensor<2x1x32xf32>, tensor<32x32xf32> -> tensor<2x1x32xf32>
  %attn1 = nn.add %attn1_w, %bo1 : tensor<2x1x32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %r1 = nn.add %x1, %attn1 : tensor<2x1x32xf32>, tensor<2x1x32xf32> -> tensor<2x1x32xf32>
  %g1 = nn.layer_norm %r1, %ln2_g1, %ln2_b1 {eps = 1.000000e-05 : f32} : tensor<2x1x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %up1_w = nn.matmul %g1, %w11 : tensor<2x1x32xf32>, tensor<32x64xf32> -> tensor<2x1x64xf32>
  %up1 = nn.add %up1_w, %b11 : tensor<2x1x64xf32>, tensor<64xf32> -> tensor<2x1x64xf32>
  %act1 = nn.gelu %up1 {approximate = "tanh"} : tensor<2x1x64xf32> -> tensor<2x1x64xf32>
  %down1_w = nn.matmul %act1, %w21 : tensor<2x1x64xf32>, tensor<64x32xf32> -> tensor<2x1x32xf32>
  %down1 = nn.add %down1_w, %b21 : tensor<2x1x32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %x2 = nn.add %r1, %down1 : tensor<2x1x32xf32>, tensor<2x1x32xf32> -> tensor<2x1x32xf32>
  %hf = nn.layer_norm %x2, %lnf_g, %lnf_b {eps = 1.000000e-05 : f32} : tensor<2x1x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x1x32xf32>
  %logits = nn.matmul %hf, %lm_head : tensor<2x1x32xf32>, tensor<32x64xf32> -> tensor<2x1x64xf32>
  %next = nn.argmax %logits : tensor<2x1x64xf32> -> tensor<2x1xi32>
  %count = nn.constant {value = dense<1> : tensor<i32>} : tensor<i32>
  %next_pos = nn.add %pos, %count : tensor<i32>, tensor<i32> -> tensor<i32>
  func.return %kc0, %vc0, %kc1, %vc1, %next, %next_pos : tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x48x16xf32>, tensor<2x1xi32>, tensor<i32>
}
