// Every verifier message of the nn dialect (dialects/nn.py and dialects/common.py), one chunk
// each, reported as one line at the op that fails: file:line:col: error: '<op>' <message>.

// RUN: cd %S && fusec-opt nn-invalid.mlir --split-input-file --verify-diagnostics | filecheck nn-invalid.mlir

// --- operand and result types (common.py) ---------------------------------------------------

func.func @dynamic_dimension(%x: tensor<?x4xf32>) {
  %0 = nn.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.relu' input has a dynamic dimension (tensor<?x4xf32>); fusec needs static shapes{{$}}
  func.return
}

// -----

func.func @non_tensor_operand(%s: f32, %x: tensor<4xf32>) {
  %0 = nn.add %s, %x : f32, tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.add' lhs must be a ranked tensor, got f32{{$}}
  func.return
}

// -----

func.func @unranked_operand(%x: tensor<*xf32>) {
  %0 = nn.exp %x : tensor<*xf32> -> tensor<*xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.exp' input must be a ranked tensor, got tensor<*xf32>{{$}}
  func.return
}

// -----

func.func @non_tensor_result(%x: tensor<4xf32>) {
  %0 = nn.add %x, %x : tensor<4xf32>, tensor<4xf32> -> f32
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.add' result must be a ranked tensor, got f32{{$}}
  func.return
}

// -----

func.func @element_type_f64(%x: tensor<4xf64>) {
  %0 = nn.add %x, %x : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.add' lhs has element type f64 (tensor<4xf64>); expected one of f32, f16, bf16, i32{{$}}
  func.return
}

// -----

func.func @mixed_element_types(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  %0 = nn.mul %x, %y : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.mul' rhs (tensor<4xf16>) must have the element type of lhs (tensor<4xf32>){{$}}
  func.return
}

// -----

func.func @result_element_type(%x: tensor<4xf32>) {
  %0 = nn.sub %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xi32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.sub' result (tensor<4xi32>) must have the element type of lhs (tensor<4xf32>){{$}}
  func.return
}

// -----

func.func @non_broadcasting(%x: tensor<4x8xf32>, %b: tensor<3xf32>) {
  %0 = nn.add %x, %b : tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.add' operands do not broadcast: lhs (tensor<4x8xf32>) and rhs (tensor<3xf32>){{$}}
  func.return
}

// -----

func.func @binary_result_shape(%x: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %0 = nn.div %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.div' result type tensor<8xf32> does not have the expected shape [4, 8]{{$}}
  func.return
}

// -----

func.func @pow_on_integers(%x: tensor<4xi32>) {
  %0 = nn.pow %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.pow' lhs has element type i32 (tensor<4xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

// --- unary ops ----------------------------------------------------------------------------------

func.func @sqrt_on_integers(%x: tensor<4xi32>) {
  %0 = nn.sqrt %x : tensor<4xi32> -> tensor<4xi32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.sqrt' input has element type i32 (tensor<4xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

func.func @relu_on_i1(%x: tensor<4xi1>) {
  %0 = nn.relu %x : tensor<4xi1> -> tensor<4xi1>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.relu' input has element type i1 (tensor<4xi1>); expected one of f32, f16, bf16, i32{{$}}
  func.return
}

// -----

func.func @unary_result_type(%x: tensor<4x8xf32>) {
  %0 = nn.tanh %x : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.tanh' result type tensor<8x4xf32> must equal the input type tensor<4x8xf32>{{$}}
  func.return
}

// -----

func.func @gelu_bad_approximate(%x: tensor<4xf32>) {
  %0 = nn.gelu %x {approximate = "fast"} : tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gelu' approximate "fast" is not one of "none", "tanh"{{$}}
  func.return
}

// -----

func.func @gelu_approximate_not_a_string(%x: tensor<4xf32>) {
  %0 = nn.gelu %x {approximate = 1 : i64} : tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gelu' 1 : i64 should be of base attribute string{{$}}
  func.return
}

// -----

// --- cast, cmp, where, constant -------------------------------------------------------------

func.func @cast_to_f64(%x: tensor<4xf32>) {
  %0 = nn.cast %x : tensor<4xf32> -> tensor<4xf64>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cast' result has element type f64 (tensor<4xf64>); expected one of f32, f16, bf16, i32, i1, i8{{$}}
  func.return
}

// -----

func.func @cast_changes_shape(%x: tensor<4xf32>) {
  %0 = nn.cast %x : tensor<4xf32> -> tensor<2x2xi32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cast' result type tensor<2x2xi32> does not have the expected shape [4]{{$}}
  func.return
}

// -----

func.func @cmp_bad_predicate(%x: tensor<4xf32>) {
  %0 = nn.cmp %x, %x {predicate = "lte"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cmp' predicate "lte" is not one of "eq", "ne", "lt", "le", "gt", "ge"{{$}}
  func.return
}

// -----

func.func @cmp_missing_predicate(%x: tensor<4xf32>) {
  %0 = nn.cmp %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cmp' property 'predicate' expected{{$}}
  func.return
}

// -----

func.func @cmp_result_not_i1(%x: tensor<4xf32>) {
  %0 = nn.cmp %x, %x {predicate = "eq"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cmp' result has element type f32 (tensor<4xf32>); expected i1{{$}}
  func.return
}

// -----

func.func @cmp_mixed_element_types(%x: tensor<4xf32>, %i: tensor<4xi32>) {
  %0 = nn.cmp %x, %i {predicate = "eq"} : tensor<4xf32>, tensor<4xi32> -> tensor<4xi1>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cmp' rhs (tensor<4xi32>) must have the element type of lhs (tensor<4xf32>){{$}}
  func.return
}

// -----

func.func @where_cond_not_i1(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  %0 = nn.where %c, %x, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.where' cond has element type f32 (tensor<4xf32>); expected i1{{$}}
  func.return
}

// -----

func.func @where_branch_types(%c: tensor<4xi1>, %x: tensor<4xf32>, %i: tensor<4xi32>) {
  %0 = nn.where %c, %x, %i : tensor<4xi1>, tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.where' rhs (tensor<4xi32>) must have the element type of lhs (tensor<4xf32>){{$}}
  func.return
}

// -----

func.func @where_non_broadcasting(%c: tensor<3xi1>, %x: tensor<4xf32>) {
  %0 = nn.where %c, %x, %x : tensor<3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.where' operands do not broadcast: cond (tensor<3xi1>) and lhs (tensor<4xf32>) and rhs (tensor<4xf32>){{$}}
  func.return
}

// -----

func.func @constant_type_mismatch() {
  %0 = nn.constant {value = dense<1.0> : tensor<2xf32>} : tensor<3xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.constant' value type tensor<2xf32> must equal the result type tensor<3xf32>{{$}}
  func.return
}

// -----

func.func @constant_f64() {
  %0 = nn.constant {value = dense<1.0> : tensor<2xf64>} : tensor<2xf64>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.constant' result has element type f64 (tensor<2xf64>); expected one of f32, f16, bf16, i32, i1{{$}}
  func.return
}

// -----

// --- matmul ---------------------------------------------------------------------------------

func.func @matmul_lhs_rank_1(%a: tensor<16xf32>, %w: tensor<16x8xf32>) {
  %0 = nn.matmul %a, %w : tensor<16xf32>, tensor<16x8xf32> -> tensor<8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.matmul' lhs (tensor<16xf32>) must have rank >= 2, as [..., M, K]{{$}}
  func.return
}

// -----

func.func @matmul_k_mismatch(%a: tensor<4x16xf32>, %w: tensor<12x8xf32>) {
  %0 = nn.matmul %a, %w : tensor<4x16xf32>, tensor<12x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.matmul' contraction dimensions differ: lhs (tensor<4x16xf32>) has K = 16, rhs (tensor<12x8xf32>) has K = 12{{$}}
  func.return
}

// -----

func.func @matmul_rhs_batch(%a: tensor<2x4x16xf32>, %w: tensor<3x16x8xf32>) {
  %0 = nn.matmul %a, %w : tensor<2x4x16xf32>, tensor<3x16x8xf32> -> tensor<2x4x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.matmul' rhs (tensor<3x16x8xf32>) must be [K, N] or have the leading dimensions of lhs (tensor<2x4x16xf32>){{$}}
  func.return
}

// -----

func.func @matmul_result_shape(%a: tensor<4x16xf32>, %w: tensor<16x8xf32>) {
  %0 = nn.matmul %a, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.matmul' result type tensor<4x16xf32> does not have the expected shape [4, 8]{{$}}
  func.return
}

// -----

func.func @matmul_on_i1(%a: tensor<4x16xi1>, %w: tensor<16x8xi1>) {
  %0 = nn.matmul %a, %w : tensor<4x16xi1>, tensor<16x8xi1> -> tensor<4x8xi1>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.matmul' lhs has element type i1 (tensor<4x16xi1>); expected one of f32, f16, bf16, i32{{$}}
  func.return
}

// -----

// --- data movement --------------------------------------------------------------------------

func.func @transpose_repeated_dim(%x: tensor<4x8xf32>) {
  %0 = nn.transpose %x {perm = array<i64: 0, 0>} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.transpose' perm [0, 0] is not a permutation of the 2 dimensions of tensor<4x8xf32>{{$}}
  func.return
}

// -----

func.func @transpose_short_perm(%x: tensor<2x4x8xf32>) {
  %0 = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.transpose' perm [1, 0] is not a permutation of the 3 dimensions of tensor<2x4x8xf32>{{$}}
  func.return
}

// -----

func.func @transpose_result_shape(%x: tensor<4x8xf32>) {
  %0 = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.transpose' result type tensor<4x8xf32> does not have the expected shape [8, 4]{{$}}
  func.return
}

// -----

func.func @reshape_element_count(%x: tensor<4x8xf32>) {
  %0 = nn.reshape %x : tensor<4x8xf32> -> tensor<5x6xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reshape' cannot reshape tensor<4x8xf32> (32 elements) to tensor<5x6xf32> (30 elements){{$}}
  func.return
}

// -----

func.func @reshape_element_type(%x: tensor<4x8xf32>) {
  %0 = nn.reshape %x : tensor<4x8xf32> -> tensor<32xf16>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reshape' result (tensor<32xf16>) must have the element type of input (tensor<4x8xf32>){{$}}
  func.return
}

// -----

func.func @narrow_out_of_bounds(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 1 : i64, start = 6 : i64, length = 4 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' slice [6, 10) is out of bounds for axis 1 of size 8 in tensor<4x8xf32>{{$}}
  func.return
}

// -----

func.func @narrow_negative_start(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 1 : i64, start = -1 : i64, length = 4 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' slice [-1, 3) is out of bounds for axis 1 of size 8 in tensor<4x8xf32>{{$}}
  func.return
}

// -----

func.func @narrow_zero_length(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 1 : i64, start = 0 : i64, length = 0 : i64} : tensor<4x8xf32> -> tensor<4x0xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' length must be positive, got 0{{$}}
  func.return
}

// -----

func.func @narrow_axis_out_of_range(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 2 : i64, start = 0 : i64, length = 4 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' axis 2 is out of range for an operand of rank 2{{$}}
  func.return
}

// -----

func.func @narrow_result_shape(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 1 : i64, start = 0 : i64, length = 4 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' result type tensor<4x8xf32> does not have the expected shape [4, 4]{{$}}
  func.return
}

// -----

func.func @narrow_missing_length(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 1 : i64, start = 0 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' property 'length' expected{{$}}
  func.return
}

// -----

func.func @narrow_float_axis(%x: tensor<4x8xf32>) {
  %0 = nn.narrow %x {axis = 1.0 : f32, start = 0 : i64, length = 4 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' 1.000000e+00 : f32 should be of base attribute integer{{$}}
  func.return
}

// -----

func.func @concat_no_inputs() {
  %0 = nn.concat {axis = 0 : i64} : () -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.concat' needs at least one input{{$}}
  func.return
}

// -----

func.func @concat_mismatch(%x: tensor<4x8xf32>, %y: tensor<3x8xf32>) {
  %0 = nn.concat %x, %y {axis = 1 : i64} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x16xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.concat' input #1 (tensor<3x8xf32>) does not match input #0 (tensor<4x8xf32>) outside axis 1{{$}}
  func.return
}

// -----

func.func @concat_rank_mismatch(%x: tensor<4x8xf32>, %y: tensor<8xf32>) {
  %0 = nn.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.concat' input #1 (tensor<8xf32>) does not match input #0 (tensor<4x8xf32>) outside axis 0{{$}}
  func.return
}

// -----

func.func @concat_axis_out_of_range(%x: tensor<4x8xf32>) {
  %0 = nn.concat %x, %x {axis = -3 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.concat' axis -3 is out of range for an operand of rank 2{{$}}
  func.return
}

// -----

func.func @concat_element_types(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  %0 = nn.concat %x, %y {axis = 0 : i64} : (tensor<4xf32>, tensor<4xi32>) -> tensor<8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.concat' input #1 (tensor<4xi32>) must have the element type of input #0 (tensor<4xf32>){{$}}
  func.return
}

// -----

func.func @concat_result_shape(%x: tensor<4x8xf32>) {
  %0 = nn.concat %x, %x {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.concat' result type tensor<4x16xf32> does not have the expected shape [8, 8]{{$}}
  func.return
}

// -----

// --- normalisation and softmax --------------------------------------------------------------

func.func @layer_norm_zero_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = nn.layer_norm %x, %g, %g {eps = 0.0 : f32} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' eps must be positive, got 0{{$}}
  func.return
}

// -----

func.func @layer_norm_negative_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = nn.layer_norm %x, %g, %g {eps = -1.0e-5 : f32} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' eps must be positive, got -1e-05{{$}}
  func.return
}

// -----

func.func @layer_norm_gamma_size(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  %0 = nn.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' gamma (tensor<4xf32>) must be a 1-D tensor of 8 elements{{$}}
  func.return
}

// -----

func.func @layer_norm_beta_element_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf16>) {
  %0 = nn.layer_norm %x, %g, %b : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf16> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' beta (tensor<8xf16>) must have the element type of input (tensor<2x8xf32>){{$}}
  func.return
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = nn.layer_norm %x, %g, %g {axis = 2 : i64} : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' axis 2 is out of range for an operand of rank 2{{$}}
  func.return
}

// -----

func.func @layer_norm_on_integers(%x: tensor<2x8xi32>, %g: tensor<8xi32>) {
  %0 = nn.layer_norm %x, %g, %g : tensor<2x8xi32>, tensor<8xi32>, tensor<8xi32> -> tensor<2x8xi32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' input has element type i32 (tensor<2x8xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

func.func @layer_norm_result_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = nn.layer_norm %x, %g, %g : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf16>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.layer_norm' result type tensor<2x8xf16> must equal the input type tensor<2x8xf32>{{$}}
  func.return
}

// -----

func.func @rms_norm_zero_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  %0 = nn.rms_norm %x, %g {eps = 0.0 : f32} : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.rms_norm' eps must be positive, got 0{{$}}
  func.return
}

// -----

func.func @rms_norm_gamma_rank(%x: tensor<2x8xf32>, %g: tensor<1x8xf32>) {
  %0 = nn.rms_norm %x, %g : tensor<2x8xf32>, tensor<1x8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.rms_norm' gamma (tensor<1x8xf32>) must be a 1-D tensor of 8 elements{{$}}
  func.return
}

// -----

func.func @softmax_axis_out_of_range(%x: tensor<2x8xf32>) {
  %0 = nn.softmax %x {axis = 2 : i64} : tensor<2x8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.softmax' axis 2 is out of range for an operand of rank 2{{$}}
  func.return
}

// -----

// --- reductions -----------------------------------------------------------------------------

func.func @reduce_empty_axes(%x: tensor<2x8xf32>) {
  %0 = nn.reduce_sum %x {axes = array<i64>} : tensor<2x8xf32> -> tensor<2x8xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_sum' axes must not be empty{{$}}
  func.return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x8xf32>) {
  %0 = nn.reduce_mean %x {axes = array<i64: 0, 2>} : tensor<2x8xf32> -> tensor<f32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_mean' axis 2 in axes [0, 2] is out of range for an operand of rank 2{{$}}
  func.return
}

// -----

func.func @reduce_repeated_axis(%x: tensor<2x8xf32>) {
  %0 = nn.reduce_max %x {axes = array<i64: 1, -1>} : tensor<2x8xf32> -> tensor<2xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_max' axes [1, -1] name a dimension twice{{$}}
  func.return
}

// -----

func.func @reduce_keepdims_result_shape(%x: tensor<2x8xf32>) {
  %0 = nn.reduce_min %x {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf32> -> tensor<2xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_min' result type tensor<2xf32> does not have the expected shape [2, 1]{{$}}
  func.return
}

// -----

func.func @reduce_on_i1(%x: tensor<2x8xi1>) {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>} : tensor<2x8xi1> -> tensor<2xi1>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_sum' input has element type i1 (tensor<2x8xi1>); expected one of f32, f16, bf16, i32{{$}}
  func.return
}

// -----

func.func @reduce_missing_axes(%x: tensor<2x8xf32>) {
  %0 = nn.reduce_sum %x : tensor<2x8xf32> -> tensor<2xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_sum' property 'axes' expected{{$}}
  func.return
}

// -----

// --- attention ------------------------------------------------------------------------------

func.func @attention_zero_heads(%q: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 0 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' num_heads must be positive, got 0{{$}}
  func.return
}

// -----

func.func @attention_negative_head_dim(%q: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = -16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' head_dim must be positive, got -16{{$}}
  func.return
}

// -----

func.func @attention_heads_do_not_fill_width(%q: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 8 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' q (tensor<1x8x64xf32>) must be [B, S, 32] (num_heads 4 x head_dim 8){{$}}
  func.return
}

// -----

func.func @attention_kv_heads_do_not_divide(%q: tensor<1x8x32xf32>, %k: tensor<1x8x24xf32>) {
  %0 = nn.attention %q, %k, %k {num_heads = 4 : i64, head_dim = 8 : i64, num_kv_heads = 3 : i64} : tensor<1x8x32xf32>, tensor<1x8x24xf32>, tensor<1x8x24xf32> -> tensor<1x8x32xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' num_kv_heads 3 must divide num_heads 4{{$}}
  func.return
}

// -----

func.func @attention_k_width_is_kv_heads(%q: tensor<1x8x32xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 8 : i64, num_kv_heads = 2 : i64} : tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' k (tensor<1x8x32xf32>) must be [B, S, 16] (num_kv_heads 2 x head_dim 8){{$}}
  func.return
}

// -----

func.func @attention_window_needs_causal(%q: tensor<1x8x32xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 8 : i64, window = 4 : i64} : tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' window 4 needs causal = true{{$}}
  func.return
}

// -----

func.func @attention_window_positive(%q: tensor<1x8x32xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 8 : i64, causal = true, window = 0 : i64} : tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' window must be positive, got 0{{$}}
  func.return
}

// -----

func.func @attention_q_rank_2(%q: tensor<8x64xf32>, %k: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %k, %k {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' q (tensor<8x64xf32>) must be [B, S, 64] (num_heads 4 x head_dim 16){{$}}
  func.return
}

// -----

func.func @attention_k_v_shapes(%q: tensor<1x8x64xf32>, %v: tensor<1x6x64xf32>) {
  %0 = nn.attention %q, %q, %v {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x6x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' k (tensor<1x8x64xf32>) and v (tensor<1x6x64xf32>) must have the same shape{{$}}
  func.return
}

// -----

func.func @attention_batch_mismatch(%q: tensor<1x8x64xf32>, %k: tensor<2x8x64xf32>) {
  %0 = nn.attention %q, %k, %k {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' k (tensor<2x8x64xf32>) must have the batch size of q (tensor<1x8x64xf32>){{$}}
  func.return
}

// -----

func.func @attention_mask_shape(%q: tensor<1x8x64xf32>, %m: tensor<1x8x8xf32>) {
  %0 = nn.attention %q, %q, %q mask %m {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x8xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' mask (tensor<1x8x8xf32>) must be [1, 8] (batch, keys){{$}}
  func.return
}

// -----

func.func @attention_mask_keys(%q: tensor<1x4x64xf32>, %k: tensor<1x8x64xf32>, %m: tensor<1x4xi1>) {
  %0 = nn.attention %q, %k, %k mask %m {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x4x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x4xi1> -> tensor<1x4x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' mask (tensor<1x4xi1>) must be [1, 8] (batch, keys){{$}}
  func.return
}

// -----

func.func @attention_mask_element_type(%q: tensor<1x8x64xf32>, %m: tensor<1x8xf64>) {
  %0 = nn.attention %q, %q, %q mask %m {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8xf64> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' mask has element type f64 (tensor<1x8xf64>); expected one of f32, f16, bf16, i32, i1{{$}}
  func.return
}

// -----

func.func @attention_mask_not_a_tensor(%q: tensor<1x8x64xf32>, %m: i1) {
  %0 = nn.attention %q, %q, %q mask %m {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, i1 -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' mask must be a ranked tensor, got i1{{$}}
  func.return
}

// -----

func.func @attention_zero_scale(%q: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 16 : i64, scale = 0.0 : f32} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' scale must be positive, got 0{{$}}
  func.return
}

// -----

func.func @attention_on_integers(%q: tensor<1x8x64xi32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xi32>, tensor<1x8x64xi32>, tensor<1x8x64xi32> -> tensor<1x8x64xi32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' q has element type i32 (tensor<1x8x64xi32>); expected one of f32, f16, bf16{{$}}
  func.return
}

// -----

func.func @attention_result_narrower(%q: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf16>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' result (tensor<1x8x64xf16>) must have the element type of q (tensor<1x8x64xf32>), or f32 for 16-bit operands{{$}}
  func.return
}

// -----

func.func @attention_result_bf16_of_f16(%q: tensor<1x8x64xf16>) {
  %0 = nn.attention %q, %q, %q {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x8x64xf16>, tensor<1x8x64xf16>, tensor<1x8x64xf16> -> tensor<1x8x64xbf16>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' result (tensor<1x8x64xbf16>) must have the element type of q (tensor<1x8x64xf16>), or f32 for 16-bit operands{{$}}
  func.return
}

// -----

func.func @attention_result_shape(%q: tensor<1x4x64xf32>, %k: tensor<1x8x64xf32>) {
  %0 = nn.attention %q, %k, %k {num_heads = 4 : i64, head_dim = 16 : i64} : tensor<1x4x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32> -> tensor<1x8x64xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' result type tensor<1x8x64xf32> does not have the expected shape [1, 4, 64]{{$}}
  func.return
}

// -----

// --- generic form ---------------------------------------------------------------------------

func.func @generic_operand_count(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.relu' Expected 1 operand, but got 2{{$}}
  func.return
}

// -----

func.func @generic_missing_property(%x: tensor<4x8xf32>) {
  %0 = "nn.narrow"(%x) <{axis = 1 : i64, start = 0 : i64}> : (tensor<4x8xf32>) -> tensor<4x4xf32>
  // CHECK: {{^}}nn-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.narrow' property 'length' expected{{$}}
  func.return
}
