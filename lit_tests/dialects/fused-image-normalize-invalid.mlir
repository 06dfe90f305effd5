// Every verifier message of fused.image_normalize (dialects/image_normalize.py), one chunk each,
// reported as one line at the op that fails.

// RUN: cd %S && fusec-opt fused-image-normalize-invalid.mlir --split-input-file --verify-diagnostics | filecheck fused-image-normalize-invalid.mlir

func.func @not_f32(%x: tensor<2x4x4xf16>) {
  %0 = fused.image_normalize %x : tensor<2x4x4xf16> -> tensor<2x4x4xf16>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' x (tensor<2x4x4xf16>) must be f32{{$}}
  func.return
}

// -----

func.func @rank_one(%x: tensor<16xf32>) {
  %0 = fused.image_normalize %x : tensor<16xf32> -> tensor<16xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' x (tensor<16xf32>) must have rank >= 2 (planes of [H, W]){{$}}
  func.return
}

// -----

func.func @result_type(%x: tensor<2x4x4xf32>) {
  %0 = fused.image_normalize %x : tensor<2x4x4xf32> -> tensor<2x16xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' result type tensor<2x16xf32> must equal the x type tensor<2x4x4xf32>{{$}}
  func.return
}

// -----

func.func @gain_in_plane(%x: tensor<2x4x4xf32>, %g: tensor<4x4xf32>) {
  %0 = fused.image_normalize %x gain %g : tensor<2x4x4xf32> gain tensor<4x4xf32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' gain (tensor<4x4xf32>) must hold one value per plane of x (tensor<2x4x4xf32>): broadcast to it, with 1 in the last two dimensions{{$}}
  func.return
}

// -----

func.func @bias_widens(%x: tensor<2x4x4xf32>, %b: tensor<3x2x1x1xf32>) {
  %0 = fused.image_normalize %x bias %b : tensor<2x4x4xf32> bias tensor<3x2x1x1xf32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' bias (tensor<3x2x1x1xf32>) must hold one value per plane of x (tensor<2x4x4xf32>): broadcast to it, with 1 in the last two dimensions{{$}}
  func.return
}

// -----

func.func @bias_not_f32(%x: tensor<2x4x4xf32>, %b: tensor<2x1x1xi32>) {
  %0 = fused.image_normalize %x bias %b : tensor<2x4x4xf32> bias tensor<2x1x1xi32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' bias (tensor<2x1x1xi32>) must be f32{{$}}
  func.return
}

// -----

func.func @negative_eps(%x: tensor<2x4x4xf32>) {
  %0 = fused.image_normalize %x {eps = -1.0 : f32} : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' eps must be finite and >= 0, got -1.0{{$}}
  func.return
}

// -----

func.func @variance(%x: tensor<2x4x4xf32>) {
  %0 = fused.image_normalize %x {variance = "welford"} : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' variance "welford" is not one of "centered", "moments"{{$}}
  func.return
}

// -----

func.func @nan_gamma(%x: tensor<2x4x4xf32>) {
  %0 = fused.image_normalize %x {gamma = 0x7FC00000 : f32} : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' gamma must not be NaN{{$}}
  func.return
}

// -----

func.func @crossed(%x: tensor<2x4x4xf32>) {
  %0 = fused.image_normalize %x {clamp_min = 1.0 : f32, clamp_max = 0.0 : f32} : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  // CHECK: {{^}}fused-image-normalize-invalid.mlir:[[# @LINE - 1]]:3: error: 'fused.image_normalize' clamp_min (1.0) must not exceed clamp_max (0.0){{$}}
  func.return
}
