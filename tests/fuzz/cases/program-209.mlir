// found by: fusec-fuzz --seed 209 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<f32>): 1 element(s) differ, first at []: got np.float64(inf), expected np.float64(nan)
func.func @fuzz(%a6: tensor<33x3x17xf32>) -> (tensor<f32>) {
  %v10 = nn.reduce_max %a6 {axes = array<i64: 0, 1, 2>} : tensor<33x3x17xf32> -> tensor<f32>
  func.return %v10 : tensor<f32>
}
