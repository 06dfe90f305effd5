// -t opencl errors: one line, exit code 1, the op and its location when the emitter has no
// spelling for a scalar op of a fused body.

// RUN: not fusec-opt %s -t opencl 2>&1 | filecheck %s
// CHECK: fusec-opt: opencl target: the OpenCL emitter cannot print 'math.ctpop' at {{.*}}opencl-invalid.mlir:[[# @LINE + 9]]:5
// CHECK-NOT: Traceback
// RUN: sh -c 'fusec-opt %s -t opencl 2>/dev/null; test $? -eq 1'
// RUN: not fusec-opt %s -t 'opencl{device=tpu}' 2>&1 | filecheck %s --check-prefix=DEVICE
// DEVICE: fusec-opt: bad options for target 'opencl': device 'tpu' is not one of cpu, gpu

func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %y = fused.elementwise %x : (tensor<4xi32>) -> tensor<4xi32> {
  ^bb0(%a: i32):
    %c = math.ctpop %a : i32
    fused.yield %c : i32
  }
  func.return %y : tensor<4xi32>
}
