// Command-line error paths of fusec-opt: one line on stderr, the right exit code, no traceback.

// RUN: not fusec-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// PASS: fusec-opt: unknown pass 'no-such-pass' (known:
// PASS-NOT: Traceback

// RUN: not fusec-opt %s -p 'cse{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPT
// OPT: fusec-opt: unknown option 'no-such-option' for pass 'cse'

// RUN: not fusec-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=SPEC
// SPEC: fusec-opt: invalid pass pipeline 'cse{'

// RUN: not fusec-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: fusec-opt: unknown target 'no-such-target' (known: {{.*}}mlir

// RUN: not fusec-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: fusec-opt-errors.mlir.missing: error: cannot read input: No such file or directory

// A bad command line is one line too (click's usage block is three), exit 2.
// RUN: not fusec-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG: {{^}}fusec-opt: error: No such option '--no-such-flag' (see 'fusec-opt --help'){{$}}
// FLAG-NOT: {{.}}
// RUN: not fusec-opt %s %s 2>&1 | filecheck %s --check-prefix=EXTRA
// EXTRA: {{^}}fusec-opt: error: Got unexpected extra argument ({{.*}}) (see 'fusec-opt --help'){{$}}
// RUN: not fusec-opt %s -p 2>&1 | filecheck %s --check-prefix=NOARG
// NOARG: {{^}}fusec-opt: error: Option '-p' requires an argument (see 'fusec-opt --help'){{$}}

// Exit codes: 2 for a bad command line, 1 for bad input.
// RUN: sh -c 'fusec-opt %s -p no-such-pass 2>/dev/null; test $? -eq 2'
// RUN: sh -c 'fusec-opt %s -p "cse{" 2>/dev/null; test $? -eq 2'
// RUN: sh -c 'fusec-opt %s -t no-such-target 2>/dev/null; test $? -eq 2'
// RUN: sh -c 'fusec-opt %s --no-such-flag 2>/dev/null; test $? -eq 2'
// RUN: sh -c 'fusec-opt %s.missing 2>/dev/null; test $? -eq 1'
// RUN: sh -c 'fusec-opt %S/../dialects/inputs/bad-broadcast.mlir 2>/dev/null; test $? -eq 1'

// Output that cannot be written: exit 1, one line.
// RUN: not fusec-opt %s -o %t.missing-dir/out.mlir 2>&1 | filecheck %s --check-prefix=NODIR
// NODIR: {{^.*}}missing-dir/out.mlir: error: cannot write output: No such file or directory{{$}}
// RUN: not fusec-opt %s -o %S 2>&1 | filecheck %s --check-prefix=ISDIR
// ISDIR: {{^.*}}: error: cannot write output: Is a directory{{$}}

// A failed run leaves no output file behind.
// RUN: rm -f %t.out && not fusec-opt %S/../dialects/inputs/bad-broadcast.mlir -o %t.out 2>/dev/null
// RUN: test ! -e %t.out

// A good run writes it.
// RUN: fusec-opt %s -o %t.out && filecheck %s --check-prefix=OUT --input-file %t.out
// OUT: func.func @ok

func.func @ok(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
