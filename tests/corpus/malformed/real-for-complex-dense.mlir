func.func @f() -> (tensor<3x2xf32>) {
  %v1 = nn.constant {value = dense<-2.5> : tensor<3x2xcomplex<f32>>} : tensor<3x2xf32>
  func.return %v1 : tensor<3x2xf32>
}
