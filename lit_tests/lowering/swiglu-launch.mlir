// lower-to-kernels: a fused.swiglu becomes a generated launch that carries kernel.swiglu, its
// gate_first, so that the plan builder can fold it into the wgmma GEMM writing its input
// (codegen/swiglu_epilogue.py). Launch fusion drops it from the launches it builds (here with
// the relu) and keeps it on a launch it leaves alone.

// RUN: fusec-opt %s -p lower-to-kernels --split-input-file | filecheck %s
// RUN: fusec-opt %s -p lower-to-kernels,fuse-launches --split-input-file | filecheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @gate_first(%cat: memref<4x16xf16>) -> memref<4x8xf16> {
// CHECK:         kernel.launch @gate_first_swiglu_0(%cat, %y) {kernel.swiglu = true, global_size
// FUSED-LABEL: func.func @gate_first
// FUSED-NOT:     kernel.swiglu
// FUSED:         kernel.launch @gate_first_swiglu_0_fused2(%cat, %z) {global_size
func.func @gate_first(%cat: tensor<4x16xf16>) -> tensor<4x8xf16> {
  %y = fused.swiglu %cat {gate_first = true} : tensor<4x16xf16> -> tensor<4x8xf16>
  %z = nn.relu %y : tensor<4x8xf16> -> tensor<4x8xf16>
  func.return %z : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @up_first(%cat: memref<2x3x8xf32>) -> memref<2x3x4xf32> {
// CHECK:         kernel.launch @up_first_swiglu_0(%cat, %y) {kernel.swiglu = false, global_size
// FUSED-LABEL: func.func @up_first
// FUSED:         kernel.launch @up_first_swiglu_0(%cat, %y) {kernel.swiglu = false, global_size
func.func @up_first(%cat: tensor<2x3x8xf32>) -> tensor<2x3x4xf32> {
  %y = fused.swiglu %cat : tensor<2x3x8xf32> -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
