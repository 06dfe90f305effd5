// Remarks of fuse-swiglu-dual-matmul on the cases of fuse-swiglu-dual-matmul.mlir: one missed remark per negative case, in order,
// naming the guard that stopped it; an applied remark per fusion.
// RUN: fusec-opt %S/fuse-swiglu-dual-matmul.mlir -p fuse-swiglu-dual-matmul --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-swiglu-dual-matmul.mlir -p fuse-swiglu-dual-matmul --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the gate matmul result has 2 uses
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the up matmul result is returned by the function
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the silu result is returned by the function
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the gate and up matmuls read different inputs
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the gate and up weights are not 2-D of one shape
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the gate and up weights are not 2-D of one shape
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the up matmul result has 2 uses
// CHECK-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] not fused: the silu's input is not a matmul
// CHECK-NOT: remark

// APPLIED: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] fused #0: concat + nn.matmul + fused.swiglu
// APPLIED-NEXT: fuse-swiglu-dual-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu-dual-matmul] fused #1: concat + nn.matmul + fused.swiglu
// APPLIED-NOT: remark
