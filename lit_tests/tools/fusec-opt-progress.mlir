// Progress goes to stderr only on a terminal (after about a second) or with --progress.

// RUN: fusec-opt %s -p 'fuse-matmul-bias-act,cse' 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: {{.}}
// RUN: fusec-opt %s -p 'fuse-matmul-bias-act,cse' --progress 2>&1 >/dev/null | filecheck %s
// CHECK:      {{^}}fusec-opt: [{{[0-9.]+}} s] parsing {{.*}}fusec-opt-progress.mlir{{$}}
// CHECK-NEXT: {{^}}fusec-opt: [{{[0-9.]+}} s] pass 1/2: fuse-matmul-bias-act{{$}}
// CHECK-NEXT: {{^}}fusec-opt: [{{[0-9.]+}} s] pass 2/2: cse{{$}}
// CHECK-NEXT: {{^}}fusec-opt: [{{[0-9.]+}} s] printing{{$}}
// CHECK-NOT:  {{.}}

func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  func.return %h : tensor<8x64xf32>
}
