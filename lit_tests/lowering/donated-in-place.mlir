// lower-to-kernels with donated arguments (fusec.aliasing_output) and nn.cache_update: the
// update writes into its operand's buffer where nothing reads the old value afterwards (a
// donated argument, an intermediate), else into a copy; a result aliased to a donated argument
// is returned in that argument's buffer, copied there when something else computed it.
// A result in no donated argument's buffer is the call's output, a buffer of its own
// (memref.alloc, no slot).

// RUN: fusec-opt %s -p lower-to-kernels,plan-buffers --split-input-file | filecheck %s

// Donated: the update is the only write, in the argument's buffer, which is returned.
// CHECK-LABEL: func.func @donated(%c: memref<2x8x4xf32> {fusec.aliasing_output = 0 : i64}, %u: memref<2x3x4xf32>, %pos: memref<i32>) -> memref<2x8x4xf32> {
// CHECK-NEXT:    kernel.template "cache_update" {outer = 2 : i64, length = 8 : i64, rows = 3 : i64, inner = 4 : i64, dtype = "float", copy = false} ins(%u, %pos : memref<2x3x4xf32>, memref<i32>) outs(%c : memref<2x8x4xf32>)
// CHECK-NEXT:    func.return %c : memref<2x8x4xf32>
func.func @donated(%c: tensor<2x8x4xf32> {fusec.aliasing_output = 0 : i64}, %u: tensor<2x3x4xf32>, %pos: tensor<i32>) -> tensor<2x8x4xf32> {
  %0 = nn.cache_update %c, %u, %pos : tensor<2x8x4xf32>, tensor<2x3x4xf32>, tensor<i32> -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

// Not donated: the caller keeps %c, so the update writes a copy.
// CHECK-LABEL: func.func @kept(
// CHECK-NEXT:    %0 = memref.alloc() : memref<2x8x4xf32>
// CHECK-NEXT:    kernel.template "cache_update" {{.*}} copy = true} ins(%u, %pos, %c : memref<2x3x4xf32>, memref<i32>, memref<2x8x4xf32>) outs(%0 : memref<2x8x4xf32>)
// CHECK-NEXT:    func.return %0 : memref<2x8x4xf32>
func.func @kept(%c: tensor<2x8x4xf32>, %u: tensor<2x3x4xf32>, %pos: tensor<i32>) -> tensor<2x8x4xf32> {
  %0 = nn.cache_update %c, %u, %pos : tensor<2x8x4xf32>, tensor<2x3x4xf32>, tensor<i32> -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

// An intermediate read before the update is updated in place; one read after it (through a
// reshape, a view of the same buffer) is not. Every value but %w is returned: %w alone takes
// a slot.
// CHECK-LABEL: func.func @intermediates(
// CHECK-NEXT:    %t = memref.alloc()
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    %r = memref.alloc()
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    kernel.template "cache_update" {{.*}} copy = false} ins(%u, %pos : memref<2x3x4xf32>, memref<i32>) outs(%t : memref<2x8x4xf32>)
// CHECK-NEXT:    %w = kernel.alloc slot 0
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    %v = kernel.view %w
// CHECK-NEXT:    %[[COPY:.*]] = memref.alloc() : memref<2x8x4xf32>
// CHECK-NEXT:    kernel.template "cache_update" {{.*}} copy = true} ins(%u, %pos, %w : memref<2x3x4xf32>, memref<i32>, memref<2x8x4xf32>) outs(%[[COPY]] : memref<2x8x4xf32>)
// CHECK-NEXT:    %n = memref.alloc()
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    func.return %t, %[[COPY]], %r, %n :
func.func @intermediates(%c: tensor<2x8x4xf32>, %u: tensor<2x3x4xf32>, %pos: tensor<i32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<64xf32>) {
  %t = nn.exp %c : tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %r = nn.relu %t : tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %0 = nn.cache_update %t, %u, %pos : tensor<2x8x4xf32>, tensor<2x3x4xf32>, tensor<i32> -> tensor<2x8x4xf32>
  %w = nn.exp %c : tensor<2x8x4xf32> -> tensor<2x8x4xf32>
  %v = nn.reshape %w : tensor<2x8x4xf32> -> tensor<64xf32>
  %1 = nn.cache_update %w, %u, %pos : tensor<2x8x4xf32>, tensor<2x3x4xf32>, tensor<i32> -> tensor<2x8x4xf32>
  %n = nn.neg %v : tensor<64xf32> -> tensor<64xf32>
  func.return %0, %1, %r, %n : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<64xf32>
}

// -----

// The donated argument's result computed by an add: copied into the argument's buffer at the
// end. The argument returned unchanged elsewhere is copied out before that.
// CHECK-LABEL: func.func @copied_in(%acc: memref<4xf32> {fusec.aliasing_output = 0 : i64}, %x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
// CHECK-NEXT:    %s = kernel.alloc slot 0 : memref<4xf32>
// CHECK-NEXT:    kernel.launch @copied_in_add_0(%acc, %x, %s)
// CHECK-NEXT:    %acc_1 = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    kernel.launch @copied_in_copy_1(%acc, %acc_1)
// CHECK-NEXT:    kernel.launch @copied_in_copy_2(%s, %acc)
// CHECK-NEXT:    func.return %acc, %acc_1 : memref<4xf32>, memref<4xf32>
func.func @copied_in(%acc: tensor<4xf32> {fusec.aliasing_output = 0 : i64}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = nn.add %acc, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %s, %acc : tensor<4xf32>, tensor<4xf32>
}
