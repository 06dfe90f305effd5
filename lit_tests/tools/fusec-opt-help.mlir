// --help lists every option with its help and the exit codes; --version and --list-passes.

// RUN: fusec-opt --help | filecheck %s --check-prefix=HELP
// RUN: fusec-opt -h | filecheck %s --check-prefix=HELP
// HELP:      Usage: fusec-opt [OPTIONS] [FILE|-]
// HELP:      -p, --passes PIPELINE
// HELP:      -o, --output OUT
// HELP:      -t, --target TARGET {{.*}}dot, mlir,
// HELP-NEXT: {{ *}}opencl.
// HELP:      --split-input-file
// HELP:      --verify-diagnostics
// HELP:      --print-op-generic
// HELP:      --list-passes
// HELP:      --fusion-stats
// HELP:      --fusion-stats-json FILE
// HELP:      --version
// HELP:      -h, --help
// HELP:      Exit codes: 0 success, 1 bad input

// RUN: fusec-opt --version | filecheck %s --check-prefix=VERSION
// VERSION: {{^}}fusec-opt, version {{[0-9]+\.[0-9]+\.[0-9]+$}}

// Every pass has a one-line summary; options show their type and default as written in -p.
// RUN: fusec-opt --list-passes | filecheck %s --check-prefix=LIST
// LIST:     {{^}}canonicalize: Applies the canonicalization patterns
// LIST:     {{^}}cse: Common subexpression elimination (xDSL).
// LIST:     {{^}}dce: Removes ops whose results are unused
// LIST:     {{^}}fuse-matmul-bias-act: {{.+}}
// LIST-NEXT: {{^}}    activations: tuple[str, ...] = relu,gelu,silu{{$}}
// LIST:     {{^}}unfuse: {{.+}}
// LIST:     {{^}}default: (pipeline) {{.+}}
// LIST-NEXT: {{^}}    = canonicalize-nn,{{(fuse-[a-z-]+,)*}}fuse-matmul-bias-act,{{.*}}
// RUN: fusec-opt --list-passes | filecheck %s --check-prefix=NOEMPTY
// NOEMPTY-NOT: {{^[a-z-]+: *$}}
// NOEMPTY-NOT: {{^    [a-z-]+: '}}
