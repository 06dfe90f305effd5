// A bad value of a pass or target option is a command-line error, exit 2, before the input is
// touched, as an unknown option is (it was exit 1, as if the input were at fault): the pass
// runs its option checks on an empty module when the pipeline is built.

// RUN: sh -c "fusec-opt %s -p 'fuse-elementwise{max-steps=-1}' 2>&1; echo exit=\$?" | filecheck %s --check-prefix=STEPS
// STEPS: {{^}}fusec-opt: bad options for pass 'fuse-elementwise': max-steps (-1) and max-inputs (16) must be at least 1{{$}}
// STEPS-NEXT: exit=2

// RUN: sh -c "fusec-opt %s -p 'cse,lower-to-kernels{device=tpu}' 2>&1; echo exit=\$?" | filecheck %s --check-prefix=DEVICE
// DEVICE: {{^}}fusec-opt: bad options for pass 'lower-to-kernels': device must be one of cpu, gpu, got 'tpu'{{$}}
// DEVICE-NEXT: exit=2

// RUN: sh -c "fusec-opt %s -p 'lower-to-kernels{device=gpu gemm-whole-tile=-128}' 2>&1; echo exit=\$?" | filecheck %s --check-prefix=TILE
// TILE: {{^}}fusec-opt: bad options for pass 'lower-to-kernels': gemm-whole-tile must be 0 (none) or positive, got -128{{$}}
// TILE-NEXT: exit=2

// RUN: sh -c "fusec-opt %s -t 'opencl{device=tpu}' 2>&1; echo exit=\$?" | filecheck %s --check-prefix=TARGET
// TARGET: {{^}}fusec-opt: bad options for target 'opencl': device 'tpu' is not one of cpu, gpu{{$}}
// TARGET-NEXT: exit=2

// RUN: sh -c "fusec-run %s --device cpu -p 'fuse-launches{budget=-1}' 2>&1; echo exit=\$?" | filecheck %s --check-prefix=TOOL
// TOOL: {{^}}fusec-run: error: bad options for pass 'fuse-launches': budget must be >= 0, got -1{{$}}
// TOOL-NEXT: exit=2

// An option given twice (xDSL's parser kept the last, silently); an offload threshold too.
// RUN: sh -c "fusec-opt %s -p 'cse,fuse-elementwise{max_steps=2 max-steps=5}' 2>&1; echo exit=\$?" | filecheck %s --check-prefix=TWICE
// TWICE: {{^}}fusec-opt: option 'max-steps' is given twice to pass 'fuse-elementwise'{{$}}
// TWICE-NEXT: exit=2
// RUN: sh -c "fusec-run %s --device auto --offload-threshold tie_trials=1 --offload-threshold tie_trials=2 2>&1; echo exit=\$?" | filecheck %s --check-prefix=THRESHOLD
// THRESHOLD: {{^}}fusec-run: error: offload threshold 'tie_trials' is given twice (see 'fusec-run --help'){{$}}
// THRESHOLD-NEXT: exit=2

// Good values still run.
// RUN: fusec-opt %s -p 'fuse-elementwise{max-steps=1},lower-to-kernels{device=gpu}' -t 'opencl{device=gpu}' | filecheck %s --check-prefix=OK
// OK: __kernel

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = nn.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %z = nn.exp %y : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}
