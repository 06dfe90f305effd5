// Ops that would compute a non-empty result from nothing are verifier errors, one located line:
// the mean, max or min of an empty axis, a matmul with K = 0, attention with no keys. (A sum of
// an empty axis is 0, and an op whose result is empty computes nothing: both run, see
// tests/runtime/test_empty_results.py.)

// RUN: cd %S && fusec-opt nn-empty-invalid.mlir --split-input-file --verify-diagnostics | filecheck nn-empty-invalid.mlir
// fusec-run stops at the first, exit 1 (it was an internal error, exit 70):
// RUN: cd %S && not fusec-run nn-empty-invalid.mlir --device cpu 2>&1 | filecheck nn-empty-invalid.mlir --check-prefix=TOOL
// RUN: cd %S && sh -c 'fusec-run nn-empty-invalid.mlir --device cpu 2>/dev/null; test $? -eq 1'

func.func @reduce_mean_empty_axis(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %0 = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<4x0xf32> -> tensor<4xf32>
  // CHECK: {{^}}nn-empty-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_mean' cannot reduce the empty axis 1 of tensor<4x0xf32>: the mean of no elements is undefined{{$}}
  // TOOL: {{^}}nn-empty-invalid.mlir:[[# @LINE - 2]]:3: error: 'nn.reduce_mean' cannot reduce the empty axis 1 of tensor<4x0xf32>: the mean of no elements is undefined{{$}}
  // TOOL-EMPTY:
  func.return %0 : tensor<4xf32>
}

// -----

func.func @reduce_max_empty_axis(%x: tensor<0x4xf32>) {
  %0 = nn.reduce_max %x {axes = array<i64: 0>, keepdims = true} : tensor<0x4xf32> -> tensor<1x4xf32>
  // CHECK: {{^}}nn-empty-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_max' cannot reduce the empty axis 0 of tensor<0x4xf32>: the max of no elements is undefined{{$}}
  func.return
}

// -----

func.func @reduce_min_empty_axis(%x: tensor<3x0xi32>) {
  %0 = nn.reduce_min %x {axes = array<i64: -1>} : tensor<3x0xi32> -> tensor<3xi32>
  // CHECK: {{^}}nn-empty-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.reduce_min' cannot reduce the empty axis 1 of tensor<3x0xi32>: the min of no elements is undefined{{$}}
  func.return
}

// -----

func.func @matmul_k_zero(%a: tensor<4x0xf32>, %b: tensor<0x3xf32>) {
  %0 = nn.matmul %a, %b : tensor<4x0xf32>, tensor<0x3xf32> -> tensor<4x3xf32>
  // CHECK: {{^}}nn-empty-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.matmul' contraction dimension K is 0 (lhs tensor<4x0xf32>, rhs tensor<0x3xf32>); fusec's matmul needs K >= 1{{$}}
  func.return
}

// -----

func.func @attention_no_keys(%q: tensor<1x2x64xf32>, %k: tensor<1x0x64xf32>) {
  %0 = nn.attention %q, %k, %k {num_heads = 2 : i64, head_dim = 32 : i64} : tensor<1x2x64xf32>, tensor<1x0x64xf32>, tensor<1x0x64xf32> -> tensor<1x2x64xf32>
  // CHECK: {{^}}nn-empty-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.attention' k (tensor<1x0x64xf32>) has no keys: a softmax over none is undefined{{$}}
  func.return
}
