// Remarks of fuse-shared-input-matmul on the cases of fuse-shared-input-matmul.mlir: one missed remark per negative case, in order,
// naming the guard that stopped it; an applied remark per fusion.
// RUN: fusec-opt %S/fuse-shared-input-matmul.mlir -p fuse-shared-input-matmul --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-shared-input-matmul.mlir -p fuse-shared-input-matmul --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other matmul of its input can merge with it: its weight is not available before their results are read
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other matmul of its input has a 2-D weight
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: the weight tensor<2x4x4xf32> is not 2-D
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other matmul of its input can merge with it: its weight is not available before their results are read
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other matmul of its input can merge with it: its weight is not available before their results are read
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other matmul of its input can merge with it: its weight is not available before their results are read
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other GEMM of its input is the same op with the same properties (activation)
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other matmul of its input has a 2-D weight
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: a column operand is not as wide as the result (a scalar bias)
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: a column operand is not as wide as the result (a scalar bias)
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other GEMM of its input is the same op with the same properties (activation)
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other GEMM of its input is the same op with the same properties (activation)
// CHECK-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] not fused: no other GEMM of its input is the same op with the same properties (activation)
// CHECK-NOT: remark

// APPLIED: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #0: 2 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #1: 3 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #2: 2 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #3: 4 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #4: 3 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #5: 3 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #6: 3 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #7: 2 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #8: 2 matmuls into one
// APPLIED-NEXT: fuse-shared-input-matmul.mlir:{{[0-9]+}}:3: remark: [fuse-shared-input-matmul] fused #9: 2 matmuls into one
// APPLIED-NOT: remark
