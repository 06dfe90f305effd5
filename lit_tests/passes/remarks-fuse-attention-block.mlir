// Remarks of fuse-attention-block on the cases of fuse-attention-block.mlir: one missed remark per negative case, in order,
// naming the guard that stopped it; an applied remark per fusion.
// RUN: fusec-opt %S/fuse-attention-block.mlir -p fuse-attention-block --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-attention-block.mlir -p fuse-attention-block --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: batch * seq = 128 is over max-tokens=64
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the attention has no mask
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the attention is causal
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the attention has an explicit scale
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the QKV projection is not a matmul_bias_act without activation
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the output projection has an activation or a bias that is not 1-D
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the QKV projection has 4 uses, not 3
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the k narrow is returned by the function
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the attention result is returned by the function
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the attention result has 2 uses
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the q narrow is not [0, 32) of the projection
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the QKV projection is not 96 wide
// CHECK-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] not fused: the QKV projection is not a matmul_bias_act without activation
// CHECK-NOT: remark

// APPLIED: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] fused #0: fused.attention_block
// APPLIED-NEXT: fuse-attention-block.mlir:{{[0-9]+}}:3: remark: [fuse-attention-block] fused #1: fused.attention_block
// APPLIED-NOT: remark
