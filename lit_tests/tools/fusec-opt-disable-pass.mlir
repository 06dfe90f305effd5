// --disable-pass removes passes from the pipeline, named pipelines included.

// RUN: fusec-opt %s -p default | filecheck %s --check-prefix=ALL
// ALL: fused.matmul_bias_act
// ALL: fused.residual_layer_norm

// RUN: fusec-opt %s -p default --disable-pass=fuse-matmul-bias-act | filecheck %s --check-prefix=NOMM
// NOMM-NOT: fused.matmul_bias_act
// (the bias add then becomes the epilogue of fuse-matmul-epilogue)
// NOMM:     fused.matmul_epilogue
// NOMM:     fused.residual_layer_norm

// RUN: fusec-opt %s -p default --disable-pass fuse-matmul-bias-act,fuse-residual-layer-norm --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=NONE
// NONE-NOT: IR Dump After fuse-matmul-bias-act
// NONE:     IR Dump After fuse-attention-block
// NONE-NOT: IR Dump After fuse-residual-layer-norm
// NONE:     IR Dump After fuse-reductions

// RUN: not fusec-opt %s -p default --disable-pass=fuse-nothing 2>&1 | filecheck %s --check-prefix=BAD
// BAD: {{^}}fusec-opt: --disable-pass: unknown pass 'fuse-nothing' (known: {{.*}}){{$}}
// RUN: sh -c 'fusec-opt %s --disable-pass=fuse-nothing 2>/dev/null; test $? -eq 2'

func.func @layer(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %g: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %r = nn.add %h, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %y = nn.layer_norm %r, %g, %beta : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
