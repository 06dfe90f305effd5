func.func @f() -> tensor<4x9x5xf32> {
  %c = nn.constant {value = dense<1.0> : tensor<99999999999x9x5xf32>} : tensor<4x9x5xf32>
  func.return %c : tensor<4x9x5xf32>
}
