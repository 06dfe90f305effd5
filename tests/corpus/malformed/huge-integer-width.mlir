func.func @f(%a: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %b = nn.narrow %a {axis = 1 : i64, start = 0 : i4294967296, length = 2 : i64} : tensor<4x8xf32> -> tensor<4x2xf32>
  func.return %b : tensor<4x2xf32>
}
