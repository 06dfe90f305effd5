// On a GPU a kernel without a reduction runs in work-groups of 256 (gpu-pointwise-local-size),
// a work-group reduction in groups of local-size (64); a CPU keeps 64 for both.

// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=GPU
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu gpu-pointwise-local-size=128}' | filecheck %s --check-prefix=GPU128
// RUN: fusec-opt %s -p lower-to-kernels | filecheck %s --check-prefix=CPU

// GPU: kernel.launch @f_tanh_0({{.*}}) {global_size = array<i64: 16384>, local_size = array<i64: 256>}
// GPU: kernel.launch @f_reduce_sum_1({{.*}}local_size = array<i64: 64>}
// GPU128: kernel.launch @f_tanh_0({{.*}}local_size = array<i64: 128>}
// CPU: kernel.launch @f_tanh_0({{.*}}local_size = array<i64: 64>}
func.func @f(%a: tensor<64x1024xf32>) -> (tensor<64x1024xf32>, tensor<64xf32>) {
  %0 = nn.tanh %a : tensor<64x1024xf32> -> tensor<64x1024xf32>
  %1 = nn.reduce_sum %a {axes = array<i64: 1>} : tensor<64x1024xf32> -> tensor<64xf32>
  func.return %0, %1 : tensor<64x1024xf32>, tensor<64xf32>
}
