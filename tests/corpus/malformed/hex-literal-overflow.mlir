func.func @f() -> tensor<2xf16> {
  %c = nn.constant {value = dense<0xff800000> : tensor<2xf16>} : tensor<2xf16>
  func.return %c : tensor<2xf16>
}
