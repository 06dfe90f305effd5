// --print-ir-before/after/after-all/after-change: dumps on stderr, headed as MLIR heads them;
// stdout keeps only the result.

// RUN: fusec-opt %s -p 'fuse-matmul-bias-act,fuse-residual-layer-norm' --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// ALL:      {{^}}// -----// IR Dump After fuse-matmul-bias-act //----- //{{$}}
// ALL-NEXT: builtin.module {
// ALL:        fused.matmul_bias_act
// ALL:        nn.layer_norm
// ALL:      {{^}}// -----// IR Dump After fuse-residual-layer-norm //----- //{{$}}
// ALL-NEXT: builtin.module {
// ALL:        fused.residual_layer_norm
// ALL-NOT:  IR Dump

// RUN: fusec-opt %s -p 'fuse-matmul-bias-act,fuse-residual-layer-norm' --print-ir-before=fuse-residual-layer-norm 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// BEFORE-NOT: IR Dump After
// BEFORE:     {{^}}// -----// IR Dump Before fuse-residual-layer-norm //----- //{{$}}
// BEFORE:       fused.matmul_bias_act
// BEFORE:       nn.layer_norm
// BEFORE-NOT: IR Dump

// Comma-separated names; a named pipeline's passes count; generic form follows --print-op-generic.
// RUN: fusec-opt %s -p default --print-ir-after=fuse-matmul-bias-act,fuse-residual-layer-norm --print-op-generic 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// AFTER:      IR Dump After fuse-matmul-bias-act //
// AFTER:        "fused.matmul_bias_act"
// AFTER:      IR Dump After fuse-residual-layer-norm //
// AFTER-NOT:  IR Dump

// Only the passes that changed the IR (the default pipeline has 11).
// RUN: fusec-opt %s -p default --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// CHANGE:      IR Dump After fuse-matmul-bias-act //
// CHANGE:      IR Dump After fuse-residual-layer-norm //
// CHANGE-NOT:  IR Dump

// The result on stdout is the same with and without dumps.
// RUN: fusec-opt %s -p default --print-ir-after-all 2>/dev/null | filecheck %s --check-prefix=OUT
// OUT:     fused.residual_layer_norm
// OUT-NOT: IR Dump

// A name that is no pass is a command-line error (exit 2).
// RUN: not fusec-opt %s --print-ir-after=fuse-nothing 2>&1 | filecheck %s --check-prefix=BAD
// BAD: {{^}}fusec-opt: --print-ir-after: unknown pass 'fuse-nothing' (known: {{.*}}){{$}}
// RUN: sh -c 'fusec-opt %s --print-ir-before=fuse-nothing 2>/dev/null; test $? -eq 2'

func.func @layer(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>, %g: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %r = nn.add %h, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %y = nn.layer_norm %r, %g, %beta : tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
