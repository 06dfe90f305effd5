// fusec-import of a saved torch.export ExportedProgram: its weights become arguments bound from
// OUT.params.npz (or inline), an op without a converter is one line naming the node.
// REQUIRES: torch
// RUN: %python %S/inputs/export_pt2.py %t.pt2 linear
// RUN: fusec-import %t.pt2 --inline-weights | filecheck %s
// RUN: %python %S/inputs/export_pt2.py %t-cumsum.pt2 cumsum
// RUN: not fusec-import %t-cumsum.pt2 2>&1 | filecheck %s --check-prefix=NOCONV
// RUN: %python %S/inputs/export_pt2.py %t-attention.pt2 attention
// RUN: fusec-import %t-attention.pt2 -o %t-attention.mlir --report 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: filecheck %s --check-prefix=ATTENTION < %t-attention.mlir
// RUN: echo garbage > %t-bad.pt2
// RUN: not fusec-import %t-bad.pt2 2>&1 | filecheck %s --check-prefix=CORRUPT

// CHECK:      func.func @main(%x: tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   nn.constant {{.*}} : tensor<3x4xf32>
// CHECK-NEXT:   nn.constant {{.*}} : tensor<3xf32>
// CHECK-NEXT:   nn.transpose
// CHECK-NEXT:   nn.matmul
// CHECK-NEXT:   nn.add
// CHECK-NEXT:   nn.gelu
// CHECK-NEXT:   func.return

// An attention written out (softmax(q @ k^T * scale + mask) @ v, the mask a constant causal
// triangle of 0 and finfo.min) is recognised as the ONNX import recognises it, by its values:
// REPORT: -attention.pt2: recognised: attention at node 'softmax' (2 heads of 4, causal)
// REPORT: -attention.pt2: summary: recognised 1 attention; 0 left as written
// ATTENTION: nn.attention {{.*}}{num_heads = 2 : i64, head_dim = 4 : i64, causal = true}
// ATTENTION-NOT: nn.softmax

// NOCONV: -cumsum.pt2: error: node {{.}}cumsum{{.}} (aten.cumsum): not supported
// NOCONV-NOT: Traceback

// CORRUPT: -bad.pt2: error: cannot load the ExportedProgram: {{.+}}
// CORRUPT-NOT: Traceback
