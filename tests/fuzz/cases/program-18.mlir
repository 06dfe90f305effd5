// found by: fusec-fuzz --seed 18 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<1x1xf32>): 1 element(s) differ, first at [0, 0]: got np.float64(inf), expected np.float64(nan)
func.func @fuzz(%a7: tensor<8x9xf32>) -> (tensor<1x1xf32>) {
  %v8 = nn.transpose %a7 {perm = array<i64: 0, 1>} : tensor<8x9xf32> -> tensor<8x9xf32>
  %v9 = nn.reduce_max %v8 {axes = array<i64: 0, -1>, keepdims = true} : tensor<8x9xf32> -> tensor<1x1xf32>
  func.return %v9 : tensor<1x1xf32>
}
