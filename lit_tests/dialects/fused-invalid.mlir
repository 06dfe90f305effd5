// Every verifier message of the fused dialect (dialects/fused.py), one chunk each, reported as
// one line at the op that fails: file:line:col: error: '<op>' <message>.

// RUN: cd %S && fusec-opt fused-invalid.mlir --split-input-file --verify-diagnostics | filecheck fused-invalid.mlir

// --- matmul_bias_act ------------------------------------------------------------------------

func.func @mba_bad_activation(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  %0 = fused.matmul_bias_act %x, %w, %b {activation = "swish"} : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' activation "swish" is not one of "none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"{{$}}
  func.return
}

// -----

func.func @mba_dynamic_dimension(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<?x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' x has a dynamic dimension (tensor<?x16xf32>); fusec needs static shapes{{$}}
  func.return
}

// -----

func.func @mba_on_integers(%x: tensor<4x16xi32>, %w: tensor<16x8xi32>, %b: tensor<8xi32>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xi32>, tensor<16x8xi32>, tensor<8xi32> -> tensor<4x8xi32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' x has element type i32 (tensor<4x16xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

func.func @mba_bias_element_type(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf16>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf16> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' bias (tensor<8xf16>) must have the element type of x (tensor<4x16xf32>){{$}}
  func.return
}

// -----

func.func @mba_k_mismatch(%x: tensor<4x16xf32>, %w: tensor<12x8xf32>, %b: tensor<8xf32>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<12x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' contraction dimensions differ: x (tensor<4x16xf32>) has K = 16, w (tensor<12x8xf32>) has K = 12{{$}}
  func.return
}

// -----

func.func @mba_bias_size(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<4xf32>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' bias (tensor<4xf32>) must have rank <= 1 and broadcast to the last dimension (8){{$}}
  func.return
}

// -----

func.func @mba_bias_rank_2(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<4x8xf32>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' bias (tensor<4x8xf32>) must have rank <= 1 and broadcast to the last dimension (8){{$}}
  func.return
}

// -----

func.func @mba_result_shape(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  %0 = fused.matmul_bias_act %x, %w, %b : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<8x4xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' result type tensor<8x4xf32> does not have the expected shape [4, 8]{{$}}
  func.return
}

// -----

// --- residual norms -------------------------------------------------------------------------

func.func @rln_residual_type(%x: tensor<2x8xf32>, %r: tensor<1x8xf32>, %g: tensor<8xf32>) {
  %0 = fused.residual_layer_norm %x, %r, %g, %g : (tensor<2x8xf32>, tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_layer_norm' x (tensor<2x8xf32>), residual (tensor<1x8xf32>) and result (tensor<2x8xf32>) must have one type{{$}}
  func.return
}

// -----

func.func @rln_rank_0(%x: tensor<f32>, %g: tensor<1xf32>) {
  %0 = fused.residual_layer_norm %x, %x, %g, %g : (tensor<f32>, tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_layer_norm' x (tensor<f32>) must have rank >= 1{{$}}
  func.return
}

// -----

func.func @rln_beta_size(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<2xf32>) {
  %0 = fused.residual_layer_norm %x, %x, %g, %b : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_layer_norm' beta (tensor<2xf32>) must be a 1-D tensor of 8 elements{{$}}
  func.return
}

// -----

func.func @rln_zero_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = fused.residual_layer_norm %x, %x, %g, %g {eps = 0.0 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_layer_norm' eps must be positive, got 0{{$}}
  func.return
}

// -----

func.func @rrms_on_integers(%x: tensor<2x8xi32>, %g: tensor<8xi32>) {
  %0 = fused.residual_rms_norm %x, %x, %g : (tensor<2x8xi32>, tensor<2x8xi32>, tensor<8xi32>) -> tensor<2x8xi32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_rms_norm' x has element type i32 (tensor<2x8xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

func.func @rrms_gamma_element_type(%x: tensor<2x8xf32>, %g: tensor<8xf16>) {
  %0 = fused.residual_rms_norm %x, %x, %g : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf16>) -> tensor<2x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_rms_norm' gamma (tensor<8xf16>) must have the element type of x (tensor<2x8xf32>){{$}}
  func.return
}

// -----

func.func @rrms_negative_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = fused.residual_rms_norm %x, %x, %g {eps = -1.0 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.residual_rms_norm' eps must be positive, got -1{{$}}
  func.return
}

// -----

// --- swiglu ---------------------------------------------------------------------------------

func.func @swiglu_odd_dim(%x: tensor<4x7xf32>) {
  %0 = fused.swiglu %x : tensor<4x7xf32> -> tensor<4x3xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.swiglu' cat (tensor<4x7xf32>) must have an even last dimension{{$}}
  func.return
}

// -----

func.func @swiglu_result_shape(%x: tensor<4x8xf32>) {
  %0 = fused.swiglu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.swiglu' result type tensor<4x8xf32> does not have the expected shape [4, 4]{{$}}
  func.return
}

// -----

func.func @swiglu_on_integers(%x: tensor<4x8xi32>) {
  %0 = fused.swiglu %x : tensor<4x8xi32> -> tensor<4x4xi32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.swiglu' cat has element type i32 (tensor<4x8xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

func.func @swiglu_result_element_type(%x: tensor<4x8xf32>) {
  %0 = fused.swiglu %x : tensor<4x8xf32> -> tensor<4x4xf16>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.swiglu' result (tensor<4x4xf16>) must have the element type of cat (tensor<4x8xf32>){{$}}
  func.return
}

// -----

// --- attention_block ------------------------------------------------------------------------

func.func @ab_zero_heads(%x: tensor<1x4x8xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 0 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' num_heads must be positive, got 0{{$}}
  func.return
}

// -----

func.func @ab_hidden_rank_2(%x: tensor<4x8xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' hidden (tensor<4x8xf32>) must be [B, S, E]{{$}}
  func.return
}

// -----

func.func @ab_out_w_rank_1(%x: tensor<1x4x8xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<64xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<64xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' out_w (tensor<64xf32>) must be [8, N]{{$}}
  func.return
}

// -----

func.func @ab_qkv_w_shape(%x: tensor<1x4x8xf32>, %qw: tensor<8x16xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x16xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' qkv_w (tensor<8x16xf32>) must be [8, 24]{{$}}
  func.return
}

// -----

func.func @ab_qkv_b_size(%x: tensor<1x4x8xf32>, %qw: tensor<8x24xf32>, %qb: tensor<8xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' qkv_b (tensor<8xf32>) must be a 1-D tensor of 24 elements{{$}}
  func.return
}

// -----

func.func @ab_weight_element_type(%x: tensor<1x4x8xf32>, %qw: tensor<8x24xf16>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf16>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' qkv_w (tensor<8x24xf16>) must have the element type of hidden (tensor<1x4x8xf32>){{$}}
  func.return
}

// -----

func.func @ab_mask_shape(%x: tensor<1x4x8xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' mask (tensor<4xf32>) must be [1, 4] (batch, keys){{$}}
  func.return
}

// -----

func.func @ab_result_shape(%x: tensor<1x4x8xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %ob: tensor<8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.attention_block %x, %qw, %qb, %ow, %ob, %m {num_heads = 2 : i64, head_dim = 4 : i64} : (tensor<1x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<1x4xf32>) -> tensor<1x4x6xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.attention_block' result type tensor<1x4x6xf32> does not have the expected shape [1, 4, 8]{{$}}
  func.return
}

// -----

// --- transformer_layer ----------------------------------------------------------------------
// Batch 1, seq 4, hidden 8, 2 heads of 4, FFN 16; each case breaks one thing.

func.func @tl_bad_activation(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, activation = "swish"} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' activation "swish" is not one of "none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"{{$}}
  func.return
}

// -----

func.func @tl_zero_intermediate_size(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 0 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' intermediate_size must be positive, got 0{{$}}
  func.return
}

// -----

func.func @tl_zero_eps1(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, eps1 = 0.0 : f32} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' eps1 must be positive, got 0{{$}}
  func.return
}

// -----

func.func @tl_negative_eps2(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64, eps2 = -1.0e-5 : f32} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' eps2 must be positive, got -1e-05{{$}}
  func.return
}

// -----

func.func @tl_fc1_w_shape(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x12xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x12xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' fc1_w (tensor<8x12xf32>) must be [8, 16]{{$}}
  func.return
}

// -----

func.func @tl_ln2_size(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>, %g: tensor<16xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %g, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' ln2_g (tensor<16xf32>) must be a 1-D tensor of 8 elements{{$}}
  func.return
}

// -----

func.func @tl_mask_batch(%x: tensor<1x4x8xf32>, %m: tensor<2x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<2x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' mask (tensor<2x4xf32>) must be [1, 4] (batch, keys){{$}}
  func.return
}

// -----

func.func @tl_result_type(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>, %qw: tensor<8x24xf32>, %qb: tensor<24xf32>, %ow: tensor<8x8xf32>, %v: tensor<8xf32>, %f1: tensor<8x16xf32>, %b1: tensor<16xf32>, %f2: tensor<16x8xf32>) {
  %0 = fused.transformer_layer %x, %m, %qw, %qb, %ow, %v, %v, %v, %f1, %b1, %f2, %v, %v, %v {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf16>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.transformer_layer' result type tensor<1x4x8xf16> must equal the hidden type tensor<1x4x8xf32>{{$}}
  func.return
}

// -----

func.func @tl_missing_operand(%x: tensor<1x4x8xf32>, %m: tensor<1x4xf32>) {
  %0 = fused.transformer_layer %x, %m {num_heads = 2 : i64, head_dim = 4 : i64, intermediate_size = 16 : i64} : (tensor<1x4x8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:32: error: Expected 14 operands, but got 2{{$}}
  func.return
}

// -----

// --- elementwise ----------------------------------------------------------------------------

func.func @ew_arg_count(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' body has 1 block argument(s) for 2 input(s); it needs one per input{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @ew_arg_type(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' body argument #0 has type f16, but input #0 is tensor<4xf32>{{$}}
  ^bb0(%a: f16):
    %e = arith.extf %a : f16 to f32
    fused.yield %e : f32
  }
  func.return
}

// -----

func.func @ew_non_scalar_op(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' body op 'arith.constant' must compute scalars, got tensor<4xf32>{{$}}
  ^bb0(%a: f32):
    %t = arith.constant dense<1.0> : tensor<4xf32>
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @ew_nn_op_in_body(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' body may hold only arith and math ops, found 'nn.relu'{{$}}
  ^bb0(%a: f32):
    %t = nn.relu %x : tensor<4xf32> -> tensor<4xf32>
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @ew_missing_yield(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    %s = arith.addf %a, %a : f32
    // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:5: error: 'arith.addf' terminates block in single-block region but is not a terminator{{$}}
  }
  func.return
}

// -----

func.func @ew_yield_two_values(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' body must end in fused.yield of one value{{$}}
  ^bb0(%a: f32):
    fused.yield %a, %a : f32, f32
  }
  func.return
}

// -----

func.func @ew_empty_region(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' Region 'body' at position 0 expected a single block, but got 0 blocks{{$}}
  }
  func.return
}

// -----

func.func @ew_yield_type(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf16> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' body yields f32, but the result is tensor<4xf16>{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @ew_inputs_do_not_broadcast(%x: tensor<4xf32>, %y: tensor<3xf32>) {
  %0 = fused.elementwise %x, %y : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' operands do not broadcast: input #0 (tensor<4xf32>) and input #1 (tensor<3xf32>){{$}}
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    fused.yield %s : f32
  }
  func.return
}

// -----

func.func @ew_result_shape(%x: tensor<4x8xf32>) {
  %0 = fused.elementwise %x : (tensor<4x8xf32>) -> tensor<8xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' inputs of broadcast shape [4, 8] do not broadcast to the result tensor<8xf32>{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @ew_input_element_type(%x: tensor<4xf64>) {
  %0 = fused.elementwise %x : (tensor<4xf64>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' input #0 has element type f64 (tensor<4xf64>); expected one of f32, f16, bf16, i32, i1, i8{{$}}
  ^bb0(%a: f64):
    %t = arith.truncf %a : f64 to f32
    fused.yield %t : f32
  }
  func.return
}

// -----

func.func @ew_dynamic_input(%x: tensor<?xf32>) {
  %0 = fused.elementwise %x : (tensor<?xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.elementwise' input #0 has a dynamic dimension (tensor<?xf32>); fusec needs static shapes{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @yield_not_last(%x: tensor<4xf32>) {
  %0 = fused.elementwise %x : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    fused.yield %a : f32
    // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:5: error: 'fused.yield' must be the last operation in its parent block{{$}}
    %s = arith.addf %a, %a : f32
    fused.yield %s : f32
  }
  func.return
}

// -----

func.func @yield_outside_a_region(%x: f32) {
  fused.yield %x : f32
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.yield' expects parent op to be one of 'fused.elementwise', 'fused.reduce', 'fused.row_reduce', 'fused.matmul_epilogue'{{$}}
}

// -----

// --- reduce ---------------------------------------------------------------------------------

func.func @reduce_bad_kind(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "prod", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' kind "prod" is not one of "sum", "mean", "max", "min"{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @reduce_empty_axes(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "sum", axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' axes must not be empty{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "max", axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' axis 2 in axes [2] is out of range for an operand of rank 2{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @reduce_repeated_axis(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "min", axes = array<i64: 0, -2>} : (tensor<4x8xf32>) -> tensor<8xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' axes [0, -2] name a dimension twice{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @reduce_result_shape(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "mean", axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' result type tensor<4xf32> does not have the expected shape [4, 1]{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

func.func @reduce_yield_type(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' body yields f16, but the result is tensor<4xf32>{{$}}
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to f16
    fused.yield %t : f16
  }
  func.return
}

// -----

func.func @reduce_two_blocks(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' Region 'body' at position 0 expected a single block, but got 2 blocks{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  ^bb1(%b: f32):
    fused.yield %b : f32
  }
  func.return
}

// -----

func.func @reduce_missing_kind(%x: tensor<4x8xf32>) {
  %0 = fused.reduce %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.reduce' property 'kind' expected{{$}}
  ^bb0(%a: f32):
    fused.yield %a : f32
  }
  func.return
}

// -----

// --- row_reduce -----------------------------------------------------------------------------

func.func @row_reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  %0 = fused.row_reduce %x {axis = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: {{^}}fused-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.row_reduce' axis 2 is out of range for an operand of rank 2{{$}}
  ^bb0(%a: f32):
    %m = fused.reduce_value %a {kind = "max"} : f32 -> f32
    fused.yield %m : f32
  }
  func.return
}
