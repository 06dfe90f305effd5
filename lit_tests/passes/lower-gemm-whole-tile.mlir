// A product of too few outputs to fill a GPU is split along K (a partials buffer, then a
// second kernel adds the parts), unless the device runs whole tiles of it on a kernel that
// fills it without a split (gemm-whole-tile: Hopper's wgmma, 128): then one gemm, whole. A K
// that is not a multiple of 64 (@odd_k) is split as before.
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=SPLIT
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu gemm-whole-tile=128}' | filecheck %s --check-prefix=WHOLE

func.func @whole(%x: tensor<512x768xf16>, %w: tensor<768x768xf16>) -> tensor<512x768xf16> {
  %y = nn.matmul %x, %w : tensor<512x768xf16>, tensor<768x768xf16> -> tensor<512x768xf16>
  func.return %y : tensor<512x768xf16>
}
// SPLIT-LABEL: func.func @whole
// SPLIT: kernel.template "gemm"
// SPLIT-SAME: split_k = 2
// SPLIT: kernel.template "gemm_split_sum"
// WHOLE-LABEL: func.func @whole
// WHOLE: kernel.template "gemm"
// WHOLE-NOT: split_k
// WHOLE-NOT: gemm_split_sum
// WHOLE: func.return

func.func @odd_k(%x: tensor<512x720xf16>, %w: tensor<720x768xf16>) -> tensor<512x768xf16> {
  %y = nn.matmul %x, %w : tensor<512x720xf16>, tensor<720x768xf16> -> tensor<512x768xf16>
  func.return %y : tensor<512x768xf16>
}
// SPLIT-LABEL: func.func @odd_k
// SPLIT: kernel.template "gemm_split_sum"
// WHOLE-LABEL: func.func @odd_k
// WHOLE: kernel.template "gemm"
// WHOLE-SAME: split_k = 2
// WHOLE: kernel.template "gemm_split_sum"
