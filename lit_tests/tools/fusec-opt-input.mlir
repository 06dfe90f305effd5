// Where fusec-opt reads from and how it copes with input that is not IR: one located line on
// stderr, exit 1, never a traceback.

// A file, stdin as '-', and stdin by default print the same module.
// RUN: fusec-opt %s | filecheck %s
// RUN: fusec-opt - < %s | filecheck %s
// RUN: fusec-opt < %s | filecheck %s
// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %0 = nn.relu %x : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:     func.return %0 : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// --print-op-generic prints the generic form, which reads back to the same module.
// RUN: fusec-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: fusec-opt %s --print-op-generic | fusec-opt - | filecheck %s
// GENERIC:      "builtin.module"() ({
// GENERIC:        %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC:        "func.return"(%0) : (tensor<4xf32>) -> ()

// Input without operations (empty, or only comments) is an empty module, as in mlir-opt.
// RUN: fusec-opt - < /dev/null | filecheck %s --check-prefix=EMPTY
// RUN: echo "// only a comment" | fusec-opt - | filecheck %s --check-prefix=EMPTY
// EMPTY:      builtin.module {
// EMPTY-NEXT: }

// Bytes that are not UTF-8: the line and column of the first bad byte.
// RUN: sh -c "printf 'func.func @f() {\n  func.return \377\n}\n' > %t.latin1"
// RUN: not fusec-opt %t.latin1 2>&1 | filecheck %s --check-prefix=UTF8 -DFILE=%t.latin1
// RUN: not fusec-opt - < %t.latin1 2>&1 | filecheck %s --check-prefix=UTF8 -DFILE="<stdin>"
// UTF8: {{^}}[[FILE]]:2:15: error: input is not UTF-8 text (byte 0xff){{$}}
// UTF8-NOT: Traceback

// A leading byte-order mark (some editors write one) is not part of the text.
// RUN: sh -c "printf '\357\273\277func.func @bom() {\n  func.return\n}\n' > %t.bom"
// RUN: fusec-opt %t.bom | filecheck %s --check-prefix=BOM
// BOM: func.func @bom()

// Control characters and other garbage: a parse error.
// RUN: sh -c "printf 'a\000b' > %t.nul"
// RUN: not fusec-opt %t.nul 2>&1 | filecheck %s --check-prefix=NUL -DFILE=%t.nul
// NUL: {{^}}[[FILE]]:1:2: error: Unexpected character: \x00{{$}}
// RUN: echo "@@@ ### }}}" | not fusec-opt - 2>&1 | filecheck %s --check-prefix=GARBAGE
// GARBAGE: {{^}}<stdin>:1:1: error: @ identifier expected to start with letter{{.*}}
// GARBAGE-NOT: Traceback

// A directory, a missing file: exit 1.
// RUN: not fusec-opt %S 2>&1 | filecheck %s --check-prefix=DIR -DDIR=%S
// DIR: {{^}}[[DIR]]: error: cannot read input: Is a directory{{$}}
// RUN: sh -c 'fusec-opt %S 2>/dev/null; test $? -eq 1'

// A function whose return does not match its type: the verifier, located at the return.
// RUN: not fusec-opt %S/inputs/wrong-return.mlir 2>&1 | filecheck %s --check-prefix=RET
// RET: {{^.*}}wrong-return.mlir:2:3: error: 'func.return' Expected arguments to have the same types as the function output types: expected [tensor<4xi32>], got [tensor<4xf32>]{{$}}

// The same input gives byte-identical output, run after run.
// RUN: fusec-opt %S/../../examples/bert_layer_small.mlir -p default > %t.run1
// RUN: fusec-opt %S/../../examples/bert_layer_small.mlir -p default > %t.run2
// RUN: diff %t.run1 %t.run2
// RUN: fusec-opt %S/../dialects/fused-roundtrip.mlir --split-input-file --print-op-generic > %t.gen1
// RUN: fusec-opt %S/../dialects/fused-roundtrip.mlir --split-input-file --print-op-generic > %t.gen2
// RUN: diff %t.gen1 %t.gen2

func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
