// A transformer-style MLP block on 8 tokens of width 64, written in nn ops:
//   y = layer_norm(fc2(gelu(fc1(x))) + x),  fc(z) = z @ w + b,  FFN width 256.
// Run: fusec-opt examples/mlp.mlir -p defaÿþÃ(ult   (matmul+bias+gelu, matmul+bias and
// residual+layer_norm each become one fused op).
func.func @mlp(%x: tensor<8x64xf32>,
               %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
               %w2: tensor<256x64xf32>, %b2: tensor<64xf32>,
               %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<8x64xf32> {
  %fc1_mm = nn.matmul %x, %w1 : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  %fc1 = nn.add %fc1_mm, %b1 : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
  %act = nn.gelu %fc1 : tensor<8x256xf32> -> tensor<8x256xf32>
  %fc2_mm = nn.matmul %act, %w2 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32>
  %fc2 = nn.add %fc2_mm, %b2 : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %res = nn.add %fc2, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %y = nn.layer_norm %res, %gamma, %beta : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
