// fuse-launches{budget=N}: the planner's accounting on the chain add -> mul -> relu -> exp
// over 4x8xf32 (B = 128 bytes per tensor). A group needs its first kernel's inputs, outputs
// (and scratch) plus each further kernel's outputs: add alone 3B (x, y -> a), + mul 4B,
// + relu 5B, + exp 6B; relu alone 2B, relu + exp 3B.

// RUN: fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=768}' | filecheck %s --check-prefix=ONE
// RUN: fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=512}' | filecheck %s --check-prefix=TWO
// RUN: fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=384}' | filecheck %s --check-prefix=THREE
// RUN: fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=767}' | filecheck %s --check-prefix=BELOW-SIX
// RUN: fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=300 allow-oversized=true}' | filecheck %s --check-prefix=OVERSIZED

// 6B: everything in one launch.
// ONE-LABEL: func.func @chain(
// ONE-NEXT:    %d = memref.alloc()
// ONE-NEXT:    kernel.launch @chain_add_0_fused4(%x, %y, %z, %d)
// ONE-NEXT:    func.return %d

// 4B: add + mul (4B), then relu + exp (3B): 2 launches, b handed between them.
// TWO-LABEL: func.func @chain(
// TWO-NEXT:    %b = memref.alloc()
// TWO-NEXT:    kernel.launch @chain_add_0_fused2(%x, %y, %z, %b)
// TWO-NEXT:    %d = memref.alloc()
// TWO-NEXT:    kernel.launch @chain_relu_2_fused2(%b, %d)
// TWO-NEXT:    func.return %d

// 3B: add alone (3B; + mul would be 4B), mul alone (x, z -> b: 3B), relu + exp (3B).
// THREE-LABEL: func.func @chain(
// THREE-NEXT:    %a = memref.alloc()
// THREE-NEXT:    kernel.launch @chain_add_0(%x, %y, %a)
// THREE-NEXT:    %b = memref.alloc()
// THREE-NEXT:    kernel.launch @chain_mul_1(%a, %z, %b)
// THREE-NEXT:    %d = memref.alloc()
// THREE-NEXT:    kernel.launch @chain_relu_2_fused2(%b, %d)
// THREE-NEXT:    func.return %d

// One byte under 6B: add + mul + relu (5B), exp alone.
// BELOW-SIX-LABEL: func.func @chain(
// BELOW-SIX-NEXT:    %c = memref.alloc()
// BELOW-SIX-NEXT:    kernel.launch @chain_add_0_fused3(%x, %y, %z, %c)
// BELOW-SIX-NEXT:    %d = memref.alloc()
// BELOW-SIX-NEXT:    kernel.launch @chain_exp_3(%c, %d)
// BELOW-SIX-NEXT:    func.return %d
// allow-oversized (fusec-run's default budget): add and mul alone need 3B > 300 bytes and stay
// as they are instead of failing; relu (2B) + exp would need 3B: 4 launches.
// OVERSIZED-LABEL: func.func @chain(
// OVERSIZED:         kernel.launch @chain_add_0(%x, %y, %a)
// OVERSIZED:         kernel.launch @chain_mul_1(%a, %z, %b)
// OVERSIZED:         kernel.launch @chain_relu_2(%b, %c)
// OVERSIZED:         kernel.launch @chain_exp_3(%c, %d)
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = nn.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = nn.mul %a, %z : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = nn.relu %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.exp %c : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
