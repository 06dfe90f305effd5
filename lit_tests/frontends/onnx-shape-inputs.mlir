// A graph input that decides a shape (Reshape's shape): fusec-run imports the model at the
// value --inputs gives; without a value, import stops with one line naming the input.

// RUN: rm -rf %t && python %S/inputs/make_models.py %t
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.arange(12, dtype=np.float32).reshape(2, 6), shape=np.array([3, 4], np.int64))"
// RUN: fusec-run %t/shape_input.onnx --device cpu --inputs %t/in.npz -o %t/out.npz
// RUN: python -c "import numpy as np; y = np.load('%t/out.npz')['y']; print(y.shape, (y == np.arange(12).reshape(3, 4)).all())" | filecheck %s --check-prefix=RAN
// RUN: sh -c 'fusec-import %t/shape_input.onnx -o %t/m.mlir; echo "exit=$?"' 2>&1 | filecheck %s -DFILE=%t/shape_input.onnx --check-prefix=NOVALUE

// RAN: (3, 4) True
// NOVALUE: [[FILE]]: error: node '/Reshape' (Reshape): shape is graph input 'shape', whose value decides the result's shape: give it at import (input_values={'shape': ...}, fusec-run's --inputs)
// NOVALUE-NEXT: exit=1
