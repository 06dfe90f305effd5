// found by: fusec-fuzz --seed 6004 --count 1
// edge-value inputs: no
// error (default): <fuzz>:3:3: error: lower-to-kernels: cannot lower 'fused.row_reduce': the 'row_reduce' kernel reads and writes f32 only, got tensor<4xi1>
func.func @fuzz(%v5: tensor<4xi1>, %v3: tensor<4xf32>) -> (tensor<4xf32>) {
  %v4 = nn.reduce_mean %v3 {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
  %v6 = nn.where %v5, %v4, %v3 : tensor<4xi1>, tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  func.return %v6 : tensor<4xf32>
}
