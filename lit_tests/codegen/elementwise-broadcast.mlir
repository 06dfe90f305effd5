// A fused elementwise region lowers to one generated kernel whose body is the region's scalar
// IR. Inputs broadcast by indexing: a missing or size-1 dimension reads index 0 (stride 0).
// The innermost dimension (8) takes float4 loads: vector.load where the input varies along it,
// a scalar load and vector.broadcast where it does not.

// RUN: fusec-opt %s -p lower-opencl | filecheck %s
// RUN: fusec-opt %s -t opencl | filecheck %s --check-prefix=CL

// CHECK-LABEL: func.func @ew(%x: memref<3x5x8xf32>, %b: memref<8xf32>, %c: memref<5x1xf32>) -> memref<3x5x8xf32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<3x5x8xf32>
// CHECK-NEXT:    kernel.launch @ew_elementwise_0(%x, %b, %c, %[[Y]]) {global_size = array<i64: 32>, local_size = array<i64: 32>} : memref<3x5x8xf32>, memref<8xf32>, memref<5x1xf32>, memref<3x5x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<3x5x8xf32>
// CHECK-LABEL: kernel.func @ew_elementwise_0(%in0: memref<3x5x8xf32>, %in1: memref<8xf32>, %in2: memref<5x1xf32>, %out: memref<3x5x8xf32>) {
// CHECK-NEXT:    %[[GID:.*]] = kernel.global_id 0
// CHECK-NEXT:    %[[N:.*]] = arith.constant 30 : index
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[GID]], %[[N]] : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK:           %[[J:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[A:.*]] = vector.load %in0[%[[I0:.*]], %[[I1:.*]], %[[J]]] : memref<3x5x8xf32>, vector<4xf32>
// CHECK-NEXT:      %[[B:.*]] = vector.load %in1[%[[J]]] : memref<8xf32>, vector<4xf32>
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[C:.*]] = memref.load %in2[%[[I1]], %[[ZERO]]] : memref<5x1xf32>
// CHECK-NEXT:      %[[CV:.*]] = vector.broadcast %[[C]] : f32 to vector<4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<4xf32>
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[S]] : vector<4xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[T]], %[[CV]] : vector<4xf32>
// CHECK-NEXT:      vector.store %[[M]], %out[%[[I0]], %[[I1]], %[[J]]] : memref<3x5x8xf32>, vector<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return

// CL:      // @ew: 1 launches: ew_elementwise_0
// CL:      __kernel void ew_elementwise_0(
// CL-NEXT:     __global const float *restrict in0,
// CL-NEXT:     __global const float *restrict in1,
// CL-NEXT:     __global const float *restrict in2,
// CL-NEXT:     __global float *restrict out) {
// CL-NEXT:   const int [[GID:v[0-9]+]] = (int)get_global_id(0);
// CL:        if ([[IN:v[0-9]+]]) {
// CL:          const float4 [[A:v[0-9]+]] = vload4(0, in0 + [[I0:v[0-9]+]] * 40 + [[I1:v[0-9]+]] * 8 + [[J:v[0-9]+]]);
// CL-NEXT:     const float4 [[B:v[0-9]+]] = vload4(0, in1 + [[J]]);
// CL-NEXT:     const float [[C:v[0-9]+]] = in2[[[I1]]];
// CL-NEXT:     const float4 [[CV:v[0-9]+]] = (float4)([[C]]);
// CL-NEXT:     const float4 [[S:v[0-9]+]] = [[A]] + [[B]];
// CL-NEXT:     const float4 [[T:v[0-9]+]] = tanh([[S]]);
// CL-NEXT:     const float4 [[M:v[0-9]+]] = [[T]] * [[CV]];
// CL-NEXT:     vstore4([[M]], 0, out + [[I0]] * 40 + [[I1]] * 8 + [[J]]);
// CL-NEXT:   }
// CL-NEXT: }

func.func @ew(%x: tensor<3x5x8xf32>, %b: tensor<8xf32>, %c: tensor<5x1xf32>) -> tensor<3x5x8xf32> {
  %y = fused.elementwise %x, %b, %c : (tensor<3x5x8xf32>, tensor<8xf32>, tensor<5x1xf32>) -> tensor<3x5x8xf32> {
  ^bb0(%a: f32, %bb: f32, %cc: f32):
    %s = arith.addf %a, %bb : f32
    %t = math.tanh %s : f32
    %m = arith.mulf %t, %cc : f32
    fused.yield %m : f32
  }
  func.return %y : tensor<3x5x8xf32>
}
