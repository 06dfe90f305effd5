// fuse-shared-input-matmul: matmuls of one input merge into one matmul of concatenated weights, sliced back by
// narrows; and its guards.
// RUN: fusec-opt %s -p fuse-shared-input-matmul --split-input-file | filecheck %s
// The result holds only nn ops, so unfuse leaves it as it is:
// RUN: fusec-opt %s -p 'fuse-shared-input-matmul,unfuse' --split-input-file | filecheck %s --check-prefix=UNFUSE
// RUN: fusec-opt %s -p fuse-shared-input-matmul --split-input-file > %t.once
// RUN: fusec-opt %s -p fuse-shared-input-matmul,fuse-shared-input-matmul --split-input-file > %t.twice
// RUN: diff %t.once %t.twice
// The options of default's two runs: GEMMs with a bias only, their weights bound; plain ones only.
// RUN: fusec-opt %s -p 'fuse-shared-input-matmul{epilogue-only=true bound-only=true}' --split-input-file | filecheck %s --check-prefix=EARLY
// RUN: fusec-opt %s -p 'fuse-shared-input-matmul{plain-only=true}' --split-input-file | filecheck %s --check-prefix=PLAIN

// The seed's gate/up pair, both returned: the narrows take the matmuls' place.
// CHECK-LABEL: func.func @two_way(
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %w1, %w2 {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %x, %[[SHARED_W]] : tensor<6x16xf32>, tensor<16x16xf32> -> tensor<6x16xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<6x16xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<6x16xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[A]], %[[B]] : tensor<6x8xf32>, tensor<6x8xf32>
// UNFUSE-LABEL: func.func @two_way(
// UNFUSE-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %w1, %w2 {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x16xf32>
// UNFUSE-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %x, %[[SHARED_W]] : tensor<6x16xf32>, tensor<16x16xf32> -> tensor<6x16xf32>
// UNFUSE-NEXT:  %[[A:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<6x16xf32> -> tensor<6x8xf32>
// UNFUSE-NEXT:  %[[B:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 8 : i64, length = 8 : i64} : tensor<6x16xf32> -> tensor<6x8xf32>
// UNFUSE-NEXT:  func.return %[[A]], %[[B]] : tensor<6x8xf32>, tensor<6x8xf32>
func.func @two_way(%x: tensor<6x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %a = nn.matmul %x, %w1 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  %b = nn.matmul %x, %w2 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  func.return %a, %b : tensor<6x8xf32>, tensor<6x8xf32>
}

// -----

// The seed's three-way QKV split, on a batched input, with different widths.
// CHECK-LABEL: func.func @three_way_qkv(
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %wq, %wk, %wv {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<16x20xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %x, %[[SHARED_W]] : tensor<2x4x16xf32>, tensor<16x20xf32> -> tensor<2x4x20xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 2 : i64, start = 0 : i64, length = 8 : i64} : tensor<2x4x20xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 2 : i64, start = 8 : i64, length = 8 : i64} : tensor<2x4x20xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 2 : i64, start = 16 : i64, length = 4 : i64} : tensor<2x4x20xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT:  func.return %[[Q]], %[[K]], %[[V]] : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>
func.func @three_way_qkv(%x: tensor<2x4x16xf32>, %wq: tensor<16x8xf32>, %wk: tensor<16x8xf32>, %wv: tensor<16x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %q = nn.matmul %x, %wq : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %k = nn.matmul %x, %wk : tensor<2x4x16xf32>, tensor<16x8xf32> -> tensor<2x4x8xf32>
  %v = nn.matmul %x, %wv : tensor<2x4x16xf32>, tensor<16x4xf32> -> tensor<2x4x4xf32>
  func.return %q, %k, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// The seed's late-weight regression: w2 is defined after the first matmul. The merged matmul
// goes before the first reader of either result, after every weight.
// CHECK-LABEL: func.func @late_weight(
// CHECK-NEXT:  %[[W2:[^ ]+]] = nn.constant {value = dense<1.500000e+00> : tensor<4x2xf32>} : tensor<4x2xf32>
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %w1, %[[W2]] {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %x, %[[SHARED_W]] : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 2 : i64} : tensor<8x4xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 2 : i64, length = 2 : i64} : tensor<8x4xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  %[[Y:[^ ]+]] = nn.add %[[A]], %[[B]] : tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<8x2xf32>
func.func @late_weight(%x: tensor<8x4xf32>, %w1: tensor<4x2xf32>) -> tensor<8x2xf32> {
  %a = nn.matmul %x, %w1 : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %w2 = nn.constant {value = dense<1.5> : tensor<4x2xf32>} : tensor<4x2xf32>
  %b = nn.matmul %x, %w2 : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %y = nn.add %a, %b : tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  func.return %y : tensor<8x2xf32>
}

// -----

// The seed's qwen35moe regression: router, shared-expert router, gate and up all read the
// flattened hidden state, with weights scattered through the block: four slices.
// CHECK-LABEL: func.func @moe_shared_input(
// CHECK-NEXT:  %[[H2:[^ ]+]] = nn.reshape %h : tensor<1x4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %router_w, %shared_router_w, %s_gate_w, %s_up_w {axis = 1 : i64} : (tensor<16x4xf32>, tensor<16x1xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x37xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %[[H2]], %[[SHARED_W]] : tensor<4x16xf32>, tensor<16x37xf32> -> tensor<4x37xf32>
// CHECK-NEXT:  %[[LOGITS:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 4 : i64} : tensor<4x37xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[SHARED_LOGITS:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 4 : i64, length = 1 : i64} : tensor<4x37xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %[[S_GATE:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 5 : i64, length = 16 : i64} : tensor<4x37xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S_UP:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 21 : i64, length = 16 : i64} : tensor<4x37xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[SHARED_GATE:[^ ]+]] = nn.sigmoid %[[SHARED_LOGITS]] : tensor<4x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %[[S_SILU:[^ ]+]] = nn.silu %[[S_GATE]] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  %[[S_SWIGLU:[^ ]+]] = nn.mul %[[S_SILU]], %[[S_UP]] : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:  func.return %[[LOGITS]], %[[SHARED_GATE]], %[[S_SWIGLU]] : tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x16xf32>
func.func @moe_shared_input(%h: tensor<1x4x16xf32>, %router_w: tensor<16x4xf32>, %shared_router_w: tensor<16x1xf32>, %s_gate_w: tensor<16x16xf32>, %s_up_w: tensor<16x16xf32>) -> (tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x16xf32>) {
  %h2 = nn.reshape %h : tensor<1x4x16xf32> -> tensor<4x16xf32>
  %logits = nn.matmul %h2, %router_w : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  %shared_logits = nn.matmul %h2, %shared_router_w : tensor<4x16xf32>, tensor<16x1xf32> -> tensor<4x1xf32>
  %shared_gate = nn.sigmoid %shared_logits : tensor<4x1xf32> -> tensor<4x1xf32>
  %s_gate = nn.matmul %h2, %s_gate_w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %s_up = nn.matmul %h2, %s_up_w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %s_silu = nn.silu %s_gate : tensor<4x16xf32> -> tensor<4x16xf32>
  %s_swiglu = nn.mul %s_silu, %s_up : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %logits, %shared_gate, %s_swiglu : tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x16xf32>
}

// -----

// The weights of the second and third matmul appear after the first result is read. A pure
// producer whose operands are ready moves up with the merge (the constant, the concat of
// parameters); the relu of a late constant does not (one level only), so its matmul stays.
// CHECK-LABEL: func.func @late_weights_move_up(
// CHECK-NEXT:  %[[W2:[^ ]+]] = nn.constant {value = dense<5.000000e-01> : tensor<4x2xf32>} : tensor<4x2xf32>
// CHECK-NEXT:  %[[W3:[^ ]+]] = nn.concat %w3a, %w3b {axis = 1 : i64} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %w1, %[[W2]], %[[W3]] {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = nn.matmul %x, %[[SHARED_W]] : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 2 : i64} : tensor<8x6xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 2 : i64, length = 2 : i64} : tensor<8x6xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  %[[C:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 4 : i64, length = 2 : i64} : tensor<8x6xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  %[[R:[^ ]+]] = nn.relu %[[A]] : tensor<8x2xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  %[[W4A:[^ ]+]] = nn.constant {value = dense<-5.000000e-01> : tensor<4x2xf32>} : tensor<4x2xf32>
// CHECK-NEXT:  %[[W4:[^ ]+]] = nn.relu %[[W4A]] : tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT:  %[[D:[^ ]+]] = nn.matmul %x, %[[W4]] : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
// CHECK-NEXT:  func.return %[[R]], %[[B]], %[[C]], %[[D]] : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>
func.func @late_weights_move_up(%x: tensor<8x4xf32>, %w1: tensor<4x2xf32>, %w3a: tensor<4x1xf32>, %w3b: tensor<4x1xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) {
  %a = nn.matmul %x, %w1 : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %r = nn.relu %a : tensor<8x2xf32> -> tensor<8x2xf32>
  %w2 = nn.constant {value = dense<0.5> : tensor<4x2xf32>} : tensor<4x2xf32>
  %b = nn.matmul %x, %w2 : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %w3 = nn.concat %w3a, %w3b {axis = 1 : i64} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %c = nn.matmul %x, %w3 : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %w4a = nn.constant {value = dense<-0.5> : tensor<4x2xf32>} : tensor<4x2xf32>
  %w4 = nn.relu %w4a : tensor<4x2xf32> -> tensor<4x2xf32>
  %d = nn.matmul %x, %w4 : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  func.return %r, %b, %c, %d : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>
}

// -----

// CHECK-LABEL: func.func @negative_single_matmul(
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.matmul %x, %w1 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[A]] : tensor<6x8xf32>
func.func @negative_single_matmul(%x: tensor<6x16xf32>, %w1: tensor<16x8xf32>) -> tensor<6x8xf32> {
  %a = nn.matmul %x, %w1 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  func.return %a : tensor<6x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_different_inputs(
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.matmul %x, %w1 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.matmul %z, %w2 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
// CHECK-NEXT:  func.return %[[A]], %[[B]] : tensor<6x8xf32>, tensor<6x8xf32>
func.func @negative_different_inputs(%x: tensor<6x16xf32>, %z: tensor<6x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %a = nn.matmul %x, %w1 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  %b = nn.matmul %z, %w2 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  func.return %a, %b : tensor<6x8xf32>, tensor<6x8xf32>
}

// -----

// A batched weight does not concatenate into [K, N1 + N2]; x as a right operand is no match.
// CHECK-LABEL: func.func @negative_batched_weight(
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.matmul %x, %w1 : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.matmul %x, %w2 : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT:  %[[C:[^ ]+]] = nn.matmul %y, %x : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT:  func.return %[[A]], %[[B]], %[[C]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
func.func @negative_batched_weight(%x: tensor<2x4x4xf32>, %w1: tensor<4x4xf32>, %w2: tensor<2x4x4xf32>, %y: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %a = nn.matmul %x, %w1 : tensor<2x4x4xf32>, tensor<4x4xf32> -> tensor<2x4x4xf32>
  %b = nn.matmul %x, %w2 : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %c = nn.matmul %y, %x : tensor<2x4x4xf32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  func.return %a, %b, %c : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
}

// -----

// The second weight is computed from the first result: merging would make a cycle.
// CHECK-LABEL: func.func @negative_dependent_matmuls(
// CHECK-NEXT:  %[[A:[^ ]+]] = nn.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.matmul %x, %[[A]] : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[T:[^ ]+]] = nn.relu %[[B]] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  %[[C:[^ ]+]] = nn.matmul %x, %[[T]] : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  func.return %[[B]], %[[C]] : tensor<4x4xf32>, tensor<4x4xf32>
func.func @negative_dependent_matmuls(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %a = nn.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %b = nn.matmul %x, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %t = nn.relu %b : tensor<4x4xf32> -> tensor<4x4xf32>
  %c = nn.matmul %x, %t : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %b, %c : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// BERT's QKV projections as fuse-matmul-bias-act leaves them, weights bound (fusec.compile
// marks them): the declared column operands, weight and bias, are concatenated along their last
// axes. Under plain-only they stay.
// CHECK-LABEL: func.func @bias_qkv(
// CHECK-NEXT:  %[[W:[^ ]+]] = nn.concat %wq, %wk, %wv {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x24xf32>
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.concat %bq, %bk, %bv {axis = 0 : i64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<24xf32>
// CHECK-NEXT:  %[[M:[^ ]+]] = fused.matmul_bias_act %x, %[[W]], %[[B]] : tensor<1x4x16xf32>, tensor<16x24xf32>, tensor<24xf32> -> tensor<1x4x24xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[M]] {axis = 2 : i64, start = 0 : i64, length = 8 : i64}
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[M]] {axis = 2 : i64, start = 8 : i64, length = 8 : i64}
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.narrow %[[M]] {axis = 2 : i64, start = 16 : i64, length = 8 : i64}
// CHECK-NEXT:  func.return %[[Q]], %[[K]], %[[V]]
// EARLY-LABEL: func.func @bias_qkv(
// EARLY-NEXT:  nn.concat %wq, %wk, %wv
// EARLY-NEXT:  nn.concat %bq, %bk, %bv
// EARLY-NEXT:  fused.matmul_bias_act %x
// PLAIN-LABEL: func.func @bias_qkv(
// PLAIN-NEXT:  fused.matmul_bias_act %x, %wq, %bq
// PLAIN-NEXT:  fused.matmul_bias_act %x, %wk, %bk
// PLAIN-NEXT:  fused.matmul_bias_act %x, %wv, %bv
func.func @bias_qkv(%x: tensor<1x4x16xf32>, %wq: tensor<16x8xf32> {fusec.bound}, %bq: tensor<8xf32> {fusec.bound}, %wk: tensor<16x8xf32> {fusec.bound}, %bk: tensor<8xf32> {fusec.bound}, %wv: tensor<16x8xf32> {fusec.bound}, %bv: tensor<8xf32> {fusec.bound}) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %q = fused.matmul_bias_act %x, %wq, %bq : tensor<1x4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %k = fused.matmul_bias_act %x, %wk, %bk : tensor<1x4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %v = fused.matmul_bias_act %x, %wv, %bv : tensor<1x4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  func.return %q, %k, %v : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// PyTorch's nn.Linear weights reach the IR as transposes of bound [out, in] arguments: a value
// that only moves data (transpose, concat, narrow, reshape) of bound values is known at compile
// time, so bound-only merges them (fold_params folds the transposes and the concatenation);
// a transpose of an argument that is not bound is not known, and k stays alone there.
// CHECK-LABEL: func.func @transposed_bound_weights(
// CHECK:       nn.concat %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x24xf32>
// EARLY-LABEL: func.func @transposed_bound_weights(
// EARLY:       fused.matmul_bias_act %x, %tk, %bk
// EARLY:       %[[W:[^ ]+]] = nn.concat %tq, %tv {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x16xf32>
// EARLY:       fused.matmul_bias_act %x, %[[W]]
// EARLY-NOT:   fused.matmul_bias_act
// EARLY:       func.return
func.func @transposed_bound_weights(%x: tensor<1x4x16xf32>, %wq: tensor<8x16xf32> {fusec.bound}, %bq: tensor<8xf32> {fusec.bound}, %wk: tensor<8x16xf32>, %bk: tensor<8xf32> {fusec.bound}, %wv: tensor<8x16xf32> {fusec.bound}, %bv: tensor<8xf32> {fusec.bound}) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %tq = nn.transpose %wq {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
  %q = fused.matmul_bias_act %x, %tq, %bq : tensor<1x4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %tk = nn.transpose %wk {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
  %k = fused.matmul_bias_act %x, %tk, %bk : tensor<1x4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  %tv = nn.transpose %wv {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
  %v = fused.matmul_bias_act %x, %tv, %bv : tensor<1x4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  func.return %q, %k, %v : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// Weights not bound: merged by default (as plain matmuls are), but not under bound-only, where
// the concatenation would copy them at every call. A bias as an nn.constant is known.
// CHECK-LABEL: func.func @unbound_weights(
// CHECK-NEXT:  %[[C:[^ ]+]] = nn.constant
// CHECK-NEXT:  %[[W:[^ ]+]] = nn.concat %w1, %w2 {axis = 1 : i64}
// CHECK-NEXT:  %[[B:[^ ]+]] = nn.concat %b1, %[[C]] {axis = 0 : i64}
// CHECK-NEXT:  fused.matmul_bias_act %x, %[[W]], %[[B]] {activation = "relu"}
// EARLY-LABEL: func.func @unbound_weights(
// EARLY-NEXT:  nn.constant
// EARLY-NEXT:  fused.matmul_bias_act %x, %w1, %b1 {activation = "relu"}
// EARLY-NEXT:  fused.matmul_bias_act %x, %w2, %{{[^ ]+}} {activation = "relu"}
func.func @unbound_weights(%x: tensor<6x16xf32>, %w1: tensor<16x8xf32>, %b1: tensor<8xf32> {fusec.bound}, %w2: tensor<16x4xf32> {fusec.bound}) -> (tensor<6x8xf32>, tensor<6x4xf32>) {
  %b2 = nn.constant {value = dense<0.5> : tensor<4xf32>} : tensor<4xf32>
  %a = fused.matmul_bias_act %x, %w1, %b1 {activation = "relu"} : tensor<6x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %b = fused.matmul_bias_act %x, %w2, %b2 {activation = "relu"} : tensor<6x16xf32>, tensor<16x4xf32>, tensor<4xf32> -> tensor<6x4xf32>
  func.return %a, %b : tensor<6x8xf32>, tensor<6x4xf32>
}

// -----

// Siblings of different activations, a scalar bias (it does not split by columns) and a plain
// matmul beside a biased one: nothing merges.
// CHECK-LABEL: func.func @negative_epilogues_differ(
// CHECK-NEXT:  fused.matmul_bias_act %x, %w1, %b1 {activation = "gelu"}
// CHECK-NEXT:  fused.matmul_bias_act %x, %w2, %b2 :
// CHECK-NEXT:  fused.matmul_bias_act %x, %w3, %s :
// CHECK-NEXT:  fused.matmul_bias_act %x, %w4, %s :
// CHECK-NEXT:  nn.matmul %x, %w5
// CHECK-NEXT:  func.return
func.func @negative_epilogues_differ(%x: tensor<6x16xf32>, %w1: tensor<16x8xf32>, %b1: tensor<8xf32>, %w2: tensor<16x8xf32>, %b2: tensor<8xf32>, %w3: tensor<16x8xf32>, %w4: tensor<16x8xf32>, %s: tensor<f32>, %w5: tensor<16x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) {
  %a = fused.matmul_bias_act %x, %w1, %b1 {activation = "gelu"} : tensor<6x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %b = fused.matmul_bias_act %x, %w2, %b2 : tensor<6x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<6x8xf32>
  %c = fused.matmul_bias_act %x, %w3, %s : tensor<6x16xf32>, tensor<16x8xf32>, tensor<f32> -> tensor<6x8xf32>
  %d = fused.matmul_bias_act %x, %w4, %s : tensor<6x16xf32>, tensor<16x8xf32>, tensor<f32> -> tensor<6x8xf32>
  %e = nn.matmul %x, %w5 : tensor<6x16xf32>, tensor<16x8xf32> -> tensor<6x8xf32>
  func.return %a, %b, %c, %d, %e : tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
}

// -----

// Projections with a bias (Qwen2's q, k, v) merge among themselves, biases concatenated too; a
// plain matmul of the same input merges with neither (it would need a zero bias), nor does a
// biased one with an activation.
// CHECK-LABEL: func.func @biased_qkv(
// CHECK-NEXT:  %[[G:[^ ]+]] = fused.matmul_bias_act %x, %wg, %bk {activation = "gelu"}
// CHECK-NEXT:  %[[V:[^ ]+]] = nn.matmul %x, %wv
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %wq, %wk {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<16x12xf32>
// CHECK-NEXT:  %[[SHARED_B:[^ ]+]] = nn.concat %bq, %bk {axis = 0 : i64} : (tensor<8xf32>, tensor<4xf32>) -> tensor<12xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = fused.matmul_bias_act %x, %[[SHARED_W]], %[[SHARED_B]] : tensor<4x16xf32>, tensor<16x12xf32>, tensor<12xf32> -> tensor<4x12xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 8 : i64} : tensor<4x12xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 8 : i64, length = 4 : i64} : tensor<4x12xf32> -> tensor<4x4xf32>
// CHECK-NEXT:  func.return %[[Q]], %[[K]], %[[V]], %[[G]]
func.func @biased_qkv(%x: tensor<4x16xf32>, %wq: tensor<16x8xf32>, %wk: tensor<16x4xf32>, %wv: tensor<16x4xf32>, %wg: tensor<16x4xf32>, %bq: tensor<8xf32>, %bk: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %q = fused.matmul_bias_act %x, %wq, %bq : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %k = fused.matmul_bias_act %x, %wk, %bk : tensor<4x16xf32>, tensor<16x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %g = fused.matmul_bias_act %x, %wg, %bk {activation = "gelu"} : tensor<4x16xf32>, tensor<16x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  %v = nn.matmul %x, %wv : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
  func.return %q, %k, %v, %g : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Zero biases (constants of one value, as the importer leaves an exporter's zero biases) are
// one constant, not a concat to copy on every call.
// CHECK-LABEL: func.func @zero_biases(
// CHECK-NEXT:  %[[SHARED_W:[^ ]+]] = nn.concat %wq, %wk {axis = 1 : i64} : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<16x12xf32>
// CHECK-NEXT:  %[[SHARED_B:[^ ]+]] = nn.constant {value = dense<0.000000e+00> : tensor<12xf32>} : tensor<12xf32>
// CHECK-NEXT:  %[[SHARED:[^ ]+]] = fused.matmul_bias_act %x, %[[SHARED_W]], %[[SHARED_B]] : tensor<4x16xf32>, tensor<16x12xf32>, tensor<12xf32> -> tensor<4x12xf32>
// CHECK-NEXT:  %[[Q:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 0 : i64, length = 8 : i64}
// CHECK-NEXT:  %[[K:[^ ]+]] = nn.narrow %[[SHARED]] {axis = 1 : i64, start = 8 : i64, length = 4 : i64}
// CHECK-NEXT:  func.return %[[Q]], %[[K]]
func.func @zero_biases(%x: tensor<4x16xf32>, %wq: tensor<16x8xf32>, %wk: tensor<16x4xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %bq = nn.constant {value = dense<0.0> : tensor<8xf32>} : tensor<8xf32>
  %bk = nn.constant {value = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
  %q = fused.matmul_bias_act %x, %wq, %bq : tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %k = fused.matmul_bias_act %x, %wk, %bk : tensor<4x16xf32>, tensor<16x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  func.return %q, %k : tensor<4x8xf32>, tensor<4x4xf32>
}
