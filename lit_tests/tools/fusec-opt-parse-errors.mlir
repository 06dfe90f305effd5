// Parse errors are one line, file:line:col: error: message (xDSL's own are several lines:
// the source line and carets). With --split-input-file the line is the file's, not the chunk's.

// RUN: cd %S && fusec-opt fusec-opt-parse-errors.mlir --split-input-file --verify-diagnostics | filecheck fusec-opt-parse-errors.mlir

// Without --verify-diagnostics the first error goes to stderr, exit 1, nothing on stdout.
// RUN: cd %S && not fusec-opt fusec-opt-parse-errors.mlir --split-input-file 2>&1 >%t.stdout | filecheck fusec-opt-parse-errors.mlir --check-prefix=FIRST
// RUN: cd %S && sh -c 'fusec-opt fusec-opt-parse-errors.mlir --split-input-file 2>/dev/null; test $? -eq 1'
// RUN: filecheck --input-file %t.stdout fusec-opt-parse-errors.mlir --check-prefix=NOTHING --allow-empty
// FIRST: {{^}}fusec-opt-parse-errors.mlir:18:8: error: unknown operation 'nn.frobnicate'{{$}}
// FIRST-NOT: error
// FIRST-NOT: Traceback
// NOTHING-NOT: {{.}}

// A chunk that parses prints its module, between the errors of the others.

func.func @unknown_op(%x: tensor<4xf32>) {
  %0 = nn.frobnicate %x : tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:8: error: unknown operation 'nn.frobnicate'{{$}}
  func.return
}

// -----

// CHECK: // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @fine
func.func @fine() {
  func.return
}

// -----

func.func @missing_result_type(%x: tensor<4xf32>) {
  %0 = nn.relu %x : tensor<4xf32> ->
  func.return
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:3: error: type expected{{$}}
}

// -----

func.func @undefined_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  // The first use of %y, not this comment, nor the end of the input.
  %0 = nn.add %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:19: error: values used but not defined: [%y]{{$}}
  func.return %y : tensor<4xf32>
}

// -----

func.func @value_defined_twice(%x: tensor<4xf32>) {
  %0 = nn.relu %x : tensor<4xf32> -> tensor<4xf32>
  %0 = nn.relu %x : tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:3: error: SSA value %0 is already defined{{$}}
  func.return
}

// -----

func.func @operand_type_mismatch(%x: tensor<4xf32>) {
  %0 = nn.relu %x : tensor<4xf16> -> tensor<4xf16>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:16: error: operand is used with type tensor<4xf16>, but has been previously used or defined with type tensor<4xf32>{{$}}
  func.return
}

// -----

func.func @unknown_type(%x: !foo.bar) {
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:37: error: 'foo.bar' is not registered{{$}}
  func.return
}

// -----

func.func @unterminated_string(%x: tensor<4xf32>) {
  %0 = nn.gelu %x {approximate = "tanh} : tensor<4xf32> -> tensor<4xf32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:34: error: End of file reached before closing string literal.{{$}}
  func.return
}

// -----

func.func @wrong_operand_count(%x: tensor<4xf32>) {
  %0 = "nn.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:3: error: 'nn.add' Expected 2 operands, but got 1{{$}}
  func.return
}

// -----

// CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE + 1]]:1: error: expected an operation{{$}}
}

// -----

// Types and constants xDSL cannot hold (fuzz mutants 96, 102535, 100311, 339001, 505064): one
// line each, at once (an i4294967296 took seconds, a splat of 10^12 elements all the memory).

func.func @integer_too_wide(%x: tensor<4xi4294967296>) {
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:42: error: integer type i4294967296 is wider than 16777215 bits{{$}}
  func.return
}

// -----

func.func @integer_of_no_bits(%x: tensor<4xf32>) {
  %m = nn.reduce_max %x {axes = array<i0: 0>} : tensor<4xf32> -> tensor<f32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:39: error: integer type i0 has no bits; fusec takes integers of 1 bit and more{{$}}
  func.return
}

// -----

func.func @huge_splat() {
  %c = nn.constant {value = dense<1.0> : tensor<99999999999x9xf32>} : tensor<4x9xf32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:42: error: a dense constant of 899999999991 elements; fusec reads at most 268435456 (2^28) from text{{$}}
  func.return
}

// -----

func.func @unpackable_constant() {
  %c = nn.constant {value = dense<1> : tensor<2xi632>} : tensor<2xi632>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:54: error: a constant before here has values fusec cannot store (Format not implemented for i632){{$}}
  func.return
}

// -----

func.func @integer_out_of_range() {
  %c = nn.constant {value = dense<[0, 99999999999]> : tensor<2xi32>} : tensor<2xi32>
  // CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE - 1]]:68: error: a number before here is out of range for its type (Integer value 99999999999 is out of range for type i32 which supports values in the range [-2147483648, 4294967296)){{$}}
  func.return
}

// -----

func.func @unclosed_region() {
  func.return
// CHECK: {{^}}fusec-opt-parse-errors.mlir:[[# @LINE + 1]]:1: error: unexpected end of input in block definition{{$}}
