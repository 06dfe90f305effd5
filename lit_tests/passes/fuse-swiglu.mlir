// fuse-swiglu: mul(narrow(cat) up half, silu(narrow(cat) gate half)) -> fused.swiglu(cat), and its guards.
// RUN: fusec-opt %s -p fuse-swiglu --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-swiglu,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-swiglu --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-swiglu,fuse-swiglu --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The seed's canonical case (what fuse-shared-input-matmul leaves for a gate/up pair).
// CHECK-LABEL: func.func @canonical(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.swiglu %cat : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
// UNFUSE-LABEL: func.func @canonical(
// UNFUSE-NEXT:  %[[FIRST_HALF:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  %[[SECOND_HALF:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  %[[GATE_ACT:[^ ]+]] = nn.silu %[[SECOND_HALF]] : tensor<4x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  %[[SWIGLU:[^ ]+]] = nn.mul %[[FIRST_HALF]], %[[GATE_ACT]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  func.return %[[SWIGLU]] : tensor<4x8xf32>
func.func @canonical(%cat: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Gate in the first half, the mul's operands swapped, the axis counted from the end.
// CHECK-LABEL: func.func @gate_first(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.swiglu %cat {gate_first = true} : tensor<2x3x16xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x8xf32>
// UNFUSE-LABEL: func.func @gate_first(
// UNFUSE-NEXT:  %[[FIRST_HALF:[^ ]+]] = nn.narrow %cat {axis = 2 : i64, start = 0 : i64, length = 8 : i64} : tensor<2x3x16xf32> -> tensor<2x3x8xf32>
// UNFUSE-NEXT:  %[[SECOND_HALF:[^ ]+]] = nn.narrow %cat {axis = 2 : i64, start = 8 : i64, length = 8 : i64} : tensor<2x3x16xf32> -> tensor<2x3x8xf32>
// UNFUSE-NEXT:  %[[GATE_ACT:[^ ]+]] = nn.silu %[[FIRST_HALF]] : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
// UNFUSE-NEXT:  %[[SWIGLU:[^ ]+]] = nn.mul %[[SECOND_HALF]], %[[GATE_ACT]] : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
// UNFUSE-NEXT:  func.return %[[SWIGLU]] : tensor<2x3x8xf32>
func.func @gate_first(%cat: tensor<2x3x16xf32>) -> tensor<2x3x8xf32> {
  %g = nn.narrow %cat {axis = -1 : i64, start = 0 : i64, length = 8 : i64} : tensor<2x3x16xf32> -> tensor<2x3x8xf32>
  %u = nn.narrow %cat {axis = -1 : i64, start = 8 : i64, length = 8 : i64} : tensor<2x3x16xf32> -> tensor<2x3x8xf32>
  %s = nn.silu %g : tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  %y = nn.mul %s, %u : tensor<2x3x8xf32>, tensor<2x3x8xf32> -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}

// -----

// cat itself may have other users (it is not absorbed).
// CHECK-LABEL: func.func @cat_returned(
// CHECK-NEXT:  %[[CAT:[^ ]+]] = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.swiglu %[[CAT]] : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[CAT]] : tensor<4x8xf32>, tensor<4x16xf32>
func.func @cat_returned(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %cat = nn.matmul %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %cat : tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// The seed's contended case: the up half has another reader.
// CHECK-LABEL: func.func @negative_up_extra_consumer(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[E:[^ ]+]] = nn.relu %[[U]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[E]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_up_extra_consumer(%cat: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %e = nn.relu %u : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %e : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_gate_returned(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[G]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_gate_returned(%cat: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_silu_returned(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_silu_returned(%cat: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// cat is wider than the two halves (e.g. [up | gate | router]): fused.swiglu would read it wrong.
// CHECK-LABEL: func.func @negative_cat_wider_than_halves(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x20xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x20xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_cat_wider_than_halves(%cat: tensor<4x20xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x20xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x20xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// One column more than the halves: 17 // 2 is 8, so only the width check tells.
// CHECK-LABEL: func.func @negative_cat_odd_width(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x17xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x17xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_cat_odd_width(%cat: tensor<4x17xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x17xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x17xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_overlapping_slices(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 4 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_overlapping_slices(%cat: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 4 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_two_sources(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %a {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %b {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_two_sources(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %a {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %b {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Halves of the first axis, not the last.
// CHECK-LABEL: func.func @negative_not_last_axis(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 0 : i64, start = 0 : i64, length = 8 : i64} : tensor<16x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 0 : i64, start = 8 : i64, length = 8 : i64} : tensor<16x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<8x4xf32>
func.func @negative_not_last_axis(%cat: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %u = nn.narrow %cat {axis = 0 : i64, start = 0 : i64, length = 8 : i64} : tensor<16x4xf32> -> tensor<8x4xf32>
  %g = nn.narrow %cat {axis = 0 : i64, start = 8 : i64, length = 8 : i64} : tensor<16x4xf32> -> tensor<8x4xf32>
  %s = nn.silu %g : tensor<8x4xf32> -> tensor<8x4xf32>
  %y = nn.mul %u, %s : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_sigmoid_gate(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.sigmoid %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_sigmoid_gate(%cat: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.sigmoid %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// Unequal halves: the mul broadcasts a 1-wide up slice.
// CHECK-LABEL: func.func @negative_unequal_halves(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 1 : i64} : tensor<4x9xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %[[G:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 1 : i64, length = 8 : i64} : tensor<4x9xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %[[G]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_unequal_halves(%cat: tensor<4x9xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 1 : i64} : tensor<4x9xf32> -> tensor<4x1xf32>
  %g = nn.narrow %cat {axis = 1 : i64, start = 1 : i64, length = 8 : i64} : tensor<4x9xf32> -> tensor<4x8xf32>
  %s = nn.silu %g : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// The silu's input is an argument, not the other half of a narrowed tensor.
// CHECK-LABEL: func.func @negative_gate_not_narrow(
// CHECK-NEXT:  %[[U:[^ ]+]] = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[S:[^ ]+]] = nn.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.mul %[[U]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_gate_not_narrow(%cat: tensor<4x16xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %u = nn.narrow %cat {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
  %s = nn.silu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.mul %u, %s : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
