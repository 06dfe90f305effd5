func.func @f(%x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %z = nn.add %x, %y : tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
