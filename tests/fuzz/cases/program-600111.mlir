// found by: fusec-fuzz --seed 600111 --count 1
// edge-value inputs: yes
// error (default): <fuzz>:2:3: error: 'nn.matmul' lhs (tensor<4xf32>) must have rank >= 2, as [..., M, K] (after pass 'canonicalize-nn')
func.func @fuzz(%a25: tensor<4x7xf32>, %v22: tensor<1x1x4xf32>, %v14: tensor<f32>) -> (tensor<7xf32>) {
  %v26 = nn.matmul %v22, %a25 : tensor<1x1x4xf32>, tensor<4x7xf32> -> tensor<1x1x7xf32>
  %v29 = nn.reshape %v26 : tensor<1x1x7xf32> -> tensor<7xf32>
  %v30 = nn.min %v14, %v29 : tensor<f32>, tensor<7xf32> -> tensor<7xf32>
  func.return %v30 : tensor<7xf32>
}
