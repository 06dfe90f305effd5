// found by: fusec-fuzz --seed 9 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<1xf32>): 1 element(s) differ, first at [0]: got np.float64(inf), expected np.float64(nan)
func.func @fuzz(%a5: tensor<9x1xf32>, %a7: tensor<8x1x1xf32>, %v4: tensor<8x9x1xf32>) -> (tensor<1xf32>) {
  %v6 = nn.min %a5, %v4 : tensor<9x1xf32>, tensor<8x9x1xf32> -> tensor<8x9x1xf32>
  %v8 = nn.matmul %v6, %a7 : tensor<8x9x1xf32>, tensor<8x1x1xf32> -> tensor<8x9x1xf32>
  %v9 = nn.reduce_sum %v8 {axes = array<i64: -3, -2>} : tensor<8x9x1xf32> -> tensor<1xf32>
  func.return %v9 : tensor<1xf32>
}
