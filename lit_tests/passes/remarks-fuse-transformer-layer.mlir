// Remarks of fuse-transformer-layer on the cases of fuse-transformer-layer.mlir: one missed remark per negative case, in order,
// naming the guard that stopped it; an applied remark per fusion.
// RUN: fusec-opt %S/fuse-transformer-layer.mlir -p fuse-transformer-layer --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-transformer-layer.mlir -p fuse-transformer-layer --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: batch * seq = 128 is over max-tokens=64
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the attention_block result is returned by the function
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the first norm's result has 3 uses (the FFN and the residual add only)
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the first norm's result has 3 uses (the FFN and the residual add only)
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the FFN's activation is returned by the function
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the FFN output is returned by the function
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the FFN's first projection is not a matmul_bias_act with an activation and a 1-D bias
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the FFN's second projection has an activation or a bias that is not 1-D
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the attention_block does not read the residual it is added to
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the FFN does not read the residual it is added to
// CHECK-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] not fused: the FFN's first projection is not a matmul_bias_act with an activation and a 1-D bias
// CHECK-NOT: remark

// APPLIED: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] fused #0: fused.transformer_layer
// APPLIED-NEXT: fuse-transformer-layer.mlir:{{[0-9]+}}:3: remark: [fuse-transformer-layer] fused #1: fused.transformer_layer
// APPLIED-NOT: remark
