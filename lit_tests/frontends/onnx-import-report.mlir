// fusec-import --report: one line per recognised op (with the ONNX node it came from) and per
// op left as written (with why), then a summary; on stderr, the IR written as without it.

// RUN: rm -rf %t && mkdir -p %t
// RUN: fusec-import %S/../../tests/frontends/models/hf_llama_sdpa_dynamo_op18.onnx -o %t/llama.mlir --report 2>&1 | filecheck %s --check-prefix=LLAMA
// RUN: fusec-import %S/../../tests/frontends/models/hf_mistral_sdpa_torchscript_op17.onnx -o %t/mistral.mlir --report 2>&1 | filecheck %s --check-prefix=MISTRAL
// RUN: test -f %t/mistral.mlir

// LLAMA: hf_llama_sdpa_dynamo_op18.onnx: recognised: RMSNorm at node 'node_mul_4'
// LLAMA: hf_llama_sdpa_dynamo_op18.onnx: recognised: attention at node 'node_Softmax_155' (4 heads of 8, key mask, causal, key/value heads repeated (grouped-query))
// LLAMA: recognised: SiLU at node 'node_silu'
// LLAMA: summary: recognised 5 RMSNorm, 2 attention, 2 SiLU; 0 left as written

// MISTRAL: recognised: attention at node '/model/layers.0/self_attn/Softmax' (4 heads of 8, key mask, causal, sliding window of 4 keys, key/value heads repeated (grouped-query))
// MISTRAL: summary: recognised 5 RMSNorm, 2 attention, 2 SiLU; 0 left as written

// torch's TransformerEncoder: its (S, B*H, D) layout and its `where(pad, -inf, 0)` padding mask
// are recognised as attention with a key mask:
// RUN: fusec-import %S/../../tests/frontends/models/torch_encoder_torchscript_op17.onnx -o %t/enc.mlir --report 2>&1 | filecheck %s --check-prefix=ENCODER
// ENCODER: recognised: attention at node '/encoder/layers.0/self_attn/Softmax' (4 heads of 8, key mask)
// ENCODER: summary: recognised 2 attention, 4 LayerNorm; 0 left as written
