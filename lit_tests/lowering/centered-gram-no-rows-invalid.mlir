// A centered Gram of no rows is one located error (the mean of no rows is undefined, as
// nn.reduce_mean's verifier says of the un-fused program), not a result of uninitialised
// memory. (One of no columns is an empty result: allocated, nothing lowered.)

// RUN: not fusec-opt %s -p lower-to-kernels 2>&1 | filecheck %s
// RUN: not fusec-opt %s -p 'lower-to-kernels{device=gpu}' 2>&1 | filecheck %s

func.func @no_rows(%x: tensor<0x3xf32>) -> tensor<3x3xf32> {
  // CHECK: centered-gram-no-rows-invalid.mlir:[[# @LINE + 1]]:3: error: lower-to-kernels: cannot lower 'fused.centered_gram': 'fused.centered_gram' of tensor<0x3xf32> has no rows: their mean is undefined
  %g = fused.centered_gram %x {scale = 0.5 : f32} : tensor<0x3xf32> -> tensor<3x3xf32>
  func.return %g : tensor<3x3xf32>
}
