// A cast chain f16 -> f32 -> ops -> bf16 runs as one kernel (launch fusion off, so the one
// launch is the graph fusion's) and matches the numpy reference; so does a quantizing chain
// through i8 and i32.
// RUN: fusec-run %s --function half_chain -p default --device cpu --profile --check --no-launch-fusion | filecheck %s --check-prefix=HALF
// HALF:      half_chain_elementwise_0:
// HALF-NEXT: kernels: {{.*}} in 1 launches
// HALF:      result0: uint16[4, 8]
// HALF:      result0: max abs error {{.*}}: ok
// RUN: fusec-run %s --function quantize -p default --device cpu --profile --check --no-launch-fusion | filecheck %s --check-prefix=QUANT
// QUANT:     kernels: {{.*}} in 2 launches
// QUANT:     result0: max abs error 0, {{.*}}: ok
// QUANT:     result1: max abs error 0, {{.*}}: ok
// QUANT:     result2: max abs error {{.*}}: ok

func.func @half_chain(%x: tensor<4x8xf16>, %y: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %a = nn.cast %x : tensor<4x8xf16> -> tensor<4x8xf32>
  %b = nn.mul %a, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %c = nn.tanh %b : tensor<4x8xf32> -> tensor<4x8xf32>
  %d = nn.cast %c : tensor<4x8xf32> -> tensor<4x8xbf16>
  func.return %d : tensor<4x8xbf16>
}

func.func @quantize(%x: tensor<16xf32>, %s: tensor<f32>, %q: tensor<16xi32>) -> (tensor<16xi8>, tensor<16xi8>, tensor<16xf32>) {
  %a = nn.div %x, %s : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %b = nn.cast %a : tensor<16xf32> -> tensor<16xi8>
  %c = nn.neg %q : tensor<16xi32> -> tensor<16xi32>
  %d = nn.cast %c : tensor<16xi32> -> tensor<16xi8>
  %e = nn.cast %d : tensor<16xi8> -> tensor<16xi32>
  %f = nn.cast %e : tensor<16xi32> -> tensor<16xbf16>
  %g = nn.cast %f : tensor<16xbf16> -> tensor<16xf32>
  %h = nn.mul %g, %s : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  func.return %b, %d, %h : tensor<16xi8>, tensor<16xi8>, tensor<16xf32>
}
