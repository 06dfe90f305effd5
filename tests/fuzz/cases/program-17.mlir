// found by: fusec-fuzz --seed 17 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<7x16x4xf32>): 10 element(s) differ, first at [0, 4, 1]: got np.float64(0.0), expected np.float64(nan)
func.func @fuzz(%a1: tensor<7x16x4xf32>) -> (tensor<7x16x4xf32>) {
  %v2 = nn.relu %a1 : tensor<7x16x4xf32> -> tensor<7x16x4xf32>
  func.return %v2 : tensor<7x16x4xf32>
}
