// RUN: fusec-opt %s -p fuse-elementwise,lower-to-kernels | filecheck %s

// A concat of two elementwise results is one kernel: each piece's input is read through its
// index map, clamped into bounds along the concat axis only (the piece not selected reads
// there, and its value is dropped), and the position along the axis selects the piece.
// CHECK-LABEL: kernel.func @concat_of_results_elementwise_0(%in0: memref<3x5xf32>, %in1: memref<2x5xf32>, %out: memref<5x5xf32>)
// CHECK:         %[[COL:.*]] = arith.remui
// CHECK-NEXT:    %[[ROW:.*]] = arith.divui
// CHECK-NEXT:    %[[TOP0:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[MIN0:.*]] = arith.minsi %[[ROW]], %[[TOP0]] : index
// CHECK-NEXT:    %[[ZERO0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[R0:.*]] = arith.maxsi %[[MIN0]], %[[ZERO0]] : index
// CHECK-NEXT:    %[[A:.*]] = memref.load %in0[%[[R0]], %[[COL]]] : memref<3x5xf32>
// CHECK-NEXT:    %[[SHIFT:.*]] = arith.constant -3 : index
// CHECK-NEXT:    %[[SHIFTED:.*]] = arith.addi %[[ROW]], %[[SHIFT]] : index
// CHECK-NEXT:    %[[TOP1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[MIN1:.*]] = arith.minsi %[[SHIFTED]], %[[TOP1]] : index
// CHECK-NEXT:    %[[ZERO1:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[R1:.*]] = arith.maxsi %[[MIN1]], %[[ZERO1]] : index
// CHECK-NEXT:    %[[B:.*]] = memref.load %in1[%[[R1]], %[[COL]]] : memref<2x5xf32>
// CHECK-NEXT:    %[[EA:.*]] = math.exp %[[A]] : f32
// CHECK-NEXT:    %[[TB:.*]] = math.tanh %[[B]] : f32
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.cmpi slt, %[[ROW]], %[[THREE]] : index
// CHECK-NEXT:    %[[V:.*]] = arith.select %[[FIRST]], %[[EA]], %[[TB]] : f32
// CHECK-NEXT:    memref.store %[[V]], %out[%[[ROW]], %[[COL]]] : memref<5x5xf32>
// CHECK-NOT:   kernel.func
func.func @concat_of_results(%a: tensor<3x5xf32>, %b: tensor<2x5xf32>) -> tensor<5x5xf32> {
  %ea = nn.exp %a : tensor<3x5xf32> -> tensor<3x5xf32>
  %tb = nn.tanh %b : tensor<2x5xf32> -> tensor<2x5xf32>
  %y = nn.concat %ea, %tb {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2x5xf32>) -> tensor<5x5xf32>
  func.return %y : tensor<5x5xf32>
}

// A transpose read in place: the load indexes %x with the iteration dimensions swapped, and
// no clamp (the map stays in bounds).
// CHECK-LABEL: kernel.func @transposed_sum_elementwise_0(%in0: memref<4x6xf32>, %out: memref<6x4xf32>)
// CHECK:         %[[J:.*]] = arith.remui
// CHECK-NEXT:    %[[I:.*]] = arith.divui
// CHECK-NEXT:    %[[X:.*]] = memref.load %in0[%[[J]], %[[I]]] : memref<4x6xf32>
// CHECK-NOT:     arith.minsi
// CHECK:         memref.store
func.func @transposed_sum(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %t = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %e = nn.exp %t : tensor<6x4xf32> -> tensor<6x4xf32>
  func.return %e : tensor<6x4xf32>
}
