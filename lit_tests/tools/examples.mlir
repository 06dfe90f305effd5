// The models in examples/ parse, verify and fuse as their comments say (others build on them).

// RUN: fusec-opt %S/../../examples/mlp.mlir -p default | filecheck %s --check-prefix=MLP
// MLP-LABEL: func.func @mlp(
// MLP-NEXT:    %[[ACT:.+]] = fused.matmul_bias_act %x, %w1, %b1 {activation = "gelu"} : tensor<8x64xf32>, tensor<64x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
// MLP-NEXT:    %[[FC2:.+]] = fused.matmul_bias_act %[[ACT]], %w2, %b2 : tensor<8x256xf32>, tensor<256x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
// MLP-NEXT:    %[[Y:.+]] = fused.residual_layer_norm %[[FC2]], %x, %gamma, %beta : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
// MLP-NEXT:    func.return %[[Y]] : tensor<8x64xf32>

// RUN: fusec-opt %S/../../examples/bert_layer_small.mlir -p default | filecheck %s --check-prefix=BERT
// BERT-LABEL: func.func @bert_layer_small(
// BERT-NEXT:    %[[OUT:.+]] = fused.transformer_layer %hidden, %mask, %qkv_w, %qkv_b, %out_w, %out_b, %ln1_g, %ln1_b, %fc1_w, %fc1_b, %fc2_w, %fc2_b, %ln2_g, %ln2_b {num_heads = 4 : i64, head_dim = 16 : i64, intermediate_size = 256 : i64, eps1 = 1.000000e-12 : f32, eps2 = 1.000000e-12 : f32}
// BERT-NEXT:    func.return %[[OUT]] : tensor<1x8x64xf32>

// Un-fusing gives the nn program back, op for op.
// RUN: fusec-opt %S/../../examples/bert_layer_small.mlir -p default,unfuse | filecheck %s --check-prefix=UNFUSE
// UNFUSE-LABEL: func.func @bert_layer_small(
// UNFUSE:         nn.matmul %hidden, %qkv_w
// UNFUSE-COUNT-3: nn.narrow
// UNFUSE-NEXT:    nn.attention {{.*}} mask %mask {num_heads = 4 : i64, head_dim = 16 : i64}
// UNFUSE-NEXT:    nn.matmul {{.*}}, %out_w
// UNFUSE:         nn.layer_norm {{.*}}, %ln1_g, %ln1_b
// UNFUSE:         nn.gelu
// UNFUSE:         nn.layer_norm {{.*}}, %ln2_g, %ln2_b
// UNFUSE-NOT:     fused.

// Every example verifies and round-trips through the generic form.
// RUN: fusec-opt %S/../../examples/bert_layer.mlir --print-op-generic | fusec-opt - > %t.bert
// RUN: fusec-opt %S/../../examples/bert_layer.mlir | diff - %t.bert
// RUN: fusec-opt %S/../../examples/llama_block.mlir --print-op-generic | fusec-opt - > %t.llama
// RUN: fusec-opt %S/../../examples/llama_block.mlir | diff - %t.llama
// RUN: fusec-opt %S/../../examples/mlp.mlir --print-op-generic | fusec-opt - > %t.mlp
// RUN: fusec-opt %S/../../examples/mlp.mlir | diff - %t.mlp
