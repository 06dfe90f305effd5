// fusec-run --device auto with the CPU/GPU placement: the report (a table on stderr with
// --offload-report -, JSON with a file), threshold overrides and their errors. On a machine
// with one OpenCL device every kernel is placed on it, reason "disabled".

// RUN: rm -rf %t.cache && mkdir -p %t.cache
// RUN: env XDG_CACHE_HOME=%t.cache fusec-run %s --check --offload-report - 2>&1 | filecheck %s --check-prefix=TABLE
// TABLE: offload: host {{.*}}
// TABLE: offload: thresholds from built-in-default
// TABLE: binary_min_elems=4096 {{.*}} small_batch_max_dim=8
// TABLE: kernel {{ +}}elements {{ +}}flops {{ +}}batch {{ +}}decision {{ +}}reason
// TABLE-NEXT: fused.matmul_epilogue %y {{ +}}512 {{ +}}2048 {{ +}}- {{ +}}{{cpu|gpu}} {{ +}}disabled
// TABLE: result0: max abs error {{.*}}: ok

// RUN: env XDG_CACHE_HOME=%t.cache fusec-run %s --offload-report %t.json --offload-threshold small_batch_max_dim=2 --offload-threshold cpu_elem_per_elem=1e-9
// RUN: python -c "import json; r = json.load(open('%t.json')); print(r['base_source'], r['thresholds']['small_batch_max_dim'], r['thresholds']['cpu_elem_per_elem'], [(d['kernel'], d['reason']) for d in r['decisions']])" | filecheck %s --check-prefix=JSON
// JSON: built-in-default 2 1e-09 [('fused.matmul_epilogue %y', 'disabled')]

// RUN: sh -c 'fusec-run %s --offload-threshold small_batch=3 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: fusec-run: error: unknown offload threshold 'small_batch' (known: unary_min_elems, {{.*}}) (see 'fusec-run --help')
// UNKNOWN-NEXT: exit=2

// RUN: sh -c 'fusec-run %s --offload-threshold matmul_min_flops=-5 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE: fusec-run: error: offload threshold 'matmul_min_flops' must be finite and non-negative, got '-5' (see 'fusec-run --help')
// NEGATIVE-NEXT: exit=2

func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<4x64xf32> {
  %h = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x64xf32> -> tensor<4x64xf32>
  %s = nn.add %h, %b : tensor<4x64xf32>, tensor<64xf32> -> tensor<4x64xf32>
  %y = nn.tanh %s : tensor<4x64xf32> -> tensor<4x64xf32>
  func.return %y : tensor<4x64xf32>
}
