// On a CPU (the lowering's default device; a GPU keeps them scalar) 16-bit elementwise kernels
// run in vectors of twice a float32 vector's lanes (-t opencl: 4
// floats, so 8 halves, 16 bytes an access): f16 through vload_half8 / vstore_half8_rte, bf16's
// bits widened lane-wise on load and rounded to nearest even by a lane-wise helper on store.
// Values are float vectors in registers, as 16-bit scalars are floats.

// RUN: fusec-opt %s -t opencl | filecheck %s

// CHECK-LABEL: // @half_vectors: 2 launches
// CHECK:       __kernel void half_vectors_{{.*}}(
// CHECK-NEXT:      __global const half *restrict in0,
// CHECK-NEXT:      __global const half *restrict in1,
// CHECK-NEXT:      __global half *restrict out) {
// CHECK:           const int [[N:v[0-9]+]] = v0 < 64;
// CHECK:           const float8 [[A:v[0-9]+]] = vload_half8(0, in0 + {{.*}});
// CHECK-NEXT:      const float8 [[B:v[0-9]+]] = vload_half8(0, in1 + {{.*}});
// CHECK-NEXT:      const float8 [[S:v[0-9]+]] = [[A]] * [[B]];
// CHECK-NEXT:      vstore_half8_rte([[S]], 0, out + {{.*}});
// CHECK:       #define FUSEC_BF16_VECTOR_8
// CHECK:       inline ushort8 fusec_float8_to_bf16(const float8 f) {
// CHECK:       __kernel void half_vectors_{{.*}}(
// CHECK-NEXT:      __global const ushort *restrict in0,
// CHECK-NEXT:      __global ushort *restrict out) {
// CHECK:           const float8 [[X:v[0-9]+]] = as_float8(convert_uint8(vload8(0, in0 + {{.*}})) << 16);
// CHECK:           vstore8(fusec_float8_to_bf16({{v[0-9]+}}), 0, out + {{.*}});
func.func @half_vectors(%x: tensor<4x128xf16>, %y: tensor<4x128xf16>, %b: tensor<8x64xbf16>) -> (tensor<4x128xf16>, tensor<8x64xbf16>) {
  %p = nn.mul %x, %y : tensor<4x128xf16>, tensor<4x128xf16> -> tensor<4x128xf16>
  %e = nn.exp %b : tensor<8x64xbf16> -> tensor<8x64xbf16>
  func.return %p, %e : tensor<4x128xf16>, tensor<8x64xbf16>
}
