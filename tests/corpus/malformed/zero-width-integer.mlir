func.func @f(%a: tensor<4xf32>) -> tensor<f32> {
  %m = nn.reduce_max %a {axes = array<i0: 0>} : tensor<4xf32> -> tensor<f32>
  func.return %m : tensor<f32>
}
