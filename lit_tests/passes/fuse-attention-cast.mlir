// RUN: fusec-opt %s -p fuse-attention-cast --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-attention-cast --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: fusec-opt %s -p fuse-attention-cast,fuse-matmul-bias-act,fuse-attention-block --split-input-file | filecheck %s --check-prefix=BLOCK
// RUN: fusec-opt %s -p fuse-attention-cast,fuse-matmul-bias-act,fuse-attention-block --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s --check-prefix=BLOCK-REMARK

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

// -----

// An attention stored widened is not taken into a fused.attention_block (whose projections
// share one type): the block stays as fuse-attention-cast left it.
// CHECK-LABEL: func.func @widened_then_projected
// BLOCK-LABEL: func.func @widened_then_projected
// BLOCK:         nn.attention {{.*}} -> tensor<1x8x32xf32>
// BLOCK-NEXT:    fused.matmul_bias_act
// BLOCK-NOT:     fused.attention_block
// BLOCK-REMARK: fuse-attention-cast.mlir:[[# @LINE + 10]]:3: remark: [fuse-attention-block] not fused: the attention stores its result widened (fuse-attention-cast)
func.func @widened_then_projected(%x: tensor<1x8x32xf16>, %wqkv: tensor<32x96xf16>, %bqkv: tensor<96xf16>, %m: tensor<1x8xi32>, %wo: tensor<32x32xf32>, %bo: tensor<32xf32>) -> tensor<1x8x32xf32> {
  %qkv0 = nn.matmul %x, %wqkv : tensor<1x8x32xf16>, tensor<32x96xf16> -> tensor<1x8x96xf16>
  %qkv = nn.add %qkv0, %bqkv : tensor<1x8x96xf16>, tensor<96xf16> -> tensor<1x8x96xf16>
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 32 : i64} : tensor<1x8x96xf16> -> tensor<1x8x32xf16>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 32 : i64} : tensor<1x8x96xf16> -> tensor<1x8x32xf16>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 64 : i64, length = 32 : i64} : tensor<1x8x96xf16> -> tensor<1x8x32xf16>
  %a = nn.attention %q, %k, %v mask %m {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x8x32xf16>, tensor<1x8x32xf16>, tensor<1x8x32xf16>, tensor<1x8xi32> -> tensor<1x8x32xf16>
  %c = nn.cast %a : tensor<1x8x32xf16> -> tensor<1x8x32xf32>
  %o0 = nn.matmul %c, %wo : tensor<1x8x32xf32>, tensor<32x32xf32> -> tensor<1x8x32xf32>
  %o = nn.add %o0, %bo : tensor<1x8x32xf32>, tensor<32xf32> -> tensor<1x8x32xf32>
  func.return %o : tensor<1x8x32xf32>
}
