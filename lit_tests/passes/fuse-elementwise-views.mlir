// RUN: fusec-opt %s -p fuse-elementwise --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-elementwise,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSED
// RUN: fusec-opt %s -p fuse-elementwise --split-input-file --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Transposes, narrows and concats around elementwise arithmetic are index maps of one region's
// loads (passes/_view_regions.py).

// A rotary embedding spelled with narrow / neg / concat: one region reading %x through three
// maps; the concat is a select on the position along the last axis.
// CHECK-LABEL: func.func @rotary
// CHECK-NEXT:    %[[Y:.*]] = fused.elementwise %x, %x, %x, %cos, %sin {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, (d2 + -4))>, affine_map<(d0, d1, d2) -> (d0, d1, (d2 + 4))>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[LO:.*]]: f32, %[[HI:.*]]: f32, %[[X:.*]]: f32, %[[C:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[HI]] : f32
// CHECK-NEXT:      %[[I:.*]] = fused.index {dim = 2 : i64} : index
// CHECK-NEXT:      %[[B:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[P:.*]] = arith.cmpi slt, %[[I]], %[[B]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[P]], %[[N]], %[[LO]] : f32
// CHECK-NEXT:      %[[A:.*]] = arith.mulf %[[X]], %[[C]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[R]], %[[S]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[M]] : f32
// CHECK-NEXT:      fused.yield %[[SUM]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
// Un-fused, the region is nn ops again: each half of the result computed from slices of the
// inputs, joined by a concat.
// UNFUSED-LABEL: func.func @rotary
// UNFUSED-NOT:   fused.
// UNFUSED:       nn.neg
// UNFUSED:       nn.concat {{.*}} {axis = 2 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
// UNFUSED-NEXT:  func.return
// REMARK: fuse-elementwise-views.mlir:[[# @LINE + 9]]:3: remark: [fuse-elementwise] fused #0: fused.elementwise of 3 ops
// REMARK: fuse-elementwise-views.mlir:[[# @LINE + 8]]:3: remark: [fuse-elementwise] fused #1: fused.elementwise of 5 ops, 3 of them views read as index maps
func.func @rotary(%x: tensor<2x4x8xf32>, %cos: tensor<4x8xf32>, %sin: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %x1 = nn.narrow %x {axis = 2 : i64, start = 0 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %x2 = nn.narrow %x {axis = 2 : i64, start = 4 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %n = nn.neg %x2 : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %rot = nn.concat %n, %x1 {axis = 2 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
  %a = nn.mul %x, %cos : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
  %b = nn.mul %rot, %sin : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
  %y = nn.add %a, %b : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// Transpose, arithmetic, transpose back: the iteration space is the last transpose's result,
// %x is read straight and the [6] bias along the first axis.
// CHECK-LABEL: func.func @there_and_back
// CHECK-NEXT:    %[[Y:.*]] = fused.elementwise %x, %b {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>]} : (tensor<6x8xf32>, tensor<6xf32>) -> tensor<6x8xf32> {
// CHECK:           math.exp
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
// UNFUSED-LABEL: func.func @there_and_back
// UNFUSED-NOT:   nn.transpose
// UNFUSED:       nn.reshape %b : tensor<6xf32> -> tensor<6x1xf32>
// UNFUSED:       nn.exp
// UNFUSED:       func.return
func.func @there_and_back(%x: tensor<6x8xf32>, %b: tensor<6xf32>) -> tensor<6x8xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<6x8xf32> -> tensor<8x6xf32>
  %s = nn.add %t, %b : tensor<8x6xf32>, tensor<6xf32> -> tensor<8x6xf32>
  %e = nn.exp %s : tensor<8x6xf32> -> tensor<8x6xf32>
  %y = nn.transpose %e {perm = array<i64: 1, 0>} : tensor<8x6xf32> -> tensor<6x8xf32>
  func.return %y : tensor<6x8xf32>
}

// -----

// A concat of two elementwise results along the first axis: each piece's loads are shifted,
// and the other piece's reads are clamped into bounds by the lowering.
// CHECK-LABEL: func.func @concat_of_results
// CHECK-NEXT:    fused.elementwise %a, %b {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ((d0 + -3), d1)>]} : (tensor<3x5xf32>, tensor<2x5xf32>) -> tensor<5x5xf32> {
// CHECK:           math.exp
// CHECK:           math.tanh
// CHECK:           fused.index {dim = 0 : i64}
// CHECK:           arith.select
func.func @concat_of_results(%a: tensor<3x5xf32>, %b: tensor<2x5xf32>) -> tensor<5x5xf32> {
  %ea = nn.exp %a : tensor<3x5xf32> -> tensor<3x5xf32>
  %tb = nn.tanh %b : tensor<2x5xf32> -> tensor<2x5xf32>
  %y = nn.concat %ea, %tb {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2x5xf32>) -> tensor<5x5xf32>
  func.return %y : tensor<5x5xf32>
}

// -----

// exp(x) is read straight and transposed: it would be computed twice, so it is materialised
// (a plain region) and the second region reads it through both maps.
// CHECK-LABEL: func.func @two_maps
// CHECK-NEXT:    %[[E:.*]] = nn.exp %x
// CHECK-NEXT:    fused.elementwise %[[E]], %[[E]] {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]}
// REMARK: fuse-elementwise-views.mlir:[[# @LINE + 2]]:3: remark: [fuse-elementwise] not fused: its result is read through 2 different index maps in its users' region (it would be computed once per map)
func.func @two_maps(%x: tensor<5x5xf32>) -> tensor<5x5xf32> {
  %e = nn.exp %x : tensor<5x5xf32> -> tensor<5x5xf32>
  %t = nn.transpose %e {perm = array<i64: 1, 0>} : tensor<5x5xf32> -> tensor<5x5xf32>
  %y = nn.sub %e, %t : tensor<5x5xf32>, tensor<5x5xf32> -> tensor<5x5xf32>
  func.return %y : tensor<5x5xf32>
}

// -----

// A concat computes both pieces everywhere: it does not join a region that divides integers.
// CHECK-LABEL: func.func @integer_division
// CHECK:         nn.div
// CHECK:         nn.concat
// REMARK: fuse-elementwise-views.mlir:[[# @LINE + 4]]:3: remark: [fuse-elementwise] not fused: a concat's discarded piece would divide integers (a zero divisor traps)
func.func @integer_division(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: tensor<2xi32>) -> tensor<6xi32> {
  %q = nn.div %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %n = nn.neg %c : tensor<2xi32> -> tensor<2xi32>
  %y = nn.concat %q, %n {axis = 0 : i64} : (tensor<4xi32>, tensor<2xi32>) -> tensor<6xi32>
  func.return %y : tensor<6xi32>
}

// -----

// A chain of data movement alone (a transpose, then a narrow) is one copy through the
// composed map, not a copy per view.
// CHECK-LABEL: func.func @views_only
// CHECK-NEXT:    %[[N:.*]] = fused.elementwise %x {indexing_maps = [affine_map<(d0, d1) -> (d1, (d0 + 1))>]} : (tensor<4x6xf32>) -> tensor<3x4xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[V:.*]]: f32):
// CHECK-NEXT:      fused.yield %[[V]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[N]]
// UNFUSED-LABEL: func.func @views_only
// UNFUSED:         nn.transpose
// UNFUSED:         nn.narrow
func.func @views_only(%x: tensor<4x6xf32>) -> tensor<3x4xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %n = nn.narrow %t {axis = 0 : i64, start = 1 : i64, length = 3 : i64} : tensor<6x4xf32> -> tensor<3x4xf32>
  func.return %n : tensor<3x4xf32>
}

// -----

// One view alone stays as it is, and so does a chain of concats (a region would read every
// piece at every element).
// CHECK-LABEL: func.func @one_view
// CHECK-NEXT:    nn.transpose
// CHECK-NEXT:    func.return
func.func @one_view(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  func.return %t : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @concats_only
// CHECK-NEXT:    nn.concat
// CHECK-NEXT:    nn.concat
func.func @concats_only(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x9xf32> {
  %ab = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %abc = nn.concat %ab, %c {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2x3xf32>) -> tensor<2x9xf32>
  func.return %abc : tensor<2x9xf32>
}

// -----

// The keys of a decoder layer: rotated head-major for the KV cache (returned) and read
// position-major by attention. The transpose of the rotated keys is the rotation computed
// again in the transposed layout (its index maps permuted, fused.index renamed), not a copy.
// CHECK-LABEL: func.func @returned_and_transposed
// CHECK:         %[[K:.*]] = fused.elementwise %x, %x, %x, %c {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d0, (d2 + -4))>, affine_map<(d0, d1, d2) -> (d1, d0, (d2 + 4))>, affine_map<(d0, d1, d2) -> (d1, d2)>]}
// CHECK:           fused.index {dim = 2 : i64}
// CHECK:         %[[T:.*]] = fused.elementwise %x, %x, %x, %c {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, (d2 + -4))>, affine_map<(d0, d1, d2) -> (d0, d1, (d2 + 4))>, affine_map<(d0, d1, d2) -> (d0, d2)>]}
// CHECK:           fused.index {dim = 2 : i64}
// CHECK-NOT:     nn.transpose
// CHECK:         func.return %[[K]], %[[T]]
func.func @returned_and_transposed(%x: tensor<4x2x8xf32>, %c: tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<4x2x8xf32>) {
  %t = nn.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<4x2x8xf32> -> tensor<2x4x8xf32>
  %r = nn.narrow %t {axis = 2 : i64, start = 4 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %l = nn.narrow %t {axis = 2 : i64, start = 0 : i64, length = 4 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  %nr = nn.neg %r : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %rot = nn.concat %nr, %l {axis = 2 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
  %m = nn.mul %t, %c : tensor<2x4x8xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
  %k = nn.add %m, %rot : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %back = nn.transpose %k {perm = array<i64: 1, 0, 2>} : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  func.return %k, %back : tensor<2x4x8xf32>, tensor<4x2x8xf32>
}

// -----

// GPT-2's keys and values, returned head-major for its cache and read by attention in place:
// each narrow moves below its reshape although attention reads it too (attention's q, k, v
// read a slice of the last axis in place), each narrow-and-transpose is one copy, and the two
// copies are not joined into one region (each is returned: joined, each would be copied out).
// CHECK-LABEL: func.func @returned_cache_heads
// CHECK-NOT:     nn.transpose
// CHECK:         %[[KT:.*]] = fused.elementwise %{{.*}} {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, (d1 + 2), d3)>]} : (tensor<2x8x6x4xf32>) -> tensor<2x2x8x4xf32>
// CHECK:         %[[VT:.*]] = fused.elementwise %{{.*}} {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, (d1 + 4), d3)>]} : (tensor<2x8x6x4xf32>) -> tensor<2x2x8x4xf32>
// CHECK:         nn.attention %q, %k, %v
// CHECK:         func.return %[[KT]], %[[VT]]
func.func @returned_cache_heads(%qkv: tensor<2x8x24xf32>) -> (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x8x8xf32>) {
  %q = nn.narrow %qkv {axis = 2 : i64, start = 0 : i64, length = 8 : i64} : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
  %k = nn.narrow %qkv {axis = 2 : i64, start = 8 : i64, length = 8 : i64} : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
  %v = nn.narrow %qkv {axis = 2 : i64, start = 16 : i64, length = 8 : i64} : tensor<2x8x24xf32> -> tensor<2x8x8xf32>
  %kh = nn.reshape %k : tensor<2x8x8xf32> -> tensor<2x8x2x4xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
  %vh = nn.reshape %v : tensor<2x8x8xf32> -> tensor<2x8x2x4xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x2x4xf32> -> tensor<2x2x8x4xf32>
  %a = nn.attention %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64, causal = true} : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  func.return %kt, %vt, %a : tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x8x8xf32>
}
