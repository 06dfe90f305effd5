func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = nn.softmax %x {axis = 99999999999999999999 : i64} : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
