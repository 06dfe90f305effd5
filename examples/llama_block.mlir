// A Llama-style decoder block (pre-norm): RMSNorm, causal attention, SwiGLU FFN;
// hidden 768, 12 heads, FFN 2048, batch 1, sequence 128. Written in nn ops.
func.func @llama_block(%hidden: tensor<1x128x768xf32>, %attn_norm: tensor<768xf32>, %wq: tensor<768x768xf32>, %wk: tensor<768x768xf32>, %wv: tensor<768x768xf32>,
    %wo: tensor<768x768xf32>, %ffn_norm: tensor<768xf32>, %w_gate: tensor<768x2048xf32>, %w_up: tensor<768x2048xf32>, %w_down: tensor<2048x768xf32>) -> tensor<1x128x768xf32> {
  %n1 = nn.rms_norm %hidden, %attn_norm {eps = 1.0e-06 : f32} : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %q = nn.matmul %n1, %wq : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %k = nn.matmul %n1, %wk : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %v = nn.matmul %n1, %wv : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %ctx = nn.attention %q, %k, %v {num_heads = 12 : i64, head_dim = 64 : i64, causal = true} : tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32> -> tensor<1x128x768xf32>
  %o = nn.matmul %ctx, %wo : tensor<1x128x768xf32>, tensor<768x768xf32> -> tensor<1x128x768xf32>
  %h = nn.add %hidden, %o : tensor<1x128x768xf32>, tensor<1x128x768xf32> -> tensor<1x128x768xf32>
  %n2 = nn.rms_norm %h, %ffn_norm {eps = 1.0e-06 : f32} : tensor<1x128x768xf32>, tensor<768xf32> -> tensor<1x128x768xf32>
  %gate = nn.matmul %n2, %w_gate : tensor<1x128x768xf32>, tensor<768x2048xf32> -> tensor<1x128x2048xf32>
  %up = nn.matmul %n2, %w_up : tensor<1x128x768xf32>, tensor<768x2048xf32> -> tensor<1x128x2048xf32>
  %gate_act = nn.silu %gate : tensor<1x128x2048xf32> -> tensor<1x128x2048xf32>
  %ffn = nn.mul %up, %gate_act : tensor<1x128x2048xf32>, tensor<1x128x2048xf32> -> tensor<1x128x2048xf32>
  %down = nn.matmul %ffn, %w_down : tensor<1x128x2048xf32>, tensor<2048x768xf32> -> tensor<1x128x768xf32>
  %out = nn.add %h, %down : tensor<1x128x768xf32>, tensor<1x128x768xf32> -> tensor<1x128x768xf32>
  func.return %out : tensor<1x128x768xf32>
}
