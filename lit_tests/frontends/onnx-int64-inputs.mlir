// The .npz ONNX Runtime takes (int64 token ids) works for the model and for its imported IR:
// fusec-run narrows an int64 array to an i32 argument, and one outside the 32-bit range is a
// one-line error (exit 1).

// RUN: rm -rf %t && python %S/inputs/make_models.py %t
// RUN: fusec-import %t/embedding.onnx -o %t/emb.mlir
// RUN: python -c "import numpy as np; np.savez('%t/ids.npz', input_ids=np.array([[1, 0, 3, 9, 2]], np.int64))"
// RUN: fusec-run %t/embedding.onnx --device cpu --inputs %t/ids.npz -o %t/onnx.npz
// RUN: fusec-run %t/emb.mlir --device cpu --inputs %t/ids.npz -o %t/mlir.npz
// RUN: python -c "import numpy as np; a = np.load('%t/onnx.npz'); b = np.load('%t/mlir.npz'); print([bool((x == y).all()) for x, y in zip(a.values(), b.values())])" | filecheck %s --check-prefix=SAME
// RUN: python -c "import numpy as np; np.savez('%t/big.npz', input_ids=np.array([[1, 0, 3, 2**40, 2]], np.int64))"
// RUN: sh -c 'fusec-run %t/emb.mlir --device cpu --inputs %t/big.npz; echo "exit=$?"' 2>&1 | filecheck %s -DFILE=%t/big.npz --check-prefix=BIG

// SAME: [True, True]
// BIG: [[FILE]]: error: input 'input_ids' holds 1099511627776, outside the 32-bit range of its i32 argument
// BIG-NEXT: exit=1
