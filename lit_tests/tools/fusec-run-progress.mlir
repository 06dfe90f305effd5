// fusec-run reports its compile steps on stderr only on a terminal (after about a second) or
// with --progress: parsing, each pass (the fusion pipeline, then the lowering), the OpenCL C,
// the OpenCL build, the run. The outputs on stdout are unchanged.

// RUN: fusec-run %s --device cpu 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: {{.}}
// RUN: fusec-run %s --device cpu -p 'fuse-matmul-bias-act' --progress 2>&1 >/dev/null | filecheck %s
// CHECK:      {{^}}fusec-run: [{{[0-9.]+}} s] parsing {{.*}}fusec-run-progress.mlir{{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] pass 1/4: fuse-matmul-bias-act{{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] pass 2/4: lower-to-kernels{{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] pass 3/4: fuse-launches{{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] pass 4/4: plan-buffers{{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] generating the OpenCL C of @f{{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] building the OpenCL program of @f (2 kernels){{$}}
// CHECK-NEXT: {{^}}fusec-run: [{{[0-9.]+}} s] running{{$}}
// CHECK-NOT:  {{.}}
// RUN: fusec-run %s --device cpu --progress 2>/dev/null | filecheck %s --check-prefix=OUT
// OUT: {{^}}result0: float32[8, 64]{{$}}

func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %s = nn.softmax %h : tensor<8x64xf32> -> tensor<8x64xf32>
  func.return %s : tensor<8x64xf32>
}
