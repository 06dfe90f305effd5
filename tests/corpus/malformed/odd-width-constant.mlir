func.func @f() -> tensor<2xi632> {
  %c = nn.constant {value = dense<1> : tensor<2xi632>} : tensor<2xi632>
  func.return %c : tensor<2xi632>
}
