// Remarks of fuse-power-step-normalize on the cases of fuse-power-step-normalize.mlir: one
// missed remark per negative case, in order, naming the guard that stopped it; an applied
// remark per fusion.
// RUN: fusec-opt %S/fuse-power-step-normalize.mlir -p fuse-power-step-normalize --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-power-step-normalize.mlir -p fuse-power-step-normalize --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: the reduce_sum is over axes [1], not the rows (axis 0)
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: the mean of squares is multiplied by 4, not the row count 5
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: the norm is of another tensor than the divided product
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: eps (-0.5) is not a finite constant >= 0
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: the norm is added to a tensor, not to a scalar eps
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: the product is returned by the function
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: the sqrt result is returned by the function
// CHECK-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] not fused: a is tensor<2x4x4xf32>; the kernel takes a matrix (rank 2)
// CHECK-NOT: remark

// APPLIED: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] fused #0: fused.power_step_normalize
// APPLIED-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] fused #1: fused.power_step_normalize
// APPLIED-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] fused #2: fused.power_step_normalize
// APPLIED-NEXT: fuse-power-step-normalize.mlir:{{[0-9]+}}:3: remark: [fuse-power-step-normalize] fused #3: fused.power_step_normalize
// APPLIED-NOT: remark
