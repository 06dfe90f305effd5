// found by: fusec-fuzz --seed 3425 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<32xf32>): 1 element(s) differ, first at [30]: got np.float64(1139851302797312.0), expected np.float64(1060229588451328.0)
func.func @fuzz(%a1: tensor<8x4x9xf32>, %a3: tensor<1x4xf32>, %a11: tensor<4xf32>) -> (tensor<32xf32>) {
  %v2 = nn.reduce_sum %a1 {axes = array<i64: 2>} : tensor<8x4x9xf32> -> tensor<8x4xf32>
  %v4 = nn.mul %a3, %v2 : tensor<1x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %v10 = nn.tanh %v4 : tensor<8x4xf32> -> tensor<8x4xf32>
  %v12 = nn.rms_norm %v10, %a11 : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %v15 = nn.reshape %v12 : tensor<8x4xf32> -> tensor<32xf32>
  func.return %v15 : tensor<32xf32>
}
