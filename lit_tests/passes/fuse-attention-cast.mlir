// RUN: fusec-opt %s -p fuse-attention-cast --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-attention-cast --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// The cast to f32 of an f16 attention: the attention stores f32 (its result rounded to f16,
// then widened: the same numbers), one launch less.
// CHECK-LABEL: func.func @widened
// CHECK-NEXT:    %[[A:.*]] = nn.attention %q, %k, %v mask %m {num_heads = 2 : i64, head_dim = 8 : i64, causal = true, scale = 2.500000e-01 : f32, num_kv_heads = 1 : i64} : tensor<1x4x16xf16>, tensor<1x4x8xf16>, tensor<1x4x8xf16>, tensor<1x4xi32> -> tensor<1x4x16xf32>
// CHECK-NEXT:    func.return %[[A]] : tensor<1x4x16xf32>
// REMARK: fuse-attention-cast.mlir:[[# @LINE + 3]]:3: remark: [fuse-attention-cast] fused #0: nn.attention
func.func @widened(%q: tensor<1x4x16xf16>, %k: tensor<1x4x8xf16>, %v: tensor<1x4x8xf16>, %m: tensor<1x4xi32>) -> tensor<1x4x16xf32> {
  %a = nn.attention %q, %k, %v mask %m {num_heads = 2 : i64, head_dim = 8 : i64, causal = true, scale = 0.25 : f32, num_kv_heads = 1 : i64} : tensor<1x4x16xf16>, tensor<1x4x8xf16>, tensor<1x4x8xf16>, tensor<1x4xi32> -> tensor<1x4x16xf16>
  %c = nn.cast %a : tensor<1x4x16xf16> -> tensor<1x4x16xf32>
  func.return %c : tensor<1x4x16xf32>
}

// -----

// bf16 alike, with a sliding window.
// CHECK-LABEL: func.func @widened_bf16_window
// CHECK-NEXT:    nn.attention %q, %q, %q {num_heads = 2 : i64, head_dim = 8 : i64, causal = true, window = 2 : i64} : tensor<1x4x16xbf16>, tensor<1x4x16xbf16>, tensor<1x4x16xbf16> -> tensor<1x4x16xf32>
// CHECK-NEXT:    func.return
func.func @widened_bf16_window(%q: tensor<1x4x16xbf16>) -> tensor<1x4x16xf32> {
  %a = nn.attention %q, %q, %q {num_heads = 2 : i64, head_dim = 8 : i64, causal = true, window = 2 : i64} : tensor<1x4x16xbf16>, tensor<1x4x16xbf16>, tensor<1x4x16xbf16> -> tensor<1x4x16xbf16>
  %c = nn.cast %a : tensor<1x4x16xbf16> -> tensor<1x4x16xf32>
  func.return %c : tensor<1x4x16xf32>
}

// -----

// The attention result read by something else too stays as it is, and so does the cast.
// CHECK-LABEL: func.func @negative_shared
// CHECK-NEXT:    nn.attention {{.*}} -> tensor<1x4x16xf16>
// CHECK-NEXT:    nn.cast
// REMARK: fuse-attention-cast.mlir:[[# @LINE + 3]]:3: remark: [fuse-attention-cast] not fused: the attention result is returned by the function
func.func @negative_shared(%q: tensor<1x4x16xf16>) -> (tensor<1x4x16xf32>, tensor<1x4x16xf16>) {
  %a = nn.attention %q, %q, %q {num_heads = 2 : i64, head_dim = 8 : i64} : tensor<1x4x16xf16>, tensor<1x4x16xf16>, tensor<1x4x16xf16> -> tensor<1x4x16xf16>
  %c = nn.cast %a : tensor<1x4x16xf16> -> tensor<1x4x16xf32>
  func.return %c, %a : tensor<1x4x16xf32>, tensor<1x4x16xf16>
}

// -----

// A cast to another type than f32 is not stored by the attention.
// CHECK-LABEL: func.func @negative_to_bf16
// CHECK-NEXT:    nn.attention {{.*}} -> tensor<1x4x16xf16>
// CHECK-NEXT:    nn.cast
// REMARK: fuse-attention-cast.mlir:[[# @LINE + 3]]:3: remark: [fuse-attention-cast] not fused: the cast is not to f32
func.func @negative_to_bf16(%q: tensor<1x4x16xf16>) -> tensor<1x4x16xbf16> {
  %a = nn.attention %q, %q, %q {num_heads = 2 : i64, head_dim = 8 : i64} : tensor<1x4x16xf16>, tensor<1x4x16xf16>, tensor<1x4x16xf16> -> tensor<1x4x16xf16>
  %c = nn.cast %a : tensor<1x4x16xf16> -> tensor<1x4x16xbf16>
  func.return %c : tensor<1x4x16xbf16>
}

// -----

// An f32 attention's cast (to f16) is another thing: nothing to store wider.
// CHECK-LABEL: func.func @negative_f32_attention
// CHECK-NEXT:    nn.attention {{.*}} -> tensor<1x4x16xf32>
// CHECK-NEXT:    nn.cast
// REMARK: fuse-attention-cast.mlir:[[# @LINE + 3]]:3: remark: [fuse-attention-cast] not fused: the cast is not to f32
func.func @negative_f32_attention(%q: tensor<1x4x16xf32>) -> tensor<1x4x16xf16> {
  %a = nn.attention %q, %q, %q {num_heads = 2 : i64, head_dim = 8 : i64} : tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32> -> tensor<1x4x16xf32>
  %c = nn.cast %a : tensor<1x4x16xf32> -> tensor<1x4x16xf16>
  func.return %c : tensor<1x4x16xf16>
}
