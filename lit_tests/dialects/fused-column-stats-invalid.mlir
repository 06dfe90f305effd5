// Every verifier message of the column-statistics ops (dialects/column_stats.py), one chunk
// each, reported as one line at the op that fails.

// RUN: cd %S && fusec-opt fused-column-stats-invalid.mlir --split-input-file --verify-diagnostics | filecheck fused-column-stats-invalid.mlir

func.func @gram_rank3(%x: tensor<2x5x3xf32>) {
  %0 = fused.centered_gram %x : tensor<2x5x3xf32> -> tensor<3x3xf32>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.centered_gram' x (tensor<2x5x3xf32>) must be a rank-2 f32 tensor{{$}}
  func.return
}

// -----

func.func @gram_half(%x: tensor<5x3xf16>) {
  %0 = fused.centered_gram %x : tensor<5x3xf16> -> tensor<3x3xf16>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.centered_gram' x (tensor<5x3xf16>) must be a rank-2 f32 tensor{{$}}
  func.return
}

// -----

func.func @gram_result(%x: tensor<5x3xf32>) {
  %0 = fused.centered_gram %x : tensor<5x3xf32> -> tensor<5x5xf32>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.centered_gram' result type tensor<5x5xf32> does not have the expected shape [3, 3]{{$}}
  func.return
}

// -----

func.func @power_inner(%a: tensor<4x5xf32>, %q: tensor<4x2xf32>) {
  %0 = fused.power_step_normalize %a, %q : tensor<4x5xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.power_step_normalize' a (tensor<4x5xf32>) and q (tensor<4x2xf32>) do not multiply: 5 != 4{{$}}
  func.return
}

// -----

func.func @power_eps(%a: tensor<4x4xf32>, %q: tensor<4x2xf32>) {
  %0 = fused.power_step_normalize %a, %q {eps = -1.0 : f32} : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.power_step_normalize' eps must be finite and >= 0, got -1.0{{$}}
  func.return
}

// -----

func.func @variance_square(%g: tensor<3x4xf32>, %q: tensor<4x2xf32>) {
  %0 = fused.explained_variance %g, %q : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<2xf32>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.explained_variance' g (tensor<3x4xf32>) must be square and match q's rows (tensor<4x2xf32>){{$}}
  func.return
}

// -----

func.func @variance_result(%g: tensor<4x4xf32>, %q: tensor<4x2xf32>) {
  %0 = fused.explained_variance %g, %q : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<2x1xf32>
  // CHECK: {{^}}fused-column-stats-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.explained_variance' result (tensor<2x1xf32>) must be tensor<2xf32> or tensor<1x2xf32>{{$}}
  func.return
}
