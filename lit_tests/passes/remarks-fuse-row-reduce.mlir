// Remarks of fuse-row-reduce on the cases of fuse-row-reduce.mlir: an applied remark per
// region (naming the axis when it is not the last), a missed remark for a reduction over
// another axis than the region's.
// RUN: fusec-opt %S/fuse-row-reduce.mlir -p fuse-row-reduce --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-row-reduce.mlir -p fuse-row-reduce --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] not fused: the reduction is over axis 0 and the row region's other reductions over axis 1
// CHECK-NOT: remark

// APPLIED: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] fused #0: fused.row_reduce of 5 ops{{$}}
// APPLIED-NEXT: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] fused #1: fused.row_reduce of 3 ops{{$}}
// APPLIED-NEXT: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] fused #2: fused.row_reduce of 2 ops{{$}}
// APPLIED-NEXT: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] fused #3: fused.row_reduce of 6 ops over axis 0
// APPLIED-NEXT: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] fused #4: fused.row_reduce of 2 ops over axis 1
// APPLIED-NEXT: fuse-row-reduce.mlir:{{[0-9]+}}:3: remark: [fuse-row-reduce] fused #5: fused.row_reduce of 3 ops{{$}}
// APPLIED-NOT: remark
