// RUN: fusec-opt %s -p fuse-elementwise,fuse-matmul-epilogue --split-input-file | filecheck %s
// RUN: fusec-opt %s -p fuse-matmul-epilogue --split-input-file | filecheck %s --check-prefix=ALONE
// RUN: fusec-opt %s -p fuse-elementwise,fuse-matmul-epilogue,unfuse --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p 'fuse-elementwise,fuse-matmul-epilogue{max-inputs=1}' --split-input-file | filecheck %s --check-prefix=INPUTS

// alpha * (A @ B) + beta * C, row and column scales, a clamp: one GEMM with an epilogue.
// CHECK-LABEL: func.func @gemm_alpha_beta
// CHECK-NEXT:    %[[Y:.*]] = fused.matmul_epilogue %a, %b, %c, %rs, %cs : (tensor<6x9xf32>, tensor<9x5xf32>, tensor<6x5xf32>, tensor<6x1xf32>, tensor<5xf32>) -> tensor<6x5xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[P:.*]]: f32, %[[C:.*]]: f32, %[[R:.*]]: f32, %[[K:.*]]: f32):
// CHECK-NEXT:      %[[AL:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:      %[[T1:.*]] = arith.mulf %[[P]], %[[AL]] : f32
// CHECK-NEXT:      %[[BE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[T2:.*]] = arith.mulf %[[C]], %[[BE]] : f32
// CHECK-NEXT:      %[[T3:.*]] = arith.addf %[[T1]], %[[T2]] : f32
// CHECK-NEXT:      %[[T4:.*]] = arith.mulf %[[T3]], %[[R]] : f32
// CHECK-NEXT:      %[[T5:.*]] = arith.mulf %[[T4]], %[[K]] : f32
// CHECK-NEXT:      %[[LO:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:      %[[T6:.*]] = arith.maximumf %[[T5]], %[[LO]] : f32
// CHECK-NEXT:      %[[HI:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[T7:.*]] = arith.minimumf %[[T6]], %[[HI]] : f32
// CHECK-NEXT:      fused.yield %[[T7]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<6x5xf32>
// UNFUSE-LABEL: func.func @gemm_alpha_beta
// UNFUSE-NEXT:    %[[P:.*]] = nn.matmul %a, %b : tensor<6x9xf32>, tensor<9x5xf32> -> tensor<6x5xf32>
// UNFUSE-NEXT:    nn.constant
// UNFUSE-NEXT:    nn.mul %[[P]]
// max-inputs=1: three extras do not fit; nothing fuses.
// INPUTS-LABEL: func.func @gemm_alpha_beta
// INPUTS-NEXT:    nn.matmul
// INPUTS-NEXT:    fused.elementwise
func.func @gemm_alpha_beta(%a: tensor<6x9xf32>, %b: tensor<9x5xf32>, %c: tensor<6x5xf32>, %rs: tensor<6x1xf32>, %cs: tensor<5xf32>) -> tensor<6x5xf32> {
  %p = nn.matmul %a, %b : tensor<6x9xf32>, tensor<9x5xf32> -> tensor<6x5xf32>
  %al = nn.constant {value = dense<1.5> : tensor<f32>} : tensor<f32>
  %be = nn.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %lo = nn.constant {value = dense<-1.0> : tensor<f32>} : tensor<f32>
  %hi = nn.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
  %1 = nn.mul %p, %al : tensor<6x5xf32>, tensor<f32> -> tensor<6x5xf32>
  %2 = nn.mul %c, %be : tensor<6x5xf32>, tensor<f32> -> tensor<6x5xf32>
  %3 = nn.add %1, %2 : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
  %4 = nn.mul %3, %rs : tensor<6x5xf32>, tensor<6x1xf32> -> tensor<6x5xf32>
  %5 = nn.mul %4, %cs : tensor<6x5xf32>, tensor<5xf32> -> tensor<6x5xf32>
  %6 = nn.max %5, %lo : tensor<6x5xf32>, tensor<f32> -> tensor<6x5xf32>
  %7 = nn.min %6, %hi : tensor<6x5xf32>, tensor<f32> -> tensor<6x5xf32>
  func.return %7 : tensor<6x5xf32>
}

// -----

// A matmul_bias_act's bias and activation become the first ops of the body; a single nn op
// is a consumer too.
// CHECK-LABEL: func.func @after_bias_act
// CHECK-NEXT:    %[[Y:.*]] = fused.matmul_epilogue %x, %w, %b, %s : (tensor<2x3x8xf32>, tensor<8x4xf32>, tensor<4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[P:.*]]: f32, %[[B:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[P]], %[[B]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[A]], %[[R]] : f32
// CHECK-NEXT:      %[[O:.*]] = arith.mulf %[[M]], %[[S]] : f32
// CHECK-NEXT:      fused.yield %[[O]] : f32
func.func @after_bias_act(%x: tensor<2x3x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>, %s: tensor<2x1x4xf32>) -> tensor<2x3x4xf32> {
  %y = fused.matmul_bias_act %x, %w, %b {activation = "relu"} : tensor<2x3x8xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  %z = nn.mul %y, %s : tensor<2x3x4xf32>, tensor<2x1x4xf32> -> tensor<2x3x4xf32>
  func.return %z : tensor<2x3x4xf32>
}

// -----

// The product is also returned: it stays materialised.
// CHECK-LABEL: func.func @negative_product_returned
// CHECK-NEXT:    nn.matmul
// CHECK-NEXT:    nn.relu
func.func @negative_product_returned(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %p = nn.matmul %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %y = nn.relu %p : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y, %p : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The consumer's result is larger than the product (it broadcasts the product): no epilogue.
// CHECK-LABEL: func.func @negative_broadcast_product
// CHECK-NEXT:    nn.matmul
// CHECK-NEXT:    nn.add
func.func @negative_broadcast_product(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %p = nn.matmul %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %y = nn.add %p, %c : tensor<4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  func.return %y : tensor<2x4x4xf32>
}

// -----

// Integer matmuls are generated reductions, not the GEMM template: left alone.
// CHECK-LABEL: func.func @negative_integer
// CHECK-NEXT:    nn.matmul
// CHECK-NEXT:    nn.add
func.func @negative_integer(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>, %c: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %p = nn.matmul %a, %b : tensor<4x4xi32>, tensor<4x4xi32> -> tensor<4x4xi32>
  %y = nn.add %p, %c : tensor<4x4xi32>, tensor<4x4xi32> -> tensor<4x4xi32>
  func.return %y : tensor<4x4xi32>
}

// -----

// Without fuse-elementwise first, single nn consumers are absorbed one at a time: the epilogue
// grows to a fixpoint.
// CHECK-LABEL: func.func @one_at_a_time
// CHECK-NEXT:    %[[Y:.*]] = fused.matmul_epilogue %a, %b, %c : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[P:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[P]], %[[C]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[E]] : f32
// CHECK-NEXT:      fused.yield %[[T]] : f32
func.func @one_at_a_time(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4xf32>) -> tensor<4x4xf32> {
  %p = nn.matmul %a, %b : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s = nn.add %p, %c : tensor<4x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %e = nn.exp %s : tensor<4x4xf32> -> tensor<4x4xf32>
  %t = nn.tanh %e : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %t : tensor<4x4xf32>
}
// ALONE-LABEL: func.func @one_at_a_time
// ALONE-NEXT:    fused.matmul_epilogue %a, %b, %c
// ALONE-NOT:     nn.

// -----

// A 16-bit product fuses as an f32 one: the body's accumulator has the product's type (the
// GEMM rounds its f32 sum to it first, as the unfused matmul stores it).
// CHECK-LABEL: func.func @half_residual
// CHECK-NEXT:    %[[Y:.*]] = fused.matmul_epilogue %a, %b, %r : (tensor<4x8xbf16>, tensor<8x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16> {
// CHECK-NEXT:    ^{{.*}}(%[[P:.*]]: bf16, %[[R:.*]]: bf16):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[R]], %[[P]] : bf16
// CHECK-NEXT:      fused.yield %[[S]] : bf16
// ALONE-LABEL: func.func @half_residual
// UNFUSE-LABEL: func.func @half_residual
// UNFUSE-NEXT:    %[[P:.*]] = nn.matmul %a, %b : tensor<4x8xbf16>, tensor<8x4xbf16> -> tensor<4x4xbf16>
// UNFUSE-NEXT:    nn.add %r, %[[P]] : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
func.func @half_residual(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %r: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %p = nn.matmul %a, %b : tensor<4x8xbf16>, tensor<8x4xbf16> -> tensor<4x4xbf16>
  %y = nn.add %r, %p : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
  func.return %y : tensor<4x4xbf16>
}

// -----

// A 16-bit product whose consumer yields f32 (a float16 model's down projection feeding its
// float32 residual) fuses: the tensor-core kernels store a float32 C; the accumulator is
// rounded to the product's type first, as the unfused matmul stores it.
// CHECK-LABEL: func.func @half_then_cast
// CHECK-NEXT:    %[[Y:.*]] = fused.matmul_epilogue %a, %b, %r : (tensor<4x8xf16>, tensor<8x4xf16>, tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[P:.*]]: f16, %[[R:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = arith.extf %[[P]] : f16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E]], %[[R]] : f32
// CHECK-NEXT:      fused.yield %[[S]] : f32
// UNFUSE-LABEL: func.func @half_then_cast
// UNFUSE-NEXT:    %[[P:.*]] = nn.matmul %a, %b : tensor<4x8xf16>, tensor<8x4xf16> -> tensor<4x4xf16>
// UNFUSE-NEXT:    %[[C:.*]] = nn.cast %[[P]] : tensor<4x4xf16> -> tensor<4x4xf32>
// UNFUSE-NEXT:    nn.add %[[C]], %r : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
func.func @half_then_cast(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>, %r: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %p = nn.matmul %a, %b : tensor<4x8xf16>, tensor<8x4xf16> -> tensor<4x4xf16>
  %c = nn.cast %p : tensor<4x4xf16> -> tensor<4x4xf32>
  %y = nn.add %c, %r : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// -----

// A 16-bit product whose consumer yields another type than its own or f32 (here i32) stays
// apart: a GEMM storing it would lose its tensor-core kernels.
// CHECK-LABEL: func.func @negative_half_then_cast_to_i32
// CHECK-NEXT:    nn.matmul
// CHECK-NEXT:    nn.cast
func.func @negative_half_then_cast_to_i32(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>) -> tensor<4x4xi32> {
  %p = nn.matmul %a, %b : tensor<4x8xf16>, tensor<8x4xf16> -> tensor<4x4xf16>
  %c = nn.cast %p : tensor<4x4xf16> -> tensor<4x4xi32>
  func.return %c : tensor<4x4xi32>
}
