// Remarks of fuse-swiglu on the cases of fuse-swiglu.mlir: one missed remark per negative case, in order,
// naming the guard that stopped it; an applied remark per fusion.
// RUN: fusec-opt %S/fuse-swiglu.mlir -p fuse-swiglu --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s
// RUN: fusec-opt %S/fuse-swiglu.mlir -p fuse-swiglu --split-input-file --remarks=applied 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED

// CHECK: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the up narrow's result has 2 uses
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the gate narrow's result is returned by the function
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the silu result is returned by the function
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the narrows are not the two halves of their tensor
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the narrows are not the two halves of their tensor
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the narrows are not the two halves of their tensor
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the narrows slice different tensors
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: a narrow is not over the last axis
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the narrows are not the two halves of their tensor
// CHECK-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] not fused: the silu's input is not a narrow
// CHECK-NOT: remark

// APPLIED: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] fused #0: fused.swiglu
// APPLIED-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] fused #1: fused.swiglu
// APPLIED-NEXT: fuse-swiglu.mlir:{{[0-9]+}}:3: remark: [fuse-swiglu] fused #2: fused.swiglu
// APPLIED-NOT: remark
