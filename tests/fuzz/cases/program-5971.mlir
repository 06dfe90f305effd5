// found by: fusec-fuzz --seed 5971 --count 1
// edge-value inputs: yes
// error (default): <fuzz>:3:3: error: lower-to-kernels: cannot lower 'fused.row_reduce': the 'row_reduce' kernel reads and writes f32 only, got tensor<8x1xi1>
func.func @fuzz(%a12: tensor<8x1xf32>, %v11: tensor<8x1xi1>, %v3: tensor<8x1xf32>) -> (tensor<8x1xf32>) {
  %v4 = nn.reduce_mean %v3 {axes = array<i64: 1>, keepdims = true} : tensor<8x1xf32> -> tensor<8x1xf32>
  %v13 = nn.where %v11, %v4, %a12 : tensor<8x1xi1>, tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  func.return %v13 : tensor<8x1xf32>
}
