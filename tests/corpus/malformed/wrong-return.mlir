func.func @f(%x: tensor<4xf32>) -> tensor<5xf32> {
  func.return %x : tensor<4xf32>
}
