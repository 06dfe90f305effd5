// fuse-launches errors: the planner's, one line at the function's location with its Fix:
// sentence, exit code 1; a negative budget is a bad option.

// add needs 384 bytes (x, y, a: 3 x 128).
// RUN: not fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=383}' 2>&1 | filecheck %s --check-prefix=OVER
// OVER: fuse-launches-invalid.mlir:16:1: error: fuse-launches: @chain: launch fusion stage 0 (@chain_add_0) requires 384 bytes but the budget allows 383. Fix: shard the stage or raise the explicit fusion budget.
// OVER-NOT: Traceback
// RUN: sh -c "fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=383}' 2>/dev/null; test \$? -eq 1"

// RUN: not fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: fuse-launches-invalid.mlir:16:1: error: fuse-launches: @chain: launch fusion received a zero byte budget. Fix: pass an explicit device-memory budget before planning fusion.

// RUN: not fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE: fusec-opt: bad options for pass 'fuse-launches': budget must be >= 0, got -1

func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = nn.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.exp %a : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
