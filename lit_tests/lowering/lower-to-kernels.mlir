// lower-to-kernels: tensor functions become host schedules over memrefs. Data movement is a
// generated copy kernel, a reshape is a view (no kernel), a constant is a memref.global read
// with memref.get_global, and attention reads q/k/v slices of one packed buffer in place.

// RUN: fusec-opt %s -p lower-to-kernels --split-input-file | filecheck %s

// CHECK:       "memref.global"() <{sym_name = "movement_cst_0", type = memref<2xf32>, initial_value = dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>, sym_visibility = "private", constant}>
// CHECK-LABEL: func.func @movement(%x: memref<2x3x4xf32>) -> (memref<6x4xf32>, memref<2x4x3xf32>, memref<2x1x4xf32>, memref<2xf32>) {
// CHECK-NEXT:    %c = memref.get_global @movement_cst_0 : memref<2xf32>
// CHECK-NEXT:    %r = kernel.view %x : memref<2x3x4xf32> to memref<6x4xf32>
// CHECK-NEXT:    %t = memref.alloc() : memref<2x4x3xf32>
// CHECK-NEXT:    kernel.launch @movement_transpose_1(%x, %t) {global_size = array<i64: 24>, local_size = array<i64: 24>} : memref<2x3x4xf32>, memref<2x4x3xf32>
// CHECK-NEXT:    %n = memref.alloc() : memref<2x1x4xf32>
// CHECK-NEXT:    kernel.launch @movement_narrow_2(%x, %n) {global_size = array<i64: 8>, local_size = array<i64: 8>} : memref<2x3x4xf32>, memref<2x1x4xf32>
// CHECK-NEXT:    func.return %r, %t, %n, %c : memref<6x4xf32>, memref<2x4x3xf32>, memref<2x1x4xf32>, memref<2xf32>
// CHECK-LABEL: kernel.func @movement_transpose_1(%in0: memref<2x3x4xf32>, %out: memref<2x4x3xf32>) {
// CHECK:           %[[V:.*]] = memref.load %in0[%[[A:.*]], %[[B:.*]], %[[C:.*]]] : memref<2x3x4xf32>
// CHECK-NEXT:      memref.store %[[V]], %out[%[[A]], %[[C]], %[[B]]] : memref<2x4x3xf32>
// CHECK-LABEL: kernel.func @movement_narrow_2(%in0: memref<2x3x4xf32>, %out: memref<2x1x4xf32>) {
// CHECK:         scf.if
// CHECK:           %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[ZERO:.*]], %[[TWO]] : index
// CHECK-NEXT:      %[[V:.*]] = vector.load %in0[%[[I:.*]], %[[ROW]], %[[J:.*]]] : memref<2x3x4xf32>, vector<4xf32>
// CHECK-NEXT:      vector.store %[[V]], %out[%[[I]], %[[ZERO]], %[[J]]] : memref<2x1x4xf32>, vector<4xf32>
func.func @movement(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x4x3xf32>, tensor<2x1x4xf32>, tensor<2xf32>) {
  %c = nn.constant {value = dense<[1.5, -2.0]> : tensor<2xf32>} : tensor<2xf32>
  %r = nn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %t = nn.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %n = nn.narrow %x {axis = 1 : i64, start = 2 : i64, length = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  func.return %r, %t, %n, %c : tensor<6x4xf32>, tensor<2x4x3xf32>, tensor<2x1x4xf32>, tensor<2xf32>
}

// -----

// The three slices of %qkv are read by attention only: no copy kernels; the template reads
// each from %qkv with row stride 48 and its column offset.
// CHECK-LABEL: func.func @packed_attention(%qkv: memref<2x9x48xf32>) -> memref<2x9x16xf32> {
// CHECK-NEXT:    %y = memref.alloc() : memref<2x9x16xf32>
// CHECK-NEXT:    kernel.template "attention" {batch = 2 : i64, seq_q = 9 : i64, seq_k = 9 : i64, num_heads = 2 : i64, head_dim = 8 : i64, scale = 0.353553385 : f32, causal = true, has_mask = false, mask_dtype = "float", q_row_stride = 48 : i64, q_offset = 0 : i64, k_row_stride = 48 : i64, k_offset = 16 : i64, v_row_stride = 48 : i64, v_offset = 32 : i64} ins(%qkv, %qkv, %qkv : memref<2x9x48xf32>, memref<2x9x48xf32>, memref<2x9x48xf32>) outs(%y : memref<2x9x16xf32>)
// CHECK-NEXT:    func.return %y : memref<2x9x16xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   kernel.func
func.func @packed_attention(%qkv: tensor<2x9x48xf32>) -> tensor<2x9x16xf32> {
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 16 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %y = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 8 : i64, causal = true} : tensor<2x9x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32> -> tensor<2x9x16xf32>
  func.return %y : tensor<2x9x16xf32>
}

// -----

// A slice that something else reads too is copied.
// CHECK-LABEL: func.func @slice_also_returned(
// CHECK:         kernel.launch @slice_also_returned_narrow_0(%qkv, %q)
// CHECK:         kernel.template "attention" {{.*}} q_row_stride = 16 : i64, q_offset = 0 : i64, k_row_stride = 48 : i64, k_offset = 16 : i64
// CHECK-SAME:      ins(%q, %qkv, %qkv :
func.func @slice_also_returned(%qkv: tensor<2x9x48xf32>) -> (tensor<2x9x16xf32>, tensor<2x9x16xf32>) {
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 16 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 32 : i64, length = 16 : i64} : tensor<2x9x48xf32> -> tensor<2x9x16xf32>
  %y = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 8 : i64} : tensor<2x9x16xf32>, tensor<2x9x16xf32>, tensor<2x9x16xf32> -> tensor<2x9x16xf32>
  func.return %y, %q : tensor<2x9x16xf32>, tensor<2x9x16xf32>
}
