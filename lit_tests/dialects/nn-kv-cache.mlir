// nn.cache_update, nn.cache_attention and nn.argmax (text generation with a KV cache): custom
// form and the round trip through the generic form (nn-kv-cache-invalid.mlir holds the
// verifier messages), and a donated argument (fusec.aliasing_output) kept on the function.

// RUN: fusec-opt %s --split-input-file | filecheck %s
// RUN: FUSEC_ROUNDTRIP
// RUN: fusec-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @step(%k_cache: tensor<1x16x8xf32> {fusec.aliasing_output = 0 : i64}, %k: tensor<1x2x8xf32>, %q: tensor<1x2x32xf32>, %pos: tensor<i32>) -> tensor<1x16x8xf32>
// CHECK-NEXT:    %updated = nn.cache_update %k_cache, %k, %pos : tensor<1x16x8xf32>, tensor<1x2x8xf32>, tensor<i32> -> tensor<1x16x8xf32>
// CHECK-NEXT:    %out = nn.cache_attention %q, %updated, %updated, %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64} : tensor<1x2x32xf32>, tensor<1x16x8xf32>, tensor<1x16x8xf32>, tensor<i32> -> tensor<1x2x32xf32>
// CHECK-NEXT:    %scaled = nn.cache_attention %q, %updated, %updated, %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64, scale = 5.000000e-01 : f32} : tensor<1x2x32xf32>, tensor<1x16x8xf32>, tensor<1x16x8xf32>, tensor<i32> -> tensor<1x2x32xf32>
// CHECK-NEXT:    %token = nn.argmax %out : tensor<1x2x32xf32> -> tensor<1x2xi32>
// CHECK-NEXT:    %first = nn.argmax %out {axis = 1 : i64} : tensor<1x2x32xf32> -> tensor<1x32xi32>
// GENERIC-LABEL: "func.func"() <{sym_name = "step"
// GENERIC-SAME:  arg_attrs = [{fusec.aliasing_output = 0 : i64}, {}, {}, {}]
// GENERIC:       "nn.cache_update"(%k_cache, %k, %pos) <{axis = 1 : i64}> : (tensor<1x16x8xf32>, tensor<1x2x8xf32>, tensor<i32>) -> tensor<1x16x8xf32>
// GENERIC:       "nn.cache_attention"(%q, %updated, %updated, %pos) <{num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64}> : (tensor<1x2x32xf32>, tensor<1x16x8xf32>, tensor<1x16x8xf32>, tensor<i32>) -> tensor<1x2x32xf32>
// GENERIC:       "nn.argmax"(%out) <{axis = -1 : i64}> : (tensor<1x2x32xf32>) -> tensor<1x2xi32>
func.func @step(%k_cache: tensor<1x16x8xf32> {fusec.aliasing_output = 0 : i64}, %k: tensor<1x2x8xf32>, %q: tensor<1x2x32xf32>, %pos: tensor<i32>) -> tensor<1x16x8xf32> {
  %updated = nn.cache_update %k_cache, %k, %pos : tensor<1x16x8xf32>, tensor<1x2x8xf32>, tensor<i32> -> tensor<1x16x8xf32>
  %out = nn.cache_attention %q, %updated, %updated, %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64} : tensor<1x2x32xf32>, tensor<1x16x8xf32>, tensor<1x16x8xf32>, tensor<i32> -> tensor<1x2x32xf32>
  %scaled = nn.cache_attention %q, %updated, %updated, %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64, scale = 0.5 : f32} : tensor<1x2x32xf32>, tensor<1x16x8xf32>, tensor<1x16x8xf32>, tensor<i32> -> tensor<1x2x32xf32>
  %token = nn.argmax %out : tensor<1x2x32xf32> -> tensor<1x2xi32>
  %first = nn.argmax %out {axis = 1 : i64} : tensor<1x2x32xf32> -> tensor<1x32xi32>
  func.return %updated : tensor<1x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @other_axis
// CHECK-NEXT:    %{{.*}} = nn.cache_update %c, %u, %pos {axis = 2 : i64} : tensor<2x4x16xf16>, tensor<2x4x3xf16>, tensor<i32> -> tensor<2x4x16xf16>
func.func @other_axis(%c: tensor<2x4x16xf16>, %u: tensor<2x4x3xf16>, %pos: tensor<i32>) -> tensor<2x4x16xf16> {
  %0 = nn.cache_update %c, %u, %pos {axis = 2 : i64} : tensor<2x4x16xf16>, tensor<2x4x3xf16>, tensor<i32> -> tensor<2x4x16xf16>
  func.return %0 : tensor<2x4x16xf16>
}
