// nn.gather, nn.erf, nn.sin and nn.cos (the ops ONNX exports need): custom form, the round
// trip through the generic form (nn-gather-invalid.mlir holds the verifier messages).

// RUN: fusec-opt %s --split-input-file | filecheck %s
// RUN: FUSEC_ROUNDTRIP
// RUN: fusec-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @unary
// CHECK-NEXT:    %{{.*}} = nn.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.sin %x : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = nn.cos %h : tensor<2xf16> -> tensor<2xf16>
// GENERIC-LABEL: "func.func"() <{sym_name = "unary"
// GENERIC:       "nn.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @unary(%x: tensor<4x8xf32>, %h: tensor<2xf16>) {
  %0 = nn.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.sin %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.cos %h : tensor<2xf16> -> tensor<2xf16>
  func.return
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK-NEXT:    %{{.*}} = nn.gather %table, %ids : tensor<100x16xf32>, tensor<2x5xi32> -> tensor<2x5x16xf32>
// CHECK-NEXT:    %{{.*}} = nn.gather %table, %ids {axis = 1 : i64} : tensor<100x16xf32>, tensor<2x5xi32> -> tensor<100x2x5xf32>
// CHECK-NEXT:    %{{.*}} = nn.gather %m, %one : tensor<3x4xi1>, tensor<i32> -> tensor<4xi1>
// GENERIC-LABEL: "func.func"() <{sym_name = "gather"
// GENERIC:       "nn.gather"(%table, %ids) <{axis = 0 : i64}> : (tensor<100x16xf32>, tensor<2x5xi32>) -> tensor<2x5x16xf32>
// GENERIC:       "nn.gather"(%table, %ids) <{axis = 1 : i64}> : (tensor<100x16xf32>, tensor<2x5xi32>) -> tensor<100x2x5xf32>
func.func @gather(%table: tensor<100x16xf32>, %ids: tensor<2x5xi32>, %m: tensor<3x4xi1>, %one: tensor<i32>) {
  %0 = nn.gather %table, %ids : tensor<100x16xf32>, tensor<2x5xi32> -> tensor<2x5x16xf32>
  %1 = nn.gather %table, %ids {axis = 1 : i64} : tensor<100x16xf32>, tensor<2x5xi32> -> tensor<100x2x5xf32>
  %2 = nn.gather %m, %one : tensor<3x4xi1>, tensor<i32> -> tensor<4xi1>
  func.return
}
