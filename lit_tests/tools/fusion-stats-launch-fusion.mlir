// The fusion report's launch fusion section: the kernel-level launches and bytes written just
// before and just after fuse-launches (text and JSON); absent (null) when it does not run.
// RUN: fusec-opt %s -p lower-opencl -o %t.mlir --fusion-stats 2>&1 | filecheck %s
// RUN: fusec-opt %s -p lower-opencl -o %t.mlir --fusion-stats-json %t.json
// RUN: filecheck %s --input-file %t.json --check-prefix=JSON
// RUN: fusec-opt %s -p 'lower-to-kernels,fuse-launches{budget=512},plan-buffers' -o %t.mlir --fusion-stats 2>&1 | filecheck %s --check-prefix=TWO
// RUN: fusec-opt %s -p lower-to-kernels -o %t.mlir --fusion-stats-json %t.none.json
// RUN: filecheck %s --input-file %t.none.json --check-prefix=NONE

// add -> mul -> relu -> exp over 4x8xf32: 4 launches writing 128 bytes each become one that
// writes the result.
// CHECK:      fusion stats: {{.*}}fusion-stats-launch-fusion.mlir
// CHECK:        launch fusion (kernel IR):
// CHECK-NEXT:     launches               4 -> 1         (3 avoided)
// CHECK-NEXT:     bytes written        512 -> 128       (384 intermediate bytes no longer written)

// JSON:      "total": {
// JSON:        "launch_fusion": {
// JSON-NEXT:     "launches_before": 4,
// JSON-NEXT:     "launches_after": 1,
// JSON-NEXT:     "launches_avoided": 3,
// JSON-NEXT:     "bytes_written_before": 512,
// JSON-NEXT:     "bytes_written_after": 128,
// JSON-NEXT:     "intermediate_bytes_avoided": 384
// JSON:      "chunks": [
// JSON:        "launch_fusion": {
// JSON-NEXT:     "launches_before": 4,

// A budget of two kernels per launch (see lowering/fuse-launches-budget.mlir): b is still
// written between the two launches.
// TWO:          launches               4 -> 2         (2 avoided)
// TWO-NEXT:     bytes written        512 -> 256       (256 intermediate bytes no longer written)

// NONE:      "launch_fusion": null

func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = nn.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = nn.mul %a, %z : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = nn.relu %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.exp %c : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
