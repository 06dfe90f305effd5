// Opset 23's Attention and RotaryEmbedding (frontends/onnx_attention.py): grouped-query causal
// attention on [B, S, hidden] operands becomes one nn.attention; a rotary embedding at
// position_ids becomes gathers of the caches and elementwise ops; the forms refused are one
// line naming the node, exit 1, nothing written.

// RUN: rm -rf %t && python %S/inputs/make_models.py %t
// RUN: fusec-import %t/attention.onnx | filecheck %s --check-prefix=ATT
// ATT:      func.func @main(%q: tensor<1x4x32xf32>, %k: tensor<1x4x16xf32>, %v: tensor<1x4x16xf32>) -> tensor<1x4x32xf32> {
// ATT-NEXT:   %[[Y:.*]] = nn.attention %q, %k, %v {num_heads = 4 : i64, head_dim = 8 : i64, causal = true, scale = 0.353553385 : f32, num_kv_heads = 2 : i64} : tensor<1x4x32xf32>, tensor<1x4x16xf32>, tensor<1x4x16xf32> -> tensor<1x4x32xf32>
// ATT-NEXT:   func.return %[[Y]]
// RUN: fusec-run %t/attention.onnx --device cpu --random 0 --check | filecheck %s --check-prefix=OK
// RUN: fusec-run %t/rotary.onnx --device cpu --random 0 --check | filecheck %s --check-prefix=OK
// OK: max abs error {{.*}}: ok

// RUN: fusec-import %t/rotary.onnx -o %t/rotary.mlir && cat %t/rotary.mlir | filecheck %s --check-prefix=ROPE
// ROPE:      %[[COS:.*]] = nn.gather %cos, %position_ids : tensor<16x2xf32>, tensor<1x3xi32> -> tensor<1x3x2xf32>
// ROPE-NEXT: %[[SIN:.*]] = nn.gather %sin, %position_ids : tensor<16x2xf32>, tensor<1x3xi32> -> tensor<1x3x2xf32>
// ROPE-NEXT: %[[C:.*]] = nn.reshape %[[COS]] : tensor<1x3x2xf32> -> tensor<1x1x3x2xf32>
// ROPE-NEXT: %[[S:.*]] = nn.reshape %[[SIN]] : tensor<1x3x2xf32> -> tensor<1x1x3x2xf32>
// ROPE-NEXT: %[[R:.*]] = nn.narrow %x {axis = 3 : i64, start = 0 : i64, length = 4 : i64}
// ROPE-NEXT: %[[X1:.*]] = nn.narrow %[[R]] {axis = 3 : i64, start = 0 : i64, length = 2 : i64}
// ROPE-NEXT: %[[X2:.*]] = nn.narrow %[[R]] {axis = 3 : i64, start = 2 : i64, length = 2 : i64}
// ROPE-NEXT: %[[A:.*]] = nn.mul %[[C]], %[[X1]]
// ROPE-NEXT: %[[B:.*]] = nn.mul %[[S]], %[[X2]]
// ROPE-NEXT: %[[REAL:.*]] = nn.sub %[[A]], %[[B]]
// ROPE-NEXT: %[[E:.*]] = nn.mul %[[S]], %[[X1]]
// ROPE-NEXT: %[[F:.*]] = nn.mul %[[C]], %[[X2]]
// ROPE-NEXT: %[[IMAG:.*]] = nn.add %[[E]], %[[F]]
// ROPE-NEXT: %[[TURNED:.*]] = nn.concat %[[REAL]], %[[IMAG]] {axis = 3 : i64}
// ROPE-NEXT: %[[PASS:.*]] = nn.narrow %x {axis = 3 : i64, start = 4 : i64, length = 4 : i64}
// ROPE-NEXT: %[[Y:.*]] = nn.concat %[[TURNED]], %[[PASS]] {axis = 3 : i64}
// ROPE-NEXT: func.return %[[Y]]
// RUN: fusec-opt %t/rotary.mlir -p default | filecheck %s --check-prefix=ROPE-FUSED
// ROPE-FUSED-COUNT-2: nn.gather
// ROPE-FUSED-COUNT-1: fused.elementwise
// ROPE-FUSED-NOT: nn.concat

// RUN: sh -c 'fusec-import %t/attention_no_heads.onnx -o %t/a.mlir 2>&1; echo "exit=$?"' | filecheck %s -DFILE=%t/attention_no_heads.onnx --check-prefix=HEADS
// HEADS: {{^}}[[FILE]]: error: node '/attn/Attention' (Attention): 3-D q, k and v need the q_num_heads and kv_num_heads attributes{{$}}
// HEADS-NEXT: {{^}}exit=1{{$}}
// RUN: not test -e %t/a.mlir
// RUN: sh -c 'fusec-import %t/rotary_odd.onnx -o %t/r.mlir 2>&1; echo "exit=$?"' | filecheck %s -DFILE=%t/rotary_odd.onnx --check-prefix=ODD
// ODD: {{^}}[[FILE]]: error: node '/rope/RotaryEmbedding' (RotaryEmbedding): rotary_embedding_dim 5 must be even and at most the head size 8{{$}}
// ODD-NEXT: {{^}}exit=1{{$}}
// RUN: not test -e %t/r.mlir
