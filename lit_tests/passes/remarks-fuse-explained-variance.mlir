// Remarks of fuse-explained-variance on the cases of fuse-explained-variance.mlir: one missed
// remark per negative case, in order, naming the guard that stopped it; an applied remark per
// fusion.
// RUN: fusec-opt %S/fuse-explained-variance.mlir -p fuse-explained-variance --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-explained-variance.mlir -p fuse-explained-variance --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] not fused: the reduce_sum is over axes [1], not the rows (axis 0)
// CHECK-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] not fused: the product g @ q is multiplied by another tensor than q
// CHECK-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] not fused: the product g @ q is returned by the function
// CHECK-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] not fused: g is tensor<1x4xf32>, not square
// CHECK-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] not fused: the k x k matrix is multiplied by something other than an identity constant
// CHECK-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] not fused: q is tensor<4x2xf16>; the kernel computes on f32 only
// CHECK-NOT: remark

// APPLIED: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] fused #0: fused.explained_variance
// APPLIED-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] fused #1: fused.explained_variance
// APPLIED-NEXT: fuse-explained-variance.mlir:{{[0-9]+}}:3: remark: [fuse-explained-variance] fused #2: fused.explained_variance
// APPLIED-NOT: remark
