// fusec-import on small models written by inputs/make_models.py: the IR (one @main, arguments
// in graph-input order then the weights, results in graph-output order), weights beside it and
// named by fusec.params, shape subgraphs folded, the erf GELU recognised, int64 ids as i32,
// and the one-line error for an unsupported op.

// RUN: rm -rf %t && python %S/inputs/make_models.py %t
// RUN: fusec-import %t/mlp_gelu.onnx -o %t/mlp_gelu.mlir && cat %t/mlp_gelu.mlir | filecheck %s --check-prefix=MLP
// RUN: test -f %t/mlp_gelu.params.npz
// RUN: fusec-run %t/mlp_gelu.mlir --device cpu --check | filecheck %s --check-prefix=RESULT
// RUN: fusec-opt %t/mlp_gelu.mlir -p default | filecheck %s --check-prefix=FUSED
// RUN: fusec-import %t/embedding.onnx -o %t/emb.mlir && cat %t/emb.mlir | filecheck %s --check-prefix=EMB
// RUN: fusec-import %t/embedding.onnx --inline-weights | filecheck %s --check-prefix=INLINE
// RUN: sh -c 'fusec-import %t/unsupported.onnx -o %t/unsupported.mlir; echo "exit=$?"' 2>&1 | filecheck %s -DFILE=%t/unsupported.onnx --check-prefix=ERR
// RUN: not test -e %t/unsupported.mlir

// MLP:      builtin.module attributes {fusec.params = "mlp_gelu.params.npz"} {
// MLP-NEXT:   func.func @main(%input: tensor<2x3x8xf32>, %fc1_weight: tensor<8x32xf32>, %fc1_bias: tensor<32xf32>, %fc2_weight: tensor<96x4xf32>) -> tensor<2x4xf32> {
// MLP-NEXT:     %[[H:.*]] = nn.matmul %input, %fc1_weight : tensor<2x3x8xf32>, tensor<8x32xf32> -> tensor<2x3x32xf32>
// MLP-NEXT:     %[[B:.*]] = nn.add %[[H]], %fc1_bias : tensor<2x3x32xf32>, tensor<32xf32> -> tensor<2x3x32xf32>
// MLP-NEXT:     %[[G:.*]] = nn.gelu %[[B]] : tensor<2x3x32xf32> -> tensor<2x3x32xf32>
// MLP-NEXT:     %[[R:.*]] = nn.reshape %[[G]] : tensor<2x3x32xf32> -> tensor<2x96xf32>
// MLP-NEXT:     %[[Y:.*]] = nn.matmul %[[R]], %fc2_weight : tensor<2x96xf32>, tensor<96x4xf32> -> tensor<2x4xf32>
// MLP-NEXT:     func.return %[[Y]] : tensor<2x4xf32>

// RESULT: result0: max abs error {{.*}}: ok

// FUSED:      fused.matmul_bias_act %input, %fc1_weight, %fc1_bias {activation = "gelu"}
// FUSED-NEXT: nn.reshape
// FUSED-NEXT: nn.matmul

// EMB:      func.func @main(%input_ids: tensor<1x5xi32>, %wte: tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xi1>) {
// EMB-NEXT:   %[[E:.*]] = nn.gather %wte, %input_ids : tensor<10x4xf32>, tensor<1x5xi32> -> tensor<1x5x4xf32>
// EMB-NEXT:   %[[Z:.*]] = nn.constant {value = dense<0> : tensor<i32>} : tensor<i32>
// EMB-NEXT:   %[[C:.*]] = nn.cmp %input_ids, %[[Z]] {predicate = "eq"} : tensor<1x5xi32>, tensor<i32> -> tensor<1x5xi1>
// EMB:        %[[K:.*]] = nn.where %[[C]]
// EMB-NEXT:   func.return %[[E]], %[[K]] : tensor<1x5x4xf32>, tensor<1x5xi1>

// ERR:      [[FILE]]: error: node '/encoder/Round' (Round): not supported
// ERR-NEXT: exit=1

// INLINE:      builtin.module {
// INLINE-NEXT:   func.func @main(%input_ids: tensor<1x5xi32>) -> (tensor<1x5x4xf32>, tensor<1x5xi1>) {
// INLINE-NEXT:     %[[T:.*]] = nn.constant {value = dense<{{\[\[}}{{.*}}]]> : tensor<10x4xf32>} : tensor<10x4xf32>
// INLINE-NEXT:     nn.gather %[[T]], %input_ids
