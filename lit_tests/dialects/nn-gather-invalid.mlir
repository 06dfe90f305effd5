// Every verifier message of nn.gather, one chunk each, as one line at the op.

// RUN: cd %S && fusec-opt nn-gather-invalid.mlir --split-input-file --verify-diagnostics | filecheck nn-gather-invalid.mlir

func.func @float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  %0 = nn.gather %t, %i : tensor<10x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' indices has element type f32 (tensor<3xf32>); expected i32{{$}}
  func.return
}

// -----

func.func @axis_out_of_range(%t: tensor<10x4xf32>, %i: tensor<3xi32>) {
  %0 = nn.gather %t, %i {axis = 2 : i64} : tensor<10x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' axis 2 is out of range for an operand of rank 2{{$}}
  func.return
}

// -----

func.func @wrong_result_shape(%t: tensor<10x4xf32>, %i: tensor<3xi32>) {
  %0 = nn.gather %t, %i : tensor<10x4xf32>, tensor<3xi32> -> tensor<4x3xf32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' result type tensor<4x3xf32> does not have the expected shape [3, 4]{{$}}
  func.return
}

// -----

func.func @wrong_result_type(%t: tensor<10x4xf32>, %i: tensor<3xi32>) {
  %0 = nn.gather %t, %i : tensor<10x4xf32>, tensor<3xi32> -> tensor<3x4xi32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' result (tensor<3x4xi32>) must have the element type of data (tensor<10x4xf32>){{$}}
  func.return
}

// -----

func.func @empty_axis(%t: tensor<0x4xf32>, %i: tensor<3xi32>) {
  %0 = nn.gather %t, %i : tensor<0x4xf32>, tensor<3xi32> -> tensor<3x4xf32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' cannot gather from the empty axis 0 of tensor<0x4xf32>{{$}}
  func.return
}

// -----

func.func @constant_index_out_of_range(%t: tensor<4x8xf32>) {
  %i = nn.constant {value = dense<[[0, 3], [9, -1]]> : tensor<2x2xi32>} : tensor<2x2xi32>
  %0 = nn.gather %t, %i : tensor<4x8xf32>, tensor<2x2xi32> -> tensor<2x2x8xf32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' constant index 9 at position [1, 0] is out of range for axis 0 of size 4 (valid: -4 to 3){{$}}
  func.return
}

// -----

func.func @constant_splat_index_out_of_range(%t: tensor<4x8xf32>) {
  %i = nn.constant {value = dense<-5> : tensor<3xi32>} : tensor<3xi32>
  %0 = nn.gather %t, %i : tensor<4x8xf32>, tensor<3xi32> -> tensor<3x8xf32>
  // CHECK: {{^}}nn-gather-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.gather' constant index -5 at position [0] is out of range for axis 0 of size 4 (valid: -4 to 3){{$}}
  func.return
}
