func.func @g(%x: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
