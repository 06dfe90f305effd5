// Remarks of fuse-reductions on the cases of fuse-reductions.mlir: one missed remark per negative case, in order,
// naming the guard that stopped it; an applied remark per fusion.
// RUN: fusec-opt %S/fuse-reductions.mlir -p fuse-reductions --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-reductions.mlir -p fuse-reductions --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] not fused: the nn.exp result is returned by the function
// CHECK-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] not fused: the nn.exp result has 3 uses
// CHECK-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] not fused: the nn.mul broadcasts its inputs to a larger shape
// CHECK-NOT: remark

// APPLIED: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #0: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #1: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #2: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #3: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #4: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #5: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #6: fused.reduce
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #7: fused.reduce (a copy of the nn.exp its sibling reductions also read)
// APPLIED-NEXT: fuse-reductions.mlir:{{[0-9]+}}:3: remark: [fuse-reductions] fused #8: fused.reduce{{$}}
// APPLIED-NOT: remark
