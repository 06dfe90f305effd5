// RUN: fusec-opt %s -p unfuse-elementwise --split-input-file --verify-diagnostics | filecheck %s
// RUN: sh -c 'fusec-opt %s -p unfuse-elementwise --split-input-file; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EXIT

// EXIT: error: unfuse-elementwise: 'math.tan'
// EXIT-NOT: Traceback
// EXIT: exit=1

// CHECK: unfuse-elementwise-invalid.mlir:12:5: error: unfuse-elementwise: 'math.tan' in a fused body has no nn equivalent
func.func @tan(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = fused.elementwise %x : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32):
    %s = math.tan %a : f32
    fused.yield %s : f32
  }
  func.return %0 : tensor<8xf32>
}

// -----

// CHECK: unfuse-elementwise-invalid.mlir:24:5: error: unfuse-elementwise: 'arith.cmpf' predicate ult has no nn.cmp equivalent
func.func @unordered_cmp(%x: tensor<8xf32>) -> tensor<8xi1> {
  %0 = fused.elementwise %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.cmpf ult, %a, %b : f32
    fused.yield %s : i1
  }
  func.return %0 : tensor<8xi1>
}
