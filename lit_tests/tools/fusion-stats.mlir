// The fusion report: text on stderr (the IR goes to -o), JSON to a file.
// RUN: fusec-opt %s --split-input-file -p fuse-elementwise,fuse-reductions -o %t.mlir --fusion-stats 2>&1 | filecheck %s
// RUN: fusec-opt %s --split-input-file -p fuse-elementwise,fuse-reductions -o %t.mlir --fusion-stats-json %t.json
// RUN: filecheck %s --input-file %t.json --check-prefix=JSON
// RUN: fusec-opt %s --split-input-file -p fuse-elementwise,fuse-reductions --fusion-stats 2>%t.err | filecheck %s --check-prefix=IR

// One report per chunk, named by its first line. Chunk 1: before, sub, mul, reduce_sum
// (128 + 128 + 4 bytes), exp and add (128 + 128) and a constant (no kernel); after, one
// fused.reduce (4 bytes) and one fused.elementwise (128 bytes, returned).
// CHECK:      fusion stats: {{.*}}fusion-stats.mlir
// CHECK-NEXT:   ops                      6 -> 2
// CHECK-NEXT:   fused regions            0 -> 2
// CHECK-NEXT:   kernel launches          5 -> 2         (3 avoided)
// CHECK-NEXT:   bytes written          516 -> 132       (384 intermediate bytes no longer written)
// Chunk 2: nothing to fuse.
// CHECK-NEXT: fusion stats: {{.*}}fusion-stats.mlir:57
// CHECK-NEXT:   ops                      2 -> 2
// CHECK-NEXT:   fused regions            0 -> 0
// CHECK-NEXT:   kernel launches          2 -> 2         (0 avoided)
// CHECK-NEXT:   bytes written           64 -> 64        (0 intermediate bytes no longer written)
// CHECK-NOT:  fusion stats

// The JSON total sums the chunks.
// JSON:      "total": {
// JSON:        "before": {
// JSON-NEXT:     "ops": 8,
// JSON-NEXT:     "regions": 0,
// JSON-NEXT:     "kernels": 7,
// JSON-NEXT:     "bytes_written": 580
// JSON:        "after": {
// JSON-NEXT:     "ops": 4,
// JSON-NEXT:     "regions": 2,
// JSON-NEXT:     "kernels": 4,
// JSON-NEXT:     "bytes_written": 196
// JSON:        "launches_avoided": 3,
// JSON-NEXT:   "bytes_saved": 384
// JSON:      "chunks": [
// JSON:        "launches_avoided": 3,
// JSON:        "launches_avoided": 0,

// The IR on stdout holds no stats.
// IR-NOT:    fusion stats
// IR:        fused.reduce
// IR-NOT:    fusion stats

func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %one = nn.constant {value = dense<1.000000e+00> : tensor<f32>} : tensor<f32>
  %0 = nn.sub %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.mul %0, %0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = nn.reduce_sum %1 {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  %3 = nn.exp %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = nn.add %3, %one : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  func.return %2, %4 : tensor<f32>, tensor<4x8xf32>
}

// -----

// Nothing to fuse: a returned intermediate.
func.func @g(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = nn.exp %a : tensor<8xf32> -> tensor<8xf32>
  %1 = nn.log %0 : tensor<8xf32> -> tensor<8xf32>
  func.return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
