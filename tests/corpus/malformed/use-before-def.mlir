func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = nn.relu %a : tensor<4xf32> -> tensor<4xf32>
  %a = nn.neg %x : tensor<4xf32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
