func.func @f(%x: tensor<-3xf32>) -> tensor<-3xf32> {
  func.return %x : tensor<-3xf32>
}
