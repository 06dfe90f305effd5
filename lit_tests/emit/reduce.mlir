// A fused reduction lowers to a generated kernel: one work-item per kept element, an scf.for
// over the reduced elements carrying the accumulator, the prologue body inside the loop, and
// the mean's 1/n after it. The C is a plain for loop.

// RUN: fusec-opt %s -p lower-opencl | filecheck %s
// RUN: fusec-opt %s -t opencl | filecheck %s --check-prefix=CL

// CHECK-LABEL: func.func @centered_sq(%x: memref<3x5x37xf32>, %b: memref<37xf32>) -> memref<3x5x1xf32> {
// CHECK-NEXT:    %[[Y:.*]] = kernel.alloc slot 0 : memref<3x5x1xf32>
// CHECK-NEXT:    kernel.launch @centered_sq_reduce_mean_0(%x, %b, %[[Y]]) {global_size = array<i64: 16>, local_size = array<i64: 16>}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-LABEL: kernel.func @centered_sq_reduce_mean_0(%in0: memref<3x5x37xf32>, %in1: memref<37xf32>, %out: memref<3x5x1xf32>) {
// CHECK:           %[[INIT:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[UB:.*]] = arith.constant 37 : index
// CHECK-NEXT:      %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[R:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[A:.*]] = memref.load %in0[%[[I0:.*]], %[[I1:.*]], %[[R]]] : memref<3x5x37xf32>
// CHECK-NEXT:        %[[B:.*]] = memref.load %in1[%[[R]]] : memref<37xf32>
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 0.0270270277 : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.mulf %[[SUM]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.store %[[MEAN]], %out[%[[I0]], %[[I1]], %[[ZERO]]] : memref<3x5x1xf32>

// CL:      __kernel void centered_sq_reduce_mean_0(
// CL:          float [[ACC:v[0-9]+]] = 0.0f;
// CL-NEXT:     for (int [[R:v[0-9]+]] = 0; [[R]] < 37; ++[[R]]) {
// CL-NEXT:       const float [[A:v[0-9]+]] = in0[[[I0:v[0-9]+]] * 185 + [[I1:v[0-9]+]] * 37 + [[R]]];
// CL-NEXT:       const float [[B:v[0-9]+]] = in1[[[R]]];
// CL-NEXT:       const float [[D:v[0-9]+]] = [[A]] - [[B]];
// CL-NEXT:       const float [[SQ:v[0-9]+]] = [[D]] * [[D]];
// CL-NEXT:       const float [[NEXT:v[0-9]+]] = [[ACC]] + [[SQ]];
// CL-NEXT:       [[ACC]] = [[NEXT]];
// CL-NEXT:     }
// CL-NEXT:     const float [[MEAN:v[0-9]+]] = [[ACC]] * 0.027027027681469917f;
// CL-NEXT:     out[[[I0]] * 5 + [[I1]]] = [[MEAN]];

func.func @centered_sq(%x: tensor<3x5x37xf32>, %b: tensor<37xf32>) -> tensor<3x5x1xf32> {
  %y = fused.reduce %x, %b {kind = "mean", axes = array<i64: -1>, keepdims = true} : (tensor<3x5x37xf32>, tensor<37xf32>) -> tensor<3x5x1xf32> {
  ^bb0(%a: f32, %c: f32):
    %d = arith.subf %a, %c : f32
    %sq = arith.mulf %d, %d : f32
    fused.yield %sq : f32
  }
  func.return %y : tensor<3x5x1xf32>
}
