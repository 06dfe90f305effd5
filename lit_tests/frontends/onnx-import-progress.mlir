// fusec-import reports its steps on stderr only on a terminal (after about a second) or with
// --progress: reading the model, importing it, verifying, printing, writing.

// RUN: rm -rf %t && python %S/inputs/make_models.py %t
// RUN: fusec-import %t/mlp_gelu.onnx -o %t/quiet.mlir 2>&1 | filecheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: {{.}}
// RUN: fusec-import %t/mlp_gelu.onnx -o %t/mlp.mlir --progress 2>&1 | filecheck %s
// CHECK:      {{^}}fusec-import: [{{[0-9.]+}} s] reading {{.*}}mlp_gelu.onnx{{$}}
// CHECK-NEXT: {{^}}fusec-import: [{{[0-9.]+}} s] importing {{.*}}mlp_gelu.onnx{{$}}
// CHECK-NEXT: {{^}}fusec-import: [{{[0-9.]+}} s] verifying the imported IR{{$}}
// CHECK-NEXT: {{^}}fusec-import: [{{[0-9.]+}} s] printing the IR{{$}}
// CHECK-NEXT: {{^}}fusec-import: [{{[0-9.]+}} s] writing {{.*}}mlp.params.npz, {{.*}}mlp.mlir{{$}}
// CHECK-NOT:  {{.}}
// The IR printed to stdout is the same with --progress (the lines go to stderr).
// RUN: fusec-import %t/mlp_gelu.onnx --inline-weights --progress 2>/dev/null > %t/stdout.mlir
// RUN: fusec-import %t/mlp_gelu.onnx --inline-weights > %t/plain.mlir
// RUN: cmp %t/stdout.mlir %t/plain.mlir
