// found by: fusec-fuzz --seed 14 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<4xf32>): 3 element(s) differ, first at [0]: got np.float64(-inf), expected np.float64(nan)
func.func @fuzz(%v3: tensor<9x4x17xf32>) -> (tensor<4xf32>) {
  %v4 = nn.reduce_min %v3 {axes = array<i64: -3, 2>} : tensor<9x4x17xf32> -> tensor<4xf32>
  func.return %v4 : tensor<4xf32>
}
