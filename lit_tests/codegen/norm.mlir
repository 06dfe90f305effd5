// Norms lower to the row templates over the last axis, the residual folded in; a norm over
// another axis is computed between two generated transposes that move that axis last and back.
// The two results are the call's outputs, buffers of their own (memref.alloc); only the
// transposed intermediates take slots.

// RUN: fusec-opt %s -p lower-opencl | filecheck %s
// RUN: fusec-opt %s -t opencl | filecheck %s --check-prefix=CL

// CHECK-LABEL: func.func @norms(
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<3x5x37xf32>
// CHECK-NEXT:    kernel.template "layer_norm" {rows = 15 : i64, cols = 37 : i64, eps = 1.000000e-12 : f32, residual = true, has_beta = true} ins(%x, %r, %g, %b : memref<3x5x37xf32>, memref<3x5x37xf32>, memref<37xf32>, memref<37xf32>) outs(%[[Y]] : memref<3x5x37xf32>)
// CHECK-NEXT:    %[[T:.*]] = kernel.alloc slot 0 : memref<5x37x3xf32>
// CHECK-NEXT:    kernel.launch @norms_transpose_0(%[[Y]], %[[T]])
// CHECK-NEXT:    %[[N:.*]] = kernel.alloc slot 1 : memref<5x37x3xf32>
// CHECK-NEXT:    kernel.template "rms_norm" {rows = 185 : i64, cols = 3 : i64, eps = 1.000000e-06 : f32, residual = false, has_beta = false} ins(%[[T]], %g0 : memref<5x37x3xf32>, memref<3xf32>) outs(%[[N]] : memref<5x37x3xf32>)
// CHECK-NEXT:    %[[Z:.*]] = memref.alloc() : memref<3x5x37xf32>
// CHECK-NEXT:    kernel.launch @norms_transpose_1(%[[N]], %[[Z]])
// CHECK-NEXT:    func.return %[[Y]], %[[Z]] : memref<3x5x37xf32>, memref<3x5x37xf32>
// CHECK-LABEL: kernel.func @norms_transpose_0(%in0: memref<3x5x37xf32>, %out: memref<5x37x3xf32>) {
// CHECK:           %[[V:.*]] = memref.load %in0[%[[A:.*]], %[[B:.*]], %[[C:.*]]] : memref<3x5x37xf32>
// CHECK-NEXT:      memref.store %[[V]], %out[%[[B]], %[[C]], %[[A]]] : memref<5x37x3xf32>

// CL:      // @norms: 4 launches: norms_layer_norm_0, norms_transpose_0, norms_rms_norm_2, norms_transpose_1
// CL:      // norms_layer_norm_0: layer_norm of [15x37]
// CL:      void norms_layer_norm_0(
// CL-NEXT:     __global const float *restrict x,
// CL-NEXT:     __global const float *restrict residual,
// CL-NEXT:     __global const float *restrict gamma,
// CL-NEXT:     __global const float *restrict beta,
// CL-NEXT:     __global float *restrict out)
// CL:      __kernel void norms_transpose_0(
// CL:      // norms_rms_norm_2: rms_norm of [185x3]

func.func @norms(%x: tensor<3x5x37xf32>, %r: tensor<3x5x37xf32>, %g: tensor<37xf32>, %b: tensor<37xf32>, %g0: tensor<3xf32>) -> (tensor<3x5x37xf32>, tensor<3x5x37xf32>) {
  %y = fused.residual_layer_norm %x, %r, %g, %b {eps = 1.0e-12 : f32} : (tensor<3x5x37xf32>, tensor<3x5x37xf32>, tensor<37xf32>, tensor<37xf32>) -> tensor<3x5x37xf32>
  %z = nn.rms_norm %y, %g0 {axis = 0 : i64} : tensor<3x5x37xf32>, tensor<3xf32> -> tensor<3x5x37xf32>
  func.return %y, %z : tensor<3x5x37xf32>, tensor<3x5x37xf32>
}
