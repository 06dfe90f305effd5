// Remarks of fuse-elementwise (at the op left out of its user's region) and of the limits of
// fuse-elementwise and fuse-reductions.
// RUN: fusec-opt %S/fuse-elementwise.mlir -p fuse-elementwise --split-input-file --remarks=missed 2>&1 >/dev/null | filecheck %s --check-prefix=CASES
// CASES:      fuse-elementwise.mlir:{{[0-9]+}}:3: remark: [fuse-elementwise] not fused: its result is also read by nn.log, outside its user's region
// CASES-NEXT: fuse-elementwise.mlir:{{[0-9]+}}:3: remark: [fuse-elementwise] not fused: its result is returned by the function
// CASES-NOT:  remark

// RUN: fusec-opt %s -p 'fuse-elementwise{max-steps=2}' --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=STEPS
// RUN: fusec-opt %s -p 'fuse-elementwise{max-inputs=2}' --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=INPUTS
// RUN: fusec-opt %s -p 'fuse-reductions{max-steps=1}' --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=RSTEPS
// RUN: fusec-opt %s -p 'fuse-reductions{max-inputs=1}' --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=RINPUTS

// STEPS:       remarks-fuse-elementwise.mlir:18:3: remark: [fuse-elementwise] not fused: its user's region would have 3 steps, over max-steps=2
// STEPS-NEXT:  remarks-fuse-elementwise.mlir:20:3: remark: [fuse-elementwise] fused #0: fused.elementwise of 2 ops
// INPUTS:      remarks-fuse-elementwise.mlir:18:3: remark: [fuse-elementwise] not fused: its user's region would read 3 inputs, over max-inputs=2
// INPUTS-NEXT: remarks-fuse-elementwise.mlir:20:3: remark: [fuse-elementwise] fused #0: fused.elementwise of 2 ops
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.add %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.mul %0, %c : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.neg %1 : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----
// RSTEPS:       remarks-fuse-elementwise.mlir:31:3: remark: [fuse-reductions] fused #0: fused.reduce
// RSTEPS-NEXT:  remarks-fuse-elementwise.mlir:33:3: remark: [fuse-reductions] not fused: the prologue would have 4 steps, over max-steps=1
// RINPUTS:      remarks-fuse-elementwise.mlir:31:3: remark: [fuse-reductions] not fused: the reduction would read 2 inputs, over max-inputs=1
// RINPUTS-NEXT: remarks-fuse-elementwise.mlir:33:3: remark: [fuse-reductions] fused #0: fused.reduce
func.func @reduce(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = nn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.reduce_sum %0 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %2 = nn.sigmoid %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = nn.reduce_max %2 {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %4 = nn.add %1, %3 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}
