// found by: fusec-fuzz --seed 1878 --count 1
// edge-value inputs: yes
// mismatch (default vs reference): result0 (tensor<7x33xf32>): 2 element(s) differ, first at [1, 30]: got np.float64(inf), expected np.float64(-inf)
func.func @fuzz(%a3: tensor<7x33xf32>, %a7: tensor<1x1xf32>) -> (tensor<7x33xf32>) {
  %v4 = nn.relu %a3 : tensor<7x33xf32> -> tensor<7x33xf32>
  %v8 = nn.div %a7, %v4 : tensor<1x1xf32>, tensor<7x33xf32> -> tensor<7x33xf32>
  func.return %v8 : tensor<7x33xf32>
}
