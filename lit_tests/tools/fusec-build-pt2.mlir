// fusec-build of a saved torch.export ExportedProgram (.pt2): an artifact called with the
// program's own input names (fusec-run of the .pt2 itself: tests/tools). Errors, one line, exit 1:
// a file that does not load (no traceback of torch.export.load's log), dynamic shapes,
// PyTorch not installed; --shape is a command-line error (exit 2).
// REQUIRES: torch
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/inputs/export_pt2.py %t/linear.pt2 linear
// RUN: fusec-build %t/linear.pt2 -o %t/linear.fusec --device cpu
// RUN: %python -c "import numpy as np; np.savez('%t/in.npz', x=np.ones((2, 4), np.float32))"
// RUN: fusec-run %t/linear.fusec --inputs %t/in.npz 2>&1 | filecheck %s --check-prefix=OUT
// OUT-NOT: note
// OUT: {{^}}result0: float32[2, 3]{{$}}

// RUN: echo garbage > %t/bad.pt2
// RUN: sh -c 'fusec-build %t/bad.pt2 -o %t/bad.fusec 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=BAD
// BAD-NOT: deserializing
// BAD: {{^}}{{.*}}bad.pt2: error: cannot load the ExportedProgram: File is not a zip file{{$}}
// BAD-NEXT: exit=1
// RUN: not ls %t/bad.fusec

// RUN: %python %S/inputs/export_pt2.py %t/dynamic.pt2 dynamic
// RUN: sh -c 'fusec-build %t/dynamic.pt2 -o %t/d.fusec 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC: {{^}}{{.*}}dynamic.pt2: error: node 'x' (x): input of shape [s{{[0-9]+}}, 4] has a dynamic dimension; fusec compiles one static shape (export without dynamic_shapes){{$}}
// DYNAMIC-NEXT: exit=1

// RUN: sh -c '%python -c "import sys; sys.modules[\"torch\"] = None; from fusec.tools.fusec_build import main; sys.exit(main(sys.argv[1:]))" %t/linear.pt2 -o %t/n.fusec 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=NOTORCH
// NOTORCH: {{^}}{{.*}}linear.pt2: error: importing an ExportedProgram needs PyTorch (install fusec[torch]: pip install 'fusec[torch]'){{$}}
// NOTORCH-NEXT: exit=1

// RUN: sh -c 'fusec-build %t/linear.pt2 -o %t/s.fusec --shape x=4x4 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=SHAPE
// SHAPE: fusec-build: error: --shape applies to ONNX models only (see 'fusec-build --help')
// SHAPE-NEXT: exit=2
