// fusec-build writes a deployable artifact; fusec-run runs it on --inputs, without compiling.
// Its errors: a damaged or foreign artifact (empty, truncated, not one, a directory) is one
// line naming the file, exit 1; options that only make sense when compiling are exit 2.

// RUN: rm -rf %t && mkdir -p %t/dir.fusec
// RUN: fusec-build %s -o %t/mlp.fusec --device cpu --fusion-stats-json %t/stats.json
// RUN: python -c "import json; print(json.load(open('%t/stats.json'))['total']['after'])" | filecheck %s --check-prefix=STATS
// STATS: {'ops': 1, 'regions': 1, 'kernels': 1, 'bytes_written': 1024}
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.ones((4, 8), np.float32), w=np.ones((8, 64), np.float32), b=np.zeros(64, np.float32))"
// RUN: fusec-run %t/mlp.fusec --inputs %t/in.npz 2>&1 | filecheck %s --check-prefix=OUT
// OUT-NOT: note
// OUT: {{^}}result0: float32[4, 64]{{$}}

// RUN: sh -c 'fusec-run %t/mlp.fusec 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=NOINPUTS
// NOINPUTS: fusec-run: error: an artifact runs on --inputs IN.npz (see 'fusec-run --help')
// NOINPUTS-NEXT: exit=2
// RUN: sh -c 'fusec-run %t/mlp.fusec --inputs %t/in.npz --check -p none 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=COMPILING
// COMPILING: fusec-run: error: -p, --check: not for an artifact (compiled by fusec-build); it runs with --inputs, -o, --profile, --device, --platform (see 'fusec-run --help')
// COMPILING-NEXT: exit=2

// RUN: head -c 100 %t/mlp.fusec > %t/cut.fusec
// RUN: sh -c 'fusec-run %t/cut.fusec --inputs %t/in.npz 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=CUT
// CUT: {{^}}{{.*}}cut.fusec: error: truncated fusec artifact (100 bytes, its manifest alone ends at {{[0-9]+}}){{$}}
// CUT-NEXT: exit=1
// RUN: touch %t/empty.fusec
// RUN: sh -c 'fusec-run %t/empty.fusec --inputs %t/in.npz 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EMPTY
// EMPTY: {{^}}{{.*}}empty.fusec: error: the file is empty, not a fusec artifact{{$}}
// EMPTY-NEXT: exit=1
// RUN: cp %s %t/text.fusec
// RUN: sh -c 'fusec-run %t/text.fusec --inputs %t/in.npz 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=TEXT
// TEXT: {{^}}{{.*}}text.fusec: error: not a fusec artifact (no fusec artifact signature at its start){{$}}
// TEXT-NEXT: exit=1
// RUN: sh -c 'fusec-run %t/dir.fusec --inputs %t/in.npz 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=DIR
// DIR: {{^}}{{.*}}dir.fusec: error: is a directory, not a fusec artifact{{$}}
// DIR-NEXT: exit=1
// RUN: python -c "d = bytearray(open('%t/mlp.fusec', 'rb').read()); d[-5] ^= 1; open('%t/flip.fusec', 'wb').write(d)"
// RUN: sh -c 'fusec-run %t/flip.fusec --inputs %t/in.npz 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=FLIP
// FLIP: {{^}}{{.*}}flip.fusec: error: damaged fusec artifact: the checksum of blob '{{.*}}' does not match{{$}}
// FLIP-NEXT: exit=1

// RUN: sh -c 'fusec-build %s -o %t/x.fusec --shape x=4x8 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=SHAPE
// SHAPE: fusec-build: error: --shape applies to ONNX models only (see 'fusec-build --help')
// SHAPE-NEXT: exit=2

func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<4x64xf32> {
  %h = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x64xf32> -> tensor<4x64xf32>
  %s = nn.add %h, %b : tensor<4x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  %y = nn.tanh %s : tensor<4x64xf32> -> tensor<4x64xf32>
  func.return %y : tensor<4x64xf32>
}
