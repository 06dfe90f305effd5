// found by: fusec-fuzz --seed 600508 --count 1
// edge-value inputs: no
// mismatch (default vs reference): result0 (tensor<33x7x4xf32>): 61 element(s) differ, first at [0, 1, 3]: got np.float64(-0.0), expected np.float64(nan)
func.func @fuzz(%a3: tensor<7x4xf32>, %a6: tensor<1x1xf32>, %a8: tensor<33x7x4xf32>) -> (tensor<33x7x4xf32>) {
  %v7 = nn.div %a6, %a3 : tensor<1x1xf32>, tensor<7x4xf32> -> tensor<7x4xf32>
  %v9 = nn.add %v7, %a8 : tensor<7x4xf32>, tensor<33x7x4xf32> -> tensor<33x7x4xf32>
  %v10 = nn.gelu %v9 {approximate = "tanh"} : tensor<33x7x4xf32> -> tensor<33x7x4xf32>
  %v12 = nn.sqrt %v10 : tensor<33x7x4xf32> -> tensor<33x7x4xf32>
  func.return %v12 : tensor<33x7x4xf32>
}
