// nn.cache_attention and nn.argmax in lower-to-kernels: on a CPU one cache_attention launch
// (a work-item per query, q read in place from the packed q/k/v) and a work-item per argmax
// row; on a GPU the cache is split into chunks of 64 keys, a work-group each
// (cache_attention_split, then cache_attention_combine) and a work-group of 1024 per row.

// RUN: fusec-opt %s -p lower-to-kernels | filecheck %s
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @decode(
// CHECK:         kernel.template "cache_attention" {batch = 1 : i64, seq_q = 1 : i64, seq_k = 1024 : i64, num_heads = 8 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.500000e-01 : f32, q_row_stride = 192 : i64, q_offset = 0 : i64} ins(%qkv, %k_cache, %v_cache, %pos : memref<1x1x192xf32>, memref<1x1024x32xf32>, memref<1x1024x32xf32>, memref<i32>) outs(%{{.*}} : memref<1x1x128xf32>)
// CHECK:         kernel.template "argmax" {rows = 1 : i64, cols = 128 : i64, dtype = "f32", group = 1 : i64}
// GPU-LABEL: func.func @decode(
// GPU:         %partial = memref.alloc() : memref<8x16x16xf32>
// GPU-NEXT:    %stats = memref.alloc() : memref<8x16x2xf32>
// GPU-NEXT:    kernel.template "cache_attention_split" {{{.*}}splits = 16 : i64, q_row_stride = 192 : i64, q_offset = 0 : i64} ins(%qkv, %k_cache, %v_cache, %pos : {{.*}}) outs(%partial, %stats : memref<8x16x16xf32>, memref<8x16x2xf32>)
// GPU-NEXT:    kernel.template "cache_attention_combine" {rows = 8 : i64, head_dim = 16 : i64, splits = 16 : i64} ins(%partial, %stats : memref<8x16x16xf32>, memref<8x16x2xf32>) outs(%{{.*}} : memref<1x1x128xf32>)
// GPU:         kernel.template "argmax" {rows = 1 : i64, cols = 128 : i64, dtype = "f32", group = 1024 : i64}
func.func @decode(%qkv: tensor<1x1x192xf32>, %k_cache: tensor<1x1024x32xf32>, %v_cache: tensor<1x1024x32xf32>, %pos: tensor<i32>) -> tensor<1x1xi32> {
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 128 : i64} : tensor<1x1x192xf32> -> tensor<1x1x128xf32>
  %ctx = nn.cache_attention %q, %k_cache, %v_cache, %pos {num_heads = 8 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64} : tensor<1x1x128xf32>, tensor<1x1024x32xf32>, tensor<1x1024x32xf32>, tensor<i32> -> tensor<1x1x128xf32>
  %next = nn.argmax %ctx : tensor<1x1x128xf32> -> tensor<1x1xi32>
  func.return %next : tensor<1x1xi32>
}
