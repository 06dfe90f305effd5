// -t dot draws the function: inputs and return as ellipses, a box per op with its type, each
// fused op as a cluster of the nn ops it replaced, edges labelled with tensor and size.

// RUN: fusec-opt %s -p default -t dot | filecheck %s
// CHECK:      digraph "block" {
// CHECK:        n0 [label="%x\n4x16xf32", shape=ellipse
// CHECK:        n3 [label="%r\n4x32xf32", shape=ellipse
// CHECK:        subgraph cluster_[[C:[0-9]+]] {
// CHECK-NEXT:     label="fused.matmul_epilogue\n4x32xf32"; style="rounded"
// CHECK-NEXT:     [[MM:n[0-9]+]] [label="nn.matmul\n4x32xf32"];
// CHECK-NEXT:     [[ADD:n[0-9]+]] [label="nn.add\n4x32xf32"];
// CHECK-NEXT:     [[RELU:n[0-9]+]] [label="nn.relu\n4x32xf32"];
// CHECK-NEXT:     [[EXP:n[0-9]+]] [label="nn.exp\n4x32xf32"];
// CHECK-NEXT:   }
// CHECK:        n0 -> [[MM]] [label="4x16xf32, 256 B"];
// CHECK:        [[RELU]] -> [[EXP]] [label="4x32xf32, 512 B"];
// CHECK:      }

// kernels=true names each op's kernels on the chosen device.
// RUN: fusec-opt %s -p default -t 'dot{kernels=true device=gpu}' | filecheck %s --check-prefix=KERNELS
// KERNELS: label="fused.matmul_epilogue\n4x32xf32\nkernel: gemm"

// Errors: a bad option value, and kernel-level IR.
// RUN: not fusec-opt %s -t 'dot{device=tpu}' 2>&1 | filecheck %s --check-prefix=BADDEV
// BADDEV: fusec-opt: bad options for target 'dot': device 'tpu' is not one of cpu, gpu
// RUN: not fusec-opt %s -p lower-opencl -t dot 2>&1 | filecheck %s --check-prefix=LOWERED
// LOWERED: dot target: @block is kernel-level IR; draw the tensor-level IR (before lower-opencl)

// fusec-run --dot writes the fused graph with its kernels beside the run.
// RUN: rm -f %t.dot && fusec-run %s --dot %t.dot --check | filecheck %s --check-prefix=RAN
// RUN: filecheck %s --check-prefix=RUNDOT < %t.dot
// RUN: not fusec-run %s --dot %s 2>&1 | filecheck %s --check-prefix=SAME
// RUN: not fusec-run %s --dot %t.missing/x.dot 2>&1 | filecheck %s --check-prefix=NODIR
// RUN: not ls %t.missing
// RUN: sh -c 'fusec-run %s --dot /dev/null; echo rc=$?' | filecheck %s --check-prefix=DEVNULL
// RUN: test -c /dev/null
// RAN: result0: max abs error {{.*}}: ok
// RUNDOT: kernel: gemm
// SAME: error: the output is an input of this run
// NODIR: x.dot: error: cannot write output: No such file or directory
// DEVNULL: rc=0

func.func @block(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>,
                 %r: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %mm = nn.matmul %x, %w : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x32xf32>
  %a = nn.add %mm, %b : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32>
  %y = nn.relu %a : tensor<4x32xf32> -> tensor<4x32xf32>
  %e = nn.exp %y : tensor<4x32xf32> -> tensor<4x32xf32>
  func.return %e : tensor<4x32xf32>
}
