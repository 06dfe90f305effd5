// On a GPU a matmul with few output tiles is split along K: the gemm template writes the
// parts' partial products to a [parts, batch, M, N] buffer and gemm_split_sum adds them and
// applies the epilogue (bias, activation). On a CPU (the default) it stays one gemm.
// 9x40 outputs, K = 1031: 4 parts (1031 // 256), the last one shorter. The partial products
// take a slot; the result, returned, is a buffer of its own (memref.alloc).

// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu},plan-buffers' | filecheck %s --check-prefix=GPU
// RUN: fusec-opt %s -t 'opencl{device=gpu}' | filecheck %s --check-prefix=GPU-CL
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu gemm-split-outputs=0},plan-buffers' | filecheck %s --check-prefix=OFF
// RUN: fusec-opt %s -p lower-opencl | filecheck %s --check-prefix=CPU

// GPU-LABEL: func.func @fc(%x: memref<9x1031xf32>, %w: memref<1031x40xf32>, %b: memref<40xf32>) -> memref<9x40xf32> {
// GPU-NEXT:    %[[Y:.*]] = memref.alloc() : memref<9x40xf32>
// GPU-NEXT:    %[[P:.*]] = kernel.alloc slot 0 : memref<4x1x9x40xf32>
// GPU-NEXT:    kernel.template "gemm" {batch = 1 : i64, m = 9 : i64, n = 40 : i64, k = 1031 : i64, rhs_batched = false, split_k = 4 : i64} ins(%x, %w : memref<9x1031xf32>, memref<1031x40xf32>) outs(%[[P]] : memref<4x1x9x40xf32>)
// GPU-NEXT:    kernel.template "gemm_split_sum" {batch = 1 : i64, m = 9 : i64, n = 40 : i64, split_k = 4 : i64} ins(%[[P]] : memref<4x1x9x40xf32>) outs(%[[Y]] : memref<9x40xf32>) extras(%b : memref<40xf32>) epilogue {
// GPU-NEXT:    ^{{.*}}(%acc: f32, %row: index, %col: index, %bias: memref<40xf32>):
// GPU-NEXT:      %[[BIAS:.*]] = memref.load %bias[%col] : memref<40xf32>
// GPU-NEXT:      %[[SUM:.*]] = arith.addf %acc, %[[BIAS]] : f32
// GPU-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// GPU-NEXT:      %[[RELU:.*]] = arith.maximumf %[[SUM]], %[[ZERO]] : f32
// GPU-NEXT:      kernel.yield %[[RELU]] : f32
// GPU-NEXT:    }
// GPU-NEXT:    func.return %[[Y]] : memref<9x40xf32>

// GPU-CL:      // @fc: 2 launches: fc_gemm_0, fc_gemm_split_sum_1
// GPU-CL:      // fc_gemm_0: [1x9x1031] @ [1x1031x40], tiles 4x4v4_g16x16_both16, split along K in 4 parts of 258
// GPU-CL:          const int batch = get_global_id(2) % 1;
// GPU-CL-NEXT:     const int part = get_global_id(2) / 1;
// GPU-CL-NEXT:     const int k_len = min(258, 1031 - part * 258);
// GPU-CL-NEXT:     __global const float *a = lhs + batch * 9279 + part * 258;
// GPU-CL-NEXT:     __global const float *b = rhs + 0 + part * 10320;
// GPU-CL-NEXT:     __global float *c = out + (part * 1 + batch) * 360;
// GPU-CL:          for (int k0 = 0; k0 < k_len; k0 += 16) {
// GPU-CL:      // fc_gemm_split_sum_1: the 4 partial products of a [1x9x40] GEMM added, then its epilogue
// GPU-CL:      __kernel void fc_gemm_split_sum_1(
// GPU-CL-NEXT:     __global const float *restrict partials,
// GPU-CL-NEXT:     __global float *restrict out,
// GPU-CL-NEXT:     __global const float *restrict epi0)
// GPU-CL-NEXT: {
// GPU-CL-NEXT:     const int e = get_global_id(0);
// GPU-CL-NEXT:     if (e >= 360) return;
// GPU-CL-NEXT:     float acc = partials[e];
// GPU-CL-NEXT:     acc += partials[e + 360];
// GPU-CL-NEXT:     acc += partials[e + 720];
// GPU-CL-NEXT:     acc += partials[e + 1080];
// GPU-CL-NEXT:     const int row = e / 40, col = e % 40;
// GPU-CL-NEXT:     out[e] = fc_gemm_split_sum_1_epilogue(acc, row, col, epi0);
// GPU-CL-NEXT: }

// OFF-LABEL: func.func @fc(
// OFF-NEXT:    %[[Y:.*]] = memref.alloc() : memref<9x40xf32>
// OFF-NEXT:    kernel.template "gemm" {batch = 1 : i64, m = 9 : i64, n = 40 : i64, k = 1031 : i64, rhs_batched = false} ins(%x, %w : memref<9x1031xf32>, memref<1031x40xf32>) outs(%[[Y]] : memref<9x40xf32>) extras(%b : memref<40xf32>) epilogue {

// CPU-LABEL: func.func @fc(
// CPU-NEXT:    %[[Y:.*]] = memref.alloc() : memref<9x40xf32>
// CPU-NEXT:    kernel.template "gemm" {batch = 1 : i64, m = 9 : i64, n = 40 : i64, k = 1031 : i64, rhs_batched = false} ins(%x, %w : memref<9x1031xf32>, memref<1031x40xf32>) outs(%[[Y]] : memref<9x40xf32>) extras(%b : memref<40xf32>) epilogue {

func.func @fc(%x: tensor<9x1031xf32>, %w: tensor<1031x40xf32>, %b: tensor<40xf32>) -> tensor<9x40xf32> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<9x1031xf32>, tensor<1031x40xf32>, tensor<40xf32> -> tensor<9x40xf32>
  func.return %y : tensor<9x40xf32>
}
