// plan-buffers: intermediates whose lifetimes do not overlap share a slot; a buffer that is
// read by a launch is not reused for that launch's output; views keep their buffer alive;
// returned buffers take no slot.

// RUN: fusec-opt %s -p lower-to-kernels,plan-buffers --split-input-file | filecheck %s

// A chain: %a dies at the launch that writes %b, so %b cannot take its slot; %c can. %d is
// returned: a buffer of its own, no slot.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %a = kernel.alloc slot 0 : memref<64xf32>
// CHECK-NEXT:    kernel.launch @chain_exp_0(%x, %a)
// CHECK-NEXT:    %b = kernel.alloc slot 1 : memref<64xf32>
// CHECK-NEXT:    kernel.launch @chain_exp_1(%a, %b)
// CHECK-NEXT:    %c = kernel.alloc slot 0 : memref<64xf32>
// CHECK-NEXT:    kernel.launch @chain_exp_2(%b, %c)
// CHECK-NEXT:    %d = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    kernel.launch @chain_exp_3(%c, %d)
// CHECK-NEXT:    func.return %d
func.func @chain(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %b = nn.exp %a : tensor<64xf32> -> tensor<64xf32>
  %c = nn.exp %b : tensor<64xf32> -> tensor<64xf32>
  %d = nn.exp %c : tensor<64xf32> -> tensor<64xf32>
  func.return %d : tensor<64xf32>
}

// -----

// %a and %d are returned: each is the call's output, a buffer of its own, and takes no slot
// (a returned buffer used to keep a slot to the end, so every later buffer needed another).
// A slot grows to its largest occupant (the 2x4x16 %e takes the 64-element slot of %b).
// CHECK-LABEL: func.func @returned_and_growing(
// CHECK-NEXT:    %a = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    %b = kernel.alloc slot 0 : memref<64xf32>
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    %c = kernel.alloc slot 1 : memref<64xf32>
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    %r = kernel.view %c : memref<64xf32> to memref<4x16xf32>
// CHECK-NEXT:    %e = kernel.alloc slot 0 : memref<2x4x16xf32>
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    %d = memref.alloc() : memref<2x4x16xf32>
// CHECK-NEXT:    kernel.launch
// CHECK-NEXT:    func.return %a, %d
func.func @returned_and_growing(%x: tensor<64xf32>, %y: tensor<2x4x16xf32>) -> (tensor<64xf32>, tensor<2x4x16xf32>) {
  %a = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %b = nn.exp %a : tensor<64xf32> -> tensor<64xf32>
  %c = nn.exp %b : tensor<64xf32> -> tensor<64xf32>
  %r = nn.reshape %c : tensor<64xf32> -> tensor<4x16xf32>
  %e = nn.add %y, %r : tensor<2x4x16xf32>, tensor<4x16xf32> -> tensor<2x4x16xf32>
  %d = nn.exp %e : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
  func.return %a, %d : tensor<64xf32>, tensor<2x4x16xf32>
}

// -----

// A reshape is a view: its reader keeps the viewed buffer alive (%b cannot take the slot of %a).
// %c is returned: no slot.
// CHECK-LABEL: func.func @view(
// CHECK-NEXT:    %a = kernel.alloc slot 0 : memref<64xf32>
// CHECK-NEXT:    kernel.launch @view_exp_0(%x, %a)
// CHECK-NEXT:    %r = kernel.view %a : memref<64xf32> to memref<8x8xf32>
// CHECK-NEXT:    %b = kernel.alloc slot 1 : memref<8x8xf32>
// CHECK-NEXT:    kernel.launch @view_exp_1(%y, %b)
// CHECK-NEXT:    %c = memref.alloc() : memref<8x8xf32>
// CHECK-NEXT:    kernel.launch @view_add_2(%r, %b, %c)
// CHECK-NEXT:    func.return %c
func.func @view(%x: tensor<64xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %r = nn.reshape %a : tensor<64xf32> -> tensor<8x8xf32>
  %b = nn.exp %y : tensor<8x8xf32> -> tensor<8x8xf32>
  %c = nn.add %r, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}

// -----

// A buffer returned through a view (a reshape) is returned too: %b takes no slot.
// CHECK-LABEL: func.func @returned_view(
// CHECK-NEXT:    %a = kernel.alloc slot 0 : memref<64xf32>
// CHECK-NEXT:    kernel.launch @returned_view_exp_0(%x, %a)
// CHECK-NEXT:    %b = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    kernel.launch @returned_view_exp_1(%a, %b)
// CHECK-NEXT:    %r = kernel.view %b : memref<64xf32> to memref<8x8xf32>
// CHECK-NEXT:    func.return %r
func.func @returned_view(%x: tensor<64xf32>) -> tensor<8x8xf32> {
  %a = nn.exp %x : tensor<64xf32> -> tensor<64xf32>
  %b = nn.exp %a : tensor<64xf32> -> tensor<64xf32>
  %r = nn.reshape %b : tensor<64xf32> -> tensor<8x8xf32>
  func.return %r : tensor<8x8xf32>
}
