// unfuse: every fused op becomes its decompose(); ops= restricts it to the ops it names.
// RUN: fusec-opt %s -p unfuse --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'unfuse{ops=swiglu,residual_rms_norm}' --split-input-file | filecheck %s --check-prefix=SOME
// RUN: fusec-opt %s -p 'unfuse{ops="fused.matmul_bias_act"}' --split-input-file | filecheck %s --check-prefix=QUOTED
// RUN: fusec-opt %s -p unfuse --split-input-file > %t.once
// RUN: fusec-opt %s -p unfuse,unfuse --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// An unknown op name is a one-line command-line error.
// RUN: not fusec-opt %s -p 'unfuse{ops=softmax}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: fusec-opt: bad options for pass 'unfuse': unknown fused op 'softmax' (known: fused.matmul_bias_act, fused.residual_layer_norm, fused.residual_rms_norm, fused.swiglu, fused.attention_block, fused.transformer_layer, fused.elementwise, fused.reduce, fused.row_reduce, fused.matmul_epilogue{{.*}})

// One of each structured fused op.
// CHECK-LABEL: func.func @mixed(
// CHECK-NEXT:  %[[LINEAR_MM:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[LINEAR:[^ ]+]] = nn.add %[[LINEAR_MM]], %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[ACT:[^ ]+]] = nn.silu %[[LINEAR]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[FIRST_HALF:[^ ]+]] = nn.narrow %[[ACT]] {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[SECOND_HALF:[^ ]+]] = nn.narrow %[[ACT]] {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[GATE_ACT:[^ ]+]] = nn.silu %[[FIRST_HALF]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[SWIGLU:[^ ]+]] = nn.mul %[[SECOND_HALF]], %[[GATE_ACT]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[RMS_IN:[^ ]+]] = nn.add %[[ACT]], %r : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[RMS:[^ ]+]] = nn.rms_norm %[[RMS_IN]], %g : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[LN_IN:[^ ]+]] = nn.add %[[RMS]], %r : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[LN:[^ ]+]] = nn.layer_norm %[[LN_IN]], %g, %b {eps = 1.000000e-12 : f32} : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[RMS]], %[[SWIGLU]], %[[LN]] : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>
// SOME-LABEL: func.func @mixed(
// SOME-NEXT:  %[[M:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// SOME-NEXT:  %[[FIRST_HALF:[^ ]+]] = nn.narrow %[[M]] {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// SOME-NEXT:  %[[SECOND_HALF:[^ ]+]] = nn.narrow %[[M]] {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<4x16xf32> -> tensor<4x8xf32>
// SOME-NEXT:  %[[GATE_ACT:[^ ]+]] = nn.silu %[[FIRST_HALF]] : tensor<4x8xf32> -> tensor<4x8xf32>
// SOME-NEXT:  %[[SWIGLU:[^ ]+]] = nn.mul %[[SECOND_HALF]], %[[GATE_ACT]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// SOME-NEXT:  %[[RMS_IN:[^ ]+]] = nn.add %[[M]], %r : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// SOME-NEXT:  %[[RMS:[^ ]+]] = nn.rms_norm %[[RMS_IN]], %g : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// SOME-NEXT:  %[[L:[^ ]+]] = fused.residual_layer_norm %[[RMS]], %r, %g, %b {eps = 1.000000e-12 : f32} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// SOME-NEXT:  func.return %[[RMS]], %[[SWIGLU]], %[[L]] : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>
// QUOTED-LABEL: func.func @mixed(
// QUOTED-NEXT:  %[[LINEAR_MM:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
// QUOTED-NEXT:  %[[LINEAR:[^ ]+]] = nn.add %[[LINEAR_MM]], %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// QUOTED-NEXT:  %[[ACT:[^ ]+]] = nn.silu %[[LINEAR]] : tensor<4x16xf32> -> tensor<4x16xf32>
// QUOTED-NEXT:  %[[S:[^ ]+]] = fused.swiglu %[[ACT]] {gate_first = true} : tensor<4x16xf32> -> tensor<4x8xf32>
// QUOTED-NEXT:  %[[N:[^ ]+]] = fused.residual_rms_norm %[[ACT]], %r, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// QUOTED-NEXT:  %[[L:[^ ]+]] = fused.residual_layer_norm %[[N]], %r, %g, %b {eps = 1.000000e-12 : f32} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// QUOTED-NEXT:  func.return %[[N]], %[[S]], %[[L]] : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>
func.func @mixed(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>, %r: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>) {
  %m = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %s = fused.swiglu %m {gate_first = true} : tensor<4x16xf32> -> tensor<4x8xf32>
  %n = fused.residual_rms_norm %m, %r, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %l = fused.residual_layer_norm %n, %r, %g, %b {eps = 1.0e-12 : f32} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %n, %s, %l : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// Nothing fused: nothing to do.
// CHECK-LABEL: func.func @nothing_fused(
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.relu %x : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x16xf32>
func.func @nothing_fused(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = nn.relu %x : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
