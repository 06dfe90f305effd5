// unfuse: a region op that cannot decompose fails the pass with one located line.
// RUN: fusec-opt %s -p unfuse --verify-diagnostics | filecheck %s
// RUN: sh -c 'fusec-opt %s -p unfuse; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EXIT

// CHECK: unfuse-invalid.mlir:11:5: error: unfuse: 'math.tan' in a fused body has no nn equivalent
// EXIT-NOT: Traceback
// EXIT: exit=1
func.func @tan(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = fused.elementwise %x : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32):
    %s = math.tan %a : f32
    fused.yield %s : f32
  }
  func.return %0 : tensor<8xf32>
}
