// --rewrite-limit=N makes only fusion rewrites #0 .. #N-1 of the whole pipeline, in a
// deterministic order; with --remarks each rewrite (made or refused) is named by its number.

// RUN: fusec-opt %s -p default --rewrite-limit=0 | filecheck %s --check-prefix=NONE
// NONE-NOT: fused.
// RUN: fusec-opt %s -p default --rewrite-limit=1 | filecheck %s --check-prefix=ONE
// ONE:     fused.matmul_bias_act %x, %w1, %b1 :
// ONE-NOT: fused.
// RUN: fusec-opt %s -p default --rewrite-limit=2 | filecheck %s --check-prefix=TWO
// TWO:     fused.matmul_bias_act %x, %w1, %b1 {activation = "gelu"}
// TWO-NOT: fused.
// A limit at or above the number of rewrites changes nothing.
// RUN: fusec-opt %s -p default --rewrite-limit=100 > %t.limit
// RUN: fusec-opt %s -p default > %t.all
// RUN: diff %t.limit %t.all

// RUN: fusec-opt %s -p default --rewrite-limit=2 --remarks=all 2>&1 >/dev/null | filecheck %s --check-prefix=REMARKS
// REMARKS:      fusec-opt-rewrite-limit.mlir:[[# @LINE + 14]]:3: remark: [fuse-matmul-bias-act] fused #0: fused.matmul_bias_act
// REMARKS-NEXT: fusec-opt-rewrite-limit.mlir:[[# @LINE + 14]]:3: remark: [fuse-matmul-bias-act] fused #1: fused.matmul_bias_act{activation=gelu}
// REMARKS-NEXT: fusec-opt-rewrite-limit.mlir:[[# @LINE + 15]]:3: remark: [fuse-matmul-bias-act] not fused: rewrite #2 is beyond --rewrite-limit=2
// REMARKS-NEXT: fusec-opt-rewrite-limit.mlir:[[# @LINE + 16]]:3: remark: [fuse-residual-layer-norm] not fused: rewrite #3 is beyond --rewrite-limit=2
// REMARKS-NEXT: fusec-opt-rewrite-limit.mlir:[[# @LINE + 14]]:3: remark: [fuse-elementwise] not fused: rewrite #4 is beyond --rewrite-limit=2
// REMARKS-NEXT: fusec-opt-rewrite-limit.mlir:[[# @LINE + 12]]:3: remark: [fuse-matmul-epilogue] not fused: rewrite #5 is beyond --rewrite-limit=2
// REMARKS-NEXT: fusec-opt-rewrite-limit.mlir:[[# @LINE + 12]]:3: remark: [fuse-multi-output] not fused: rewrite #6 is beyond --rewrite-limit=2
// REMARKS-NOT:  remark

// RUN: not fusec-opt %s --rewrite-limit=-1 2>&1 | filecheck %s --check-prefix=BAD
// BAD: {{^}}fusec-opt: error: Invalid value for '--rewrite-limit': -1 is not in the range x>=0 (see 'fusec-opt --help'){{$}}

func.func @mlp(%x: tensor<8x64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>, %w2: tensor<256x64xf32>, %b2: tensor<64xf32>, %g: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<8x64xf32> {
  %fc1_mm = nn.matmul %x, %w1 : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  %fc1 = nn.add %fc1_mm, %b1 : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
  %act = nn.gelu %fc1 : tensor<8x256xf32> -> tensor<8x256xf32>
  %fc2_mm = nn.matmul %act, %w2 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32>
  %fc2 = nn.add %fc2_mm, %b2 : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %res = nn.add %fc2, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %y = nn.layer_norm %res, %g, %beta : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
