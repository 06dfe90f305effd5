func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = nn.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
