// Out-of-range indices in an imported model are one line and exit 1, never numbers: a token id
// outside the embedding table at the call (also under --check, which no longer says ok), a
// constant index at import. In-range negative ids count from the end.

// RUN: rm -rf %t && python %S/inputs/make_models.py %t
// RUN: python -c "import numpy as np; np.savez('%t/bad.npz', input_ids=np.array([[1, 2, 12, 3, 4]], np.int64))"
// RUN: sh -c 'fusec-run %t/embedding.onnx --device cpu --inputs %t/bad.npz -o %t/out.npz 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=BAD
// BAD: {{^}}fusec-run: error: index 12 at position [0, 2] of input 'input_ids' is out of range for axis 0 of size 10 (valid: -10 to 9){{$}}
// BAD-NEXT: {{^}}exit=1{{$}}
// RUN: not test -e %t/out.npz

// RUN: sh -c 'fusec-run %t/embedding.onnx --device cpu --inputs %t/bad.npz --check 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=CHECK-BAD
// CHECK-BAD-NOT: ok
// CHECK-BAD: {{^}}fusec-run: error: index 12 at position [0, 2] of input 'input_ids' is out of range for axis 0 of size 10 (valid: -10 to 9){{$}}
// CHECK-BAD-NEXT: {{^}}exit=1{{$}}

// RUN: python -c "import numpy as np; np.savez('%t/low.npz', input_ids=np.array([[1, -10, -11, 3, 4]], np.int64))"
// RUN: not fusec-run %t/embedding.onnx --device cpu --inputs %t/low.npz 2>&1 | filecheck %s --check-prefix=LOW
// LOW: {{^}}fusec-run: error: index -11 at position [0, 2] of input 'input_ids' is out of range for axis 0 of size 10 (valid: -10 to 9){{$}}

// RUN: python -c "import numpy as np; np.savez('%t/good.npz', input_ids=np.array([[1, -10, 9, -1, 0]], np.int64))"
// RUN: fusec-run %t/embedding.onnx --device cpu --inputs %t/good.npz --check | filecheck %s --check-prefix=GOOD
// GOOD: result0: max abs error {{.*}}: ok

// RUN: sh -c 'fusec-import %t/constant_gather.onnx -o %t/cg.mlir 2>&1; echo "exit=$?"' | filecheck %s -DFILE=%t/constant_gather.onnx --check-prefix=CONST
// CONST: {{^}}[[FILE]]: error: node '/Gather_2' (Gather): index 9 at position [1] is out of range for axis 0 of [4, 3]{{$}}
// CONST-NEXT: {{^}}exit=1{{$}}
// RUN: not test -e %t/cg.mlir

// RUN: sh -c 'fusec-import %t/constant_gather_elements.onnx -o %t/cge.mlir 2>&1; echo "exit=$?"' | filecheck %s -DFILE=%t/constant_gather_elements.onnx --check-prefix=CONST-ELEMENTS
// CONST-ELEMENTS: {{^}}[[FILE]]: error: node '/GatherElements_3' (GatherElements): index 100 at position [0, 1] is out of range for axis 1 of [1, 100]{{$}}
// CONST-ELEMENTS-NEXT: {{^}}exit=1{{$}}
// RUN: not test -e %t/cge.mlir
