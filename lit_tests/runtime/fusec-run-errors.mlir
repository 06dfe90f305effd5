// fusec-run: inputs by argument name, outputs as result<i>, and its error paths: one line on
// stderr, a documented exit code, no traceback.

// A good run: random inputs, checked against the reference, outputs written by name.
// RUN: fusec-run %s --device cpu --check -o %t.out.npz | filecheck %s --check-prefix=OK
// OK: result0: max abs error {{.*}}: ok
// RUN: python -c "import numpy as np; d = np.load('%t.out.npz'); print(sorted(d.files), d['result0'].shape)" | filecheck %s --check-prefix=NPZ
// NPZ: ['result0'] (4, 8)

// Inputs from a file, by argument name.
// RUN: python -c "import numpy as np; np.savez('%t.good.npz', x=np.ones((4, 8), np.float32), b=np.arange(8, dtype=np.float32))"
// RUN: fusec-run %s --device cpu --inputs %t.good.npz -o %t.sum.npz
// RUN: python -c "import numpy as np; print(np.load('%t.sum.npz')['result0'][3].tolist())" | filecheck %s --check-prefix=SUM
// SUM: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]

// An unknown option is one line (no usage block), exit code 2.
// RUN: sh -c 'fusec-run %s --no-such-option 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=USAGE
// USAGE: fusec-run: error: No such option '--no-such-option'{{.*}} (see 'fusec-run --help')
// USAGE-NEXT: exit=2

// A missing input names it; exit code 1.
// RUN: python -c "import numpy as np; np.savez('%t.missing.npz', x=np.ones((4, 8), np.float32))"
// RUN: not fusec-run %s --device cpu --inputs %t.missing.npz 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: missing.npz: error: missing input 'b' (the function takes: x, b)
// MISSING-NOT: Traceback
// RUN: sh -c 'fusec-run %s --device cpu --inputs %t.missing.npz 2>/dev/null; test $? -eq 1'

// An extra input names it.
// RUN: python -c "import numpy as np; np.savez('%t.extra.npz', x=np.ones((4, 8), np.float32), b=np.ones(8, np.float32), c=np.ones(2))"
// RUN: not fusec-run %s --device cpu --inputs %t.extra.npz 2>&1 | filecheck %s --check-prefix=EXTRA
// EXTRA: extra.npz: error: unexpected input 'c' (the function takes: x, b)

// A mis-shaped or mistyped input names it and says what was expected.
// RUN: python -c "import numpy as np; np.savez('%t.shape.npz', x=np.ones((4, 8), np.float32), b=np.ones(4, np.float32))"
// RUN: not fusec-run %s --device cpu --inputs %t.shape.npz 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: fusec-run: error: @add_bias input 'b' has shape [4], expected [8]
// RUN: python -c "import numpy as np; np.savez('%t.dtype.npz', x=np.ones((4, 8)), b=np.ones(8, np.float32))"
// RUN: not fusec-run %s --device cpu --inputs %t.dtype.npz 2>&1 | filecheck %s --check-prefix=DTYPE
// DTYPE: fusec-run: error: @add_bias input 'x' has dtype float64, expected float32

// No usable device: every platform tried is listed; exit code 3.
// RUN: not fusec-run %s --device cpu --platform no-such-platform 2>&1 | filecheck %s --check-prefix=DEVICE
// DEVICE: fusec-run: error: no working OpenCL device of kind 'cpu' on platform 'no-such-platform'; platform '{{.*}}': does not match 'no-such-platform'
// RUN: sh -c 'fusec-run %s --device cpu --platform no-such-platform 2>/dev/null; test $? -eq 3'

// Bad input files and names; exit code 1.
// RUN: not fusec-run %s.missing 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE: fusec-run-errors.mlir.missing: error: cannot read input: No such file or directory
// RUN: not fusec-run %s --function nope 2>&1 | filecheck %s --check-prefix=NOFUNC
// NOFUNC: error: no function @nope in the module (functions: @add_bias)

// Bad command lines; exit code 2.
// RUN: sh -c 'fusec-run %s --inputs %t.good.npz --random 1 2>/dev/null; test $? -eq 2'
// RUN: not fusec-run %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PIPE
// PIPE: {{^}}fusec-run: error: unknown pass 'no-such-pass'
// RUN: sh -c 'fusec-run %s -p no-such-pass 2>/dev/null; test $? -eq 2'

func.func @add_bias(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = nn.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
