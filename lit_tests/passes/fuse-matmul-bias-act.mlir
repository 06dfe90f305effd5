// fuse-matmul-bias-act: act(add(matmul(x, w), b)) -> fused.matmul_bias_act, and its guards.
// RUN: fusec-opt %s -p fuse-matmul-bias-act --split-input-file | filecheck %s
// RUN: fusec-opt %s -p 'fuse-matmul-bias-act{activations=gelu_tanh,sigmoid}' --split-input-file | filecheck %s --check-prefix=OPT
// RUN: fusec-opt %s -p 'fuse-matmul-bias-act,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// Idempotent: running the pass twice prints what running it once does.
// RUN: fusec-opt %s -p fuse-matmul-bias-act --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-matmul-bias-act,fuse-matmul-bias-act --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// A bad activation name is a one-line command-line error.
// RUN: not fusec-opt %s -p 'fuse-matmul-bias-act{activations=exp}' 2>&1 | filecheck %s --check-prefix=BADOPT
// BADOPT: fusec-opt: bad options for pass 'fuse-matmul-bias-act': unknown activation 'exp' (known: relu, gelu, gelu_tanh, silu, sigmoid, tanh)

// CHECK-LABEL: func.func @bias_gelu(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : tensor<2x3x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3x32xf32>
// OPT-LABEL: func.func @bias_gelu(
// OPT-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b : tensor<2x3x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
// OPT-NEXT:  %[[Y:[^ ]+]] = nn.gelu %[[A]] : tensor<2x3x32xf32> -> tensor<2x3x32xf32>
// OPT-NEXT:  func.return %[[Y]] : tensor<2x3x32xf32>
// UNFUSE-LABEL: func.func @bias_gelu(
// UNFUSE-NEXT:  %[[LINEAR_MM:[^ ]+]] = nn.matmul %x, %w : tensor<2x3x16xf32>, tensor<16x32xf32> -> tensor<2x3x32xf32>
// UNFUSE-NEXT:  %[[LINEAR:[^ ]+]] = nn.add %[[LINEAR_MM]], %b : tensor<2x3x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
// UNFUSE-NEXT:  %[[ACT:[^ ]+]] = nn.gelu %[[LINEAR]] : tensor<2x3x32xf32> -> tensor<2x3x32xf32>
// UNFUSE-NEXT:  func.return %[[ACT]] : tensor<2x3x32xf32>
func.func @bias_gelu(%x: tensor<2x3x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<2x3x32xf32> {
  %m = nn.matmul %x, %w : tensor<2x3x16xf32>, tensor<16x32xf32> -> tensor<2x3x32xf32>
  %a = nn.add %m, %b : tensor<2x3x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
  %y = nn.gelu %a : tensor<2x3x32xf32> -> tensor<2x3x32xf32>
  func.return %y : tensor<2x3x32xf32>
}

// -----

// CHECK-LABEL: func.func @bias_no_act(
// CHECK-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[A]] : tensor<4x16xf32>
func.func @bias_no_act(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %a = nn.add %m, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  func.return %a : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @bias_first_silu(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @bias_first_silu(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %b, %m : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %y = nn.silu %a : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @relu_f16(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<4x16xf16>, tensor<16x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf16>
// OPT-LABEL: func.func @relu_f16(
// OPT-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf16>, tensor<16x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
// OPT-NEXT:  %[[Y:[^ ]+]] = nn.relu %[[A]] : tensor<4x8xf16> -> tensor<4x8xf16>
// OPT-NEXT:  func.return %[[Y]] : tensor<4x8xf16>
func.func @relu_f16(%x: tensor<4x16xf16>, %w: tensor<16x8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  %m = nn.matmul %x, %w : tensor<4x16xf16>, tensor<16x8xf16> -> tensor<4x8xf16>
  %a = nn.add %m, %b : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %y = nn.relu %a : tensor<4x8xf16> -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// -----

// The seed's softplus case: exp is not an epilogue activation; matmul + bias still fuse.
// CHECK-LABEL: func.func @exp_stays(
// CHECK-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b : tensor<8x32xf32>, tensor<32x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.exp %[[A]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<8x16xf32>
// UNFUSE-LABEL: func.func @exp_stays(
// UNFUSE-NEXT:  %[[LINEAR_MM:[^ ]+]] = nn.matmul %x, %w : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
// UNFUSE-NEXT:  %[[LINEAR:[^ ]+]] = nn.add %[[LINEAR_MM]], %b : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
// UNFUSE-NEXT:  %[[Y:[^ ]+]] = nn.exp %[[LINEAR]] : tensor<8x16xf32> -> tensor<8x16xf32>
// UNFUSE-NEXT:  func.return %[[Y]] : tensor<8x16xf32>
func.func @exp_stays(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %m = nn.matmul %x, %w : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  %a = nn.add %m, %b : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %y = nn.exp %a : tensor<8x16xf32> -> tensor<8x16xf32>
  func.return %y : tensor<8x16xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh(
// CHECK-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.gelu %[[A]] {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
// OPT-LABEL: func.func @gelu_tanh(
// OPT-NEXT:  %[[Y:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "gelu_tanh"} : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// OPT-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @gelu_tanh(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = nn.gelu %a {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// The bias is defined after the matmul: the fused op takes the add's place.
// CHECK-LABEL: func.func @late_bias(
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.constant {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.matmul_bias_act %x, %w, %[[B]] {activation = "gelu"} : tensor<8x16xf32>, tensor<16x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<8x4xf32>
// UNFUSE-LABEL: func.func @late_bias(
// UNFUSE-NEXT:  %[[B:[^ ]+]] = nn.constant {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>} : tensor<4xf32>
// UNFUSE-NEXT:  %[[LINEAR_MM:[^ ]+]] = nn.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
// UNFUSE-NEXT:  %[[LINEAR:[^ ]+]] = nn.add %[[LINEAR_MM]], %[[B]] : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
// UNFUSE-NEXT:  %[[ACT:[^ ]+]] = nn.gelu %[[LINEAR]] : tensor<8x4xf32> -> tensor<8x4xf32>
// UNFUSE-NEXT:  func.return %[[ACT]] : tensor<8x4xf32>
func.func @late_bias(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %m = nn.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %b = nn.constant {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : tensor<4xf32>
  %a = nn.add %m, %b : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %y = nn.gelu %a : tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @scalar_and_unit_bias(
// CHECK-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %s : tensor<4x16xf32>, tensor<16x8xf32>, tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[C:[^ ]+]] = fused.matmul_bias_act %x, %w, %u : tensor<4x16xf32>, tensor<16x8xf32>, tensor<1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[A]], %[[C]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @scalar_and_unit_bias(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %s: tensor<f32>, %u: tensor<1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %n = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %c = nn.add %u, %n : tensor<1xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A fused op without activation (e.g. from an earlier run) takes a following activation.
// CHECK-LABEL: func.func @fold_into_existing(
// CHECK-NEXT:  %[[Y:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "silu"} : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
// UNFUSE-LABEL: func.func @fold_into_existing(
// UNFUSE-NEXT:  %[[LINEAR_MM:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  %[[LINEAR:[^ ]+]] = nn.add %[[LINEAR_MM]], %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  %[[ACT:[^ ]+]] = nn.silu %[[LINEAR]] : tensor<4x8xf32> -> tensor<4x8xf32>
// UNFUSE-NEXT:  func.return %[[ACT]] : tensor<4x8xf32>
func.func @fold_into_existing(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = nn.silu %a : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_matmul_extra_consumer(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.add %[[M]], %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[R:[^ ]+]] = nn.relu %[[M]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[A]], %[[R]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_matmul_extra_consumer(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %r = nn.relu %m : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_matmul_returned(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.add %[[M]], %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[A]], %[[M]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_matmul_returned(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %a, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A full-shape operand is a residual, not a bias.
// CHECK-LABEL: func.func @negative_bias_rank2(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.add %[[M]], %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[C:[^ ]+]] = nn.add %[[N]], %b : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[A]], %[[C]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_bias_rank2(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %r: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %r : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %n = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %c = nn.add %n, %b : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  func.return %a, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The add broadcasts the matmul result up to a larger shape: not an epilogue.
// CHECK-LABEL: func.func @negative_bias_grows_result(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<1x16xf32>, tensor<16x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.add %[[M]], %b : tensor<1x8xf32>, tensor<3x1x8xf32> -> tensor<3x1x8xf32>
// CHECK-NEXT:  func.return %[[A]] : tensor<3x1x8xf32>
func.func @negative_bias_grows_result(%x: tensor<1x16xf32>, %w: tensor<16x8xf32>, %b: tensor<3x1x8xf32>) -> tensor<3x1x8xf32> {
  %m = nn.matmul %x, %w : tensor<1x16xf32>, tensor<16x8xf32> -> tensor<1x8xf32>
  %a = nn.add %m, %b : tensor<1x8xf32>, tensor<3x1x8xf32> -> tensor<3x1x8xf32>
  func.return %a : tensor<3x1x8xf32>
}

// -----

// fused.matmul_bias_act computes in floats only.
// CHECK-LABEL: func.func @negative_int_dtype(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xi32>, tensor<16x8xi32> -> tensor<4x8xi32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.add %[[M]], %b : tensor<4x8xi32>, tensor<8xi32> -> tensor<4x8xi32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.relu %[[A]] : tensor<4x8xi32> -> tensor<4x8xi32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xi32>
func.func @negative_int_dtype(%x: tensor<4x16xi32>, %w: tensor<16x8xi32>, %b: tensor<8xi32>) -> tensor<4x8xi32> {
  %m = nn.matmul %x, %w : tensor<4x16xi32>, tensor<16x8xi32> -> tensor<4x8xi32>
  %a = nn.add %m, %b : tensor<4x8xi32>, tensor<8xi32> -> tensor<4x8xi32>
  %y = nn.relu %a : tensor<4x8xi32> -> tensor<4x8xi32>
  func.return %y : tensor<4x8xi32>
}

// -----

// The biased sum is also returned: the bias folds, the activation stays separate.
// CHECK-LABEL: func.func @negative_act_sum_returned(
// CHECK-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.gelu %[[A]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]], %[[A]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @negative_act_sum_returned(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = nn.gelu %a : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y, %a : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_second_activation(
// CHECK-NEXT:  %[[A:[^ ]+]] = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.silu %[[A]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<4x8xf32>
func.func @negative_second_activation(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = fused.matmul_bias_act %x, %w, %b {activation = "gelu"} : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %y = nn.silu %a : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_sub_is_not_bias(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.sub %[[M]], %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[A]] : tensor<4x8xf32>
func.func @negative_sub_is_not_bias(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.sub %m, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %a : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_batched_bias_add_of_matmuls(
// CHECK-NEXT:  %[[M:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[N:[^ ]+]] = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.add %[[M]], %[[N]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  func.return %[[A]] : tensor<4x8xf32>
func.func @negative_batched_bias_add_of_matmuls(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %m = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %n = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %a = nn.add %m, %n : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a : tensor<4x8xf32>
}
