// f16 and bf16 buffers: f16 is `half`, read with vload_half and written with vstore_half_rte;
// bf16 is `ushort`, widened by a shift and rounded to nearest even by a helper. Every value is
// a float in registers; a conversion to a 16-bit type rounds to it. The GEMM template loads
// 16-bit operands, accumulates in float and rounds the result once.

// RUN: fusec-opt %s -t opencl | filecheck %s

// CHECK-LABEL: // @half: 3 launches
// CHECK:       #define FUSEC_HALF_HELPERS
// CHECK:       inline ushort fusec_float_to_bf16(const float f) {
// CHECK:       __kernel void half_cast_0(
// CHECK-NEXT:      __global const ushort *restrict in0,
// CHECK-NEXT:      __global half *restrict out) {
// CHECK:           const float [[B:v[0-9]+]] = fusec_bf16_to_float(in0[v0]);
// CHECK-NEXT:      const float [[R:v[0-9]+]] = fusec_round_f16([[B]]);
// CHECK-NEXT:      vstore_half_rte([[R]], v0, out);
// The add, every buffer f16, runs in vectors of 8 (the lowering's default device is a CPU:
// half-precision-vectors.mlir); the casts, whose body converts, stay scalar.
// CHECK:       __kernel void half_add_1(
// CHECK:           const float8 [[X:v[0-9]+]] = vload_half8(0, in0 + v0 * 8 + [[C:v[0-9]+]]);
// CHECK-NEXT:      const float8 [[W:v[0-9]+]] = vload_half8(0, in1 + [[C]]);
// CHECK-NEXT:      const float8 [[S:v[0-9]+]] = [[X]] + [[W]];
// CHECK-NEXT:      vstore_half8_rte([[S]], 0, out + v0 * 8 + [[C]]);
// CHECK:       __kernel void half_cast_2(
// CHECK:           const float [[H:v[0-9]+]] = vload_half(v3 * 8 + v2, in0);
// CHECK-NEXT:      const float [[HB:v[0-9]+]] = fusec_round_bf16([[H]]);
// CHECK-NEXT:      out[v3 * 8 + v2] = fusec_float_to_bf16([[HB]]);
func.func @half(%x: tensor<4x8xf16>, %b: tensor<8xbf16>) -> (tensor<4x8xf16>, tensor<4x8xbf16>) {
  %w = nn.cast %b : tensor<8xbf16> -> tensor<8xf16>
  %y = nn.add %x, %w : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %z = nn.cast %y : tensor<4x8xf16> -> tensor<4x8xbf16>
  func.return %y, %z : tensor<4x8xf16>, tensor<4x8xbf16>
}

// CHECK-LABEL: // @half_matmul: 1 launches
// CHECK:       // half_matmul_gemm_0: [1x3x8] @ [1x8x5], tiles {{.*}}, bf16
// CHECK:       inline float half_matmul_gemm_0_epilogue(float acc, int row, int col, __global const ushort *restrict epi0) {
// CHECK-NEXT:    const float [[BIAS:v[0-9]+]] = fusec_bf16_to_float(epi0[col]);
// CHECK:       __global const ushort *restrict lhs,
// CHECK-NEXT:  __global const ushort *restrict rhs,
// CHECK-NEXT:  __global ushort *restrict out,
// CHECK:       float{{[0-9]*}} c0_0 = 0.0f;
// CHECK:       vstore4(as_float4(convert_uint4(vload4(0, (b + (k0 + kk) * 5 + col0 + v * 4))) << 16), 0, b_panel + kk * 4 + v * 4);
// CHECK:       const float4 a0k = (float4)(fusec_bf16_to_float(a0[k0 + kk]));
// CHECK:       c[(row0 + 0) * 5 + col0 + 0] = fusec_float_to_bf16(half_matmul_gemm_0_epilogue(
func.func @half_matmul(%x: tensor<3x8xbf16>, %w: tensor<8x5xbf16>, %b: tensor<5xbf16>) -> tensor<3x5xbf16> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<3x8xbf16>, tensor<8x5xbf16>, tensor<5xbf16> -> tensor<3x5xbf16>
  func.return %y : tensor<3x5xbf16>
}
