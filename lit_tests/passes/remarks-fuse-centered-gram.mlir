// Remarks of fuse-centered-gram on the cases of fuse-centered-gram.mlir: one missed remark per
// negative case, in order, naming the guard that stopped it (none for a plain x^T x, which is
// no candidate); an applied remark per fusion.
// RUN: fusec-opt %S/fuse-centered-gram.mlir -p fuse-centered-gram --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-centered-gram.mlir -p fuse-centered-gram --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] not fused: the reduce_mean is over axes [1], not the rows (axis 0)
// CHECK-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] not fused: the column sum is divided by 4, not the row count 5
// CHECK-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] not fused: the column sum is multiplied by 0.25, not 1/5 (the row count's reciprocal)
// CHECK-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] not fused: the subtracted column mean is of another tensor
// CHECK-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] not fused: the matmul's operands are not the centering of one tensor
// CHECK-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] not fused: x is tensor<5x3xf16>; the kernel computes on f32 only
// CHECK-NOT: remark

// APPLIED: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] fused #0: fused.centered_gram
// APPLIED-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] fused #1: fused.centered_gram
// APPLIED-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] fused #2: fused.centered_gram
// APPLIED-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] fused #3: fused.centered_gram
// APPLIED-NEXT: fuse-centered-gram.mlir:{{[0-9]+}}:3: remark: [fuse-centered-gram] fused #4: fused.centered_gram
// APPLIED-NOT: remark
