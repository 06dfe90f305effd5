// A kernel that the OpenCL compiler rejects is named with the file:line:col of the op it
// computes; a launch that merges several ops' kernels (fuse-launches) names all of them, the
// first on the line ("(and N more)"), each with --verbose. inputs/break_kernel.py plants an
// unknown type on the signature of the program's kernel number N (a test hook).
// Exit code 4, one line, no traceback.

// RUN: sh -c 'python %S/inputs/break_kernel.py 1 fusec-run %s --function mlp --device cpu 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=SOFTMAX
// SOFTMAX-NOT: Traceback
// SOFTMAX: {{^}}{{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 24]]:3: error: kernel 'mlp_softmax_1': OpenCL build failed on {{.*}}: {{.*}}error: unknown type name 'planted_unknown_type' (--verbose for the log){{$}}
// SOFTMAX-NEXT: exit=4

// The GEMM with its bias (fused.matmul_bias_act) has MLIR's fused location of the add it
// replaced (first) and the matmul it absorbed.
// RUN: not python %S/inputs/break_kernel.py 0 fusec-run %s --function mlp --device cpu --verbose 2>&1 | filecheck %s --check-prefix=GEMM
// GEMM: {{^}}{{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 17]]:3 (and 1 more): error: kernel 'mlp_gemm_0': OpenCL build failed on
// GEMM: kernel 'mlp_gemm_0' computes the op at {{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 16]]:3
// GEMM-NEXT: kernel 'mlp_gemm_0' computes the op at {{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 14]]:3

// Three elementwise ops, unfused (-p none), merged into one launch.
// RUN: not python %S/inputs/break_kernel.py 0 fusec-run %s --function chain -p none --device cpu 2>&1 | filecheck %s --check-prefix=MERGED
// MERGED: {{^}}{{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 17]]:3 (and 2 more): error: kernel 'chain_add_0_fused3': OpenCL build failed on {{.*}} (--verbose for the log){{$}}
// RUN: not python %S/inputs/break_kernel.py 0 fusec-run %s --function chain -p none --device cpu --verbose 2>&1 | filecheck %s --check-prefix=VERBOSE
// VERBOSE: {{^}}{{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 15]]:3 (and 2 more): error: kernel 'chain_add_0_fused3': OpenCL build failed on {{.*}}unknown type name 'planted_unknown_type'{{$}}
// VERBOSE:      kernel 'chain_add_0_fused3' computes the op at {{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 14]]:3
// VERBOSE-NEXT: kernel 'chain_add_0_fused3' computes the op at {{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 14]]:3
// VERBOSE-NEXT: kernel 'chain_add_0_fused3' computes the op at {{.*}}fusec-run-kernel-locations.mlir:[[# @LINE + 14]]:3
// VERBOSE-NEXT: build options:
// VERBOSE: --- build log ---

func.func @mlp(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %s = nn.softmax %h : tensor<8x64xf32> -> tensor<8x64xf32>
  func.return %s : tensor<8x64xf32>
}

func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %r = nn.relu %y : tensor<4x8xf32> -> tensor<4x8xf32>
  %e = nn.exp %r : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %e : tensor<4x8xf32>
}
