// fuse-launches: adjacent launches of one iteration space and index mapping become one launch;
// intermediates stay in registers unless something outside the group reads them.

// RUN: fusec-opt %s -p lower-to-kernels,fuse-launches --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'lower-to-kernels{vector-width=1},fuse-launches' --split-input-file | filecheck %s --check-prefix=SCALAR

// The issue's chain: add -> mul (broadcast operand) -> relu -> exp, one launch; the three
// intermediates are neither stored nor allocated; the fused kernel reads x, y, z, writes d.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %d = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    kernel.launch @chain_add_0_fused4(%x, %y, %z, %d) {global_size = array<i64: 8>, local_size = array<i64: 8>}
// CHECK-NEXT:    func.return %d
// CHECK:       kernel.func @chain_add_0_fused4(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<8xf32>, %d: memref<4x8xf32>) {
// CHECK-NEXT:    %[[GID:.*]] = kernel.global_id 0
// CHECK-NEXT:    %[[N:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[GID]], %[[N]] : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK:           %[[X:.*]] = vector.load %x[%[[ROW:.*]], %[[COL:.*]]] : memref<4x8xf32>, vector<4xf32>
// CHECK-NEXT:      %[[Y:.*]] = vector.load %y[%[[ROW]], %[[COL]]] : memref<4x8xf32>, vector<4xf32>
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[X]], %[[Y]] : vector<4xf32>
// CHECK-NOT:       vector.store
// CHECK:           %[[Z:.*]] = vector.load %z[{{.*}}] : memref<8xf32>, vector<4xf32>
// CHECK-NEXT:      %[[B:.*]] = arith.mulf %[[A]], %[[Z]] : vector<4xf32>
// CHECK-NOT:       vector.store
// CHECK:           %[[C:.*]] = arith.maximumf %[[B]], %{{.*}} : vector<4xf32>
// CHECK-NOT:       vector.store
// CHECK:           %[[E:.*]] = math.exp %[[C]] : vector<4xf32>
// CHECK-NEXT:      vector.store %[[E]], %d[%[[ROW]], %{{.*}}] : memref<4x8xf32>, vector<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NOT:   kernel.func @chain_add_0(
// CHECK-NOT:   kernel.func @chain_exp_3(
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = nn.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = nn.mul %a, %z : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %c = nn.relu %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.exp %c : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}

// -----

// A returned intermediate is still stored (the host reads it), and the next kernel reads it
// from the register it was stored from.
// CHECK-LABEL: func.func @returned(
// CHECK-NEXT:    %a = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    %b = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    kernel.launch @returned_exp_0_fused2(%x, %a, %b)
// CHECK-NEXT:    func.return %a, %b
// CHECK:       kernel.func @returned_exp_0_fused2(
// CHECK:           %[[E:.*]] = math.exp %{{.*}} : vector<4xf32>
// CHECK-NEXT:      vector.store %[[E]], %a[%[[I:.*]]] : memref<64xf32>, vector<4xf32>
// CHECK-NEXT:      %[[L:.*]] = math.log %[[E]] : vector<4xf32>
// CHECK-NEXT:      vector.store %[[L]], %b[%[[I]]] : memref<64xf32>, vector<4xf32>
func.func @returned(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %a = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %b = nn.log %a : tensor<64xf32> -> tensor<64xf32>
  func.return %a, %b : tensor<64xf32>, tensor<64xf32>
}

// -----

// A transpose reads what other work-items wrote: with float4 kernels its iteration space
// differs (64 work-items, not 16); with scalar kernels the spaces agree but its read is not
// at the element its work-item wrote, so it starts a new launch (host materialization) and
// the neg after it joins it.
// CHECK-LABEL: func.func @negative_transposed(
// CHECK:         kernel.launch @negative_transposed_exp_0(%x, %a)
// CHECK:         kernel.launch @negative_transposed_transpose_1(%a, %b)
// CHECK:         kernel.launch @negative_transposed_neg_2(%b, %c)
// SCALAR-LABEL: func.func @negative_transposed(
// SCALAR-NEXT:    %a = memref.alloc() : memref<8x8xf32>
// SCALAR-NEXT:    kernel.launch @negative_transposed_exp_0(%x, %a) {global_size = array<i64: 64>
// SCALAR-NEXT:    %c = memref.alloc() : memref<8x8xf32>
// SCALAR-NEXT:    kernel.launch @negative_transposed_transpose_1_fused2(%a, %c) {global_size = array<i64: 64>
// SCALAR-NEXT:    func.return %c
// SCALAR:       kernel.func @negative_transposed_transpose_1_fused2(
// SCALAR:           %[[T:.*]] = memref.load %a[%[[J:.*]], %[[I:.*]]] : memref<8x8xf32>
// SCALAR-NEXT:      %[[N:.*]] = arith.negf %[[T]] : f32
// SCALAR-NEXT:      memref.store %[[N]], %c[%[[I]], %[[J]]] : memref<8x8xf32>
func.func @negative_transposed(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = nn.exp %x : tensor<8x8xf32> -> tensor<8x8xf32>
  %b = nn.transpose %a {perm = array<i64: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %c = nn.neg %b : tensor<8x8xf32> -> tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}

// -----

// A template (the GEMM) is a launch of its own: it splits the chain, and the launches after it
// merge.
// CHECK-LABEL: func.func @template_between(
// CHECK:         kernel.launch @template_between_relu_0(%x, %a)
// CHECK-NEXT:    %m = memref.alloc()
// CHECK-NEXT:    kernel.template "gemm"
// CHECK:         %c = memref.alloc() : memref<4x8xf32>
// CHECK-NEXT:    kernel.launch @template_between_exp_1_fused2(%m, %c)
// CHECK-NEXT:    func.return %c
func.func @template_between(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %m = nn.matmul %a, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %b = nn.exp %m : tensor<4x8xf32> -> tensor<4x8xf32>
  %c = nn.neg %b : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// -----

// Kernels over different iteration spaces stay apart: a reduction's inputs are not its
// outputs' elements, and with float4 kernels the neg over 4 outputs is one work-item. With
// scalar kernels the neg has the reduction's space (a work-item per output) and joins it.
// CHECK-LABEL: func.func @negative_reduction_input(
// CHECK:         kernel.launch @negative_reduction_input_exp_0(%x, %a)
// CHECK:         kernel.launch @negative_reduction_input_reduce_sum_1(%a, %s)
// CHECK:         kernel.launch @negative_reduction_input_neg_2(%s, %n)
// SCALAR-LABEL: func.func @negative_reduction_input(
// SCALAR:         kernel.launch @negative_reduction_input_exp_0(%x, %a)
// SCALAR-NEXT:    %n = memref.alloc() : memref<4xf32>
// SCALAR-NEXT:    kernel.launch @negative_reduction_input_reduce_sum_1_fused2(%a, %n)
// SCALAR:       kernel.func @negative_reduction_input_reduce_sum_1_fused2(
// SCALAR:           %[[S:.*]] = scf.for
// SCALAR:           %[[N:.*]] = arith.negf %[[S]] : f32
// SCALAR-NEXT:      memref.store %[[N]], %n[%{{.*}}] : memref<4xf32>
func.func @negative_reduction_input(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %a = nn.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %s = nn.reduce_sum %a {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4xf32>
  %n = nn.neg %s : tensor<4xf32> -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

// A reshape (kernel.view) of an intermediate is read outside the group: the value is stored,
// and the kernel reading the view is not merged (its buffer is not the one written).
// CHECK-LABEL: func.func @negative_view(
// CHECK:         kernel.launch @negative_view_exp_0(%x, %a)
// CHECK-NEXT:    %r = kernel.view %a
// CHECK:         kernel.launch @negative_view_neg_1(%r, %n)
func.func @negative_view(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %a = nn.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %r = nn.reshape %a : tensor<4x8xf32> -> tensor<32xf32>
  %n = nn.neg %r : tensor<32xf32> -> tensor<32xf32>
  func.return %n : tensor<32xf32>
}
