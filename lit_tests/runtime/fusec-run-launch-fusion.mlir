// fusec-run and launch fusion: with -p none the chain add -> mul -> relu -> exp runs as one
// launch (it was 4) and matches the numpy reference; budgets that allow two stages or one per
// group give 2 or 3 launches (the accounting of fuse-launches-budget.mlir, B = 128 bytes);
// a budget below one kernel's bytes and a zero budget fail in one line, exit 1.

// RUN: fusec-run %s -p none --device cpu --profile --check | filecheck %s --check-prefix=FUSED
// FUSED:      chain_add_0_fused4:
// FUSED-NEXT: kernels: {{.*}} in 1 launches
// FUSED:      result0: max abs error {{.*}}: ok

// RUN: fusec-run %s -p none --device cpu --profile --check --no-launch-fusion | filecheck %s --check-prefix=UNFUSED
// UNFUSED:      chain_add_0:
// UNFUSED-NEXT: chain_mul_1:
// UNFUSED-NEXT: chain_relu_2:
// UNFUSED-NEXT: chain_exp_3:
// UNFUSED-NEXT: kernels: {{.*}} in 4 launches
// UNFUSED:      result0: max abs error {{.*}}: ok

// RUN: fusec-run %s -p none --device cpu --profile --check --launch-budget 512 | filecheck %s --check-prefix=TWO
// TWO:      chain_add_0_fused2:
// TWO-NEXT: chain_relu_2_fused2:
// TWO-NEXT: kernels: {{.*}} in 2 launches
// TWO:      result0: max abs error {{.*}}: ok

// RUN: fusec-run %s -p none --device cpu --profile --check --launch-budget 384 | filecheck %s --check-prefix=THREE
// THREE:      chain_add_0:
// THREE-NEXT: chain_mul_1:
// THREE-NEXT: chain_relu_2_fused2:
// THREE-NEXT: kernels: {{.*}} in 3 launches
// THREE:      result0: max abs error {{.*}}: ok

// RUN: sh -c 'fusec-run %s -p none --device cpu --launch-budget 100 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=OVER
// OVER:      fusec-run-launch-fusion.mlir:47:1: error: fuse-launches: @chain: launch fusion stage 0 (@chain_add_0) requires 384 bytes but the budget allows 100. Fix: shard the stage or raise the explicit fusion budget.
// OVER-NEXT: exit=1

// RUN: sh -c 'fusec-run %s -p none --device cpu --launch-budget 0 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=ZERO
// ZERO:      error: fuse-launches: @chain: launch fusion received a zero byte budget. Fix: pass an explicit device-memory budget before planning fusion.
// ZERO-NEXT: exit=1

// RUN: sh -c 'fusec-run %s -p none --launch-budget -5 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE:      fusec-run: error: Invalid value for '--launch-budget'
// NEGATIVE-NEXT: exit=2
// RUN: sh -c 'fusec-run %s -p none --launch-budget 5 --no-launch-fusion 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=BOTH
// BOTH:      fusec-run: error: --launch-budget and --no-launch-fusion exclude each other
// BOTH-NEXT: exit=2

func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = nn.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = nn.mul %a, %z : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = nn.relu %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.exp %c : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
