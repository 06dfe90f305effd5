// An nn or fused op has parameters (properties) and nothing else: an attribute that is none of
// them is a misspelled parameter, an error at the op. (xDSL kept it as a discardable attribute
// and the op computed with its default, silently: gelu exact instead of tanh below.)

// RUN: cd %S && fusec-opt unknown-attributes-invalid.mlir --split-input-file --verify-diagnostics | filecheck unknown-attributes-invalid.mlir
// RUN: cd %S && sh -c 'fusec-opt unknown-attributes-invalid.mlir 2>/dev/null; test $? -eq 1'

func.func @misspelled(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = nn.gelu %x {aproximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}unknown-attributes-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gelu' has no parameter 'aproximate' (its parameters: approximate){{$}}
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @plural(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = nn.softmax %x {axes = 0 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: {{^}}unknown-attributes-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.softmax' has no parameter 'axes' (its parameters: axis){{$}}
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @none_taken(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = "nn.relu"(%x) {foo = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: {{^}}unknown-attributes-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.relu' has no parameter 'foo' (its parameters: none){{$}}
  func.return %y : tensor<4x8xf32>
}

// -----

func.func @fused(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "gelu", act = "relu"} : tensor<4x16xf32>, tensor<16x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  // CHECK: {{^}}unknown-attributes-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.matmul_bias_act' has no parameter 'act' (its parameters: activation){{$}}
  func.return %y : tensor<4x32xf32>
}

// -----

func.func @generic_attribute(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = "nn.softmax"(%x) <{axis = 0 : i64}> {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: {{^}}unknown-attributes-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.softmax' parameter 'axis' is given as an attribute; in the generic form parameters go in <{...}>{{$}}
  func.return %y : tensor<4x8xf32>
}

// -----

// Properties spelled out in the generic form are parameters, not attributes.
func.func @generic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = "nn.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @generic
// CHECK: nn.gelu %x {approximate = "tanh"}
