// Every verifier message of nn.cache_update, nn.cache_attention, nn.argmax and of donated
// arguments (fusec.aliasing_output), one chunk each, as one line at the op or function.

// RUN: cd %S && fusec-opt nn-kv-cache-invalid.mlir --split-input-file --verify-diagnostics | filecheck nn-kv-cache-invalid.mlir

func.func @read_after_update(%c: tensor<1x8x4xf32> {fusec.aliasing_output = 0 : i64}, %u: tensor<1x1x4xf32>, %pos: tensor<i32>) -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>) {
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf32>, tensor<i32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' updates the donated argument %c in place, but 'nn.add' reads it afterwards (at nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:3): read it before the update, or do not donate it{{$}}
  %1 = nn.add %c, %0 : tensor<1x8x4xf32>, tensor<1x8x4xf32> -> tensor<1x8x4xf32>
  func.return %0, %1 : tensor<1x8x4xf32>, tensor<1x8x4xf32>
}

// -----

func.func @read_through_reshape_after_update(%c: tensor<1x8x4xf32> {fusec.aliasing_output = 0 : i64}, %u: tensor<1x1x4xf32>, %pos: tensor<i32>) -> (tensor<1x8x4xf32>, tensor<8x4xf32>) {
  %r = nn.reshape %c : tensor<1x8x4xf32> -> tensor<8x4xf32>
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf32>, tensor<i32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' updates the donated argument %c in place, but 'nn.relu' reads it afterwards (at nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:3): read it before the update, or do not donate it{{$}}
  %1 = nn.relu %r : tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %0, %1 : tensor<1x8x4xf32>, tensor<8x4xf32>
}

// -----

func.func @updated_twice(%c: tensor<1x8x4xf32> {fusec.aliasing_output = 0 : i64}, %u: tensor<1x1x4xf32>, %pos: tensor<i32>) -> tensor<1x8x4xf32> {
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf32>, tensor<i32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' updates the donated argument %c in place, but 'nn.cache_update' reads it afterwards (at nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:3): read it before the update, or do not donate it{{$}}
  %1 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf32>, tensor<i32> -> tensor<1x8x4xf32>
  func.return %1 : tensor<1x8x4xf32>
}

// -----

func.func @returned_after_update(%c: tensor<1x8x4xf32> {fusec.aliasing_output = 0 : i64}, %u: tensor<1x1x4xf32>, %pos: tensor<i32>) -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>) {
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf32>, tensor<i32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' updates the donated argument %c in place, but 'func.return' reads it afterwards (at nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:3): read it before the update, or do not donate it{{$}}
  func.return %0, %c : tensor<1x8x4xf32>, tensor<1x8x4xf32>
}

// -----

// CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' @no_such_result argument #0: fusec.aliasing_output = 1 is not a result index (the function has 1 results){{$}}
func.func @no_such_result(%c: tensor<1x8x4xf32> {fusec.aliasing_output = 1 : i64}) -> tensor<1x8x4xf32> {
  func.return %c : tensor<1x8x4xf32>
}

// -----

// CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' @other_type argument #0 (tensor<1x8x4xf32>) is donated to result #0 of another type (tensor<1x8x4xf16>){{$}}
func.func @other_type(%c: tensor<1x8x4xf32> {fusec.aliasing_output = 0 : i64}, %h: tensor<1x8x4xf16>) -> tensor<1x8x4xf16> {
  func.return %h : tensor<1x8x4xf16>
}

// -----

// CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' @twice argument #1: result #0 already reuses another argument's buffer{{$}}
func.func @twice(%a: tensor<4xf32> {fusec.aliasing_output = 0 : i64}, %b: tensor<4xf32> {fusec.aliasing_output = 0 : i64}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

// CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' @not_an_index argument #0: fusec.aliasing_output must be an integer (a result index), got "first"{{$}}
func.func @not_an_index(%a: tensor<4xf32> {fusec.aliasing_output = "first"}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

func.func @pos_not_scalar(%c: tensor<1x8x4xf32>, %u: tensor<1x1x4xf32>, %pos: tensor<1xi32>) {
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf32>, tensor<1xi32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' pos (tensor<1xi32>) must be tensor<i32>{{$}}
  func.return
}

// -----

func.func @update_too_long(%c: tensor<1x8x4xf32>, %u: tensor<1x9x4xf32>, %pos: tensor<i32>) {
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x9x4xf32>, tensor<i32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' update (tensor<1x9x4xf32>) must have the shape of the cache (tensor<1x8x4xf32>) but at most 8 rows along axis 1{{$}}
  func.return
}

// -----

func.func @update_other_type(%c: tensor<1x8x4xf32>, %u: tensor<1x1x4xf16>, %pos: tensor<i32>) {
  %0 = nn.cache_update %c, %u, %pos : tensor<1x8x4xf32>, tensor<1x1x4xf16>, tensor<i32> -> tensor<1x8x4xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_update' update (tensor<1x1x4xf16>) must have the element type of cache (tensor<1x8x4xf32>){{$}}
  func.return
}

// -----

func.func @kv_heads_not_dividing(%q: tensor<1x1x24xf32>, %c: tensor<1x8x16xf32>, %pos: tensor<i32>) {
  %0 = nn.cache_attention %q, %c, %c, %pos {num_heads = 3 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64} : tensor<1x1x24xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<i32> -> tensor<1x1x24xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_attention' num_kv_heads 2 must divide num_heads 3{{$}}
  func.return
}

// -----

func.func @cache_width(%q: tensor<1x1x32xf32>, %c: tensor<1x8x16xf32>, %pos: tensor<i32>) {
  %0 = nn.cache_attention %q, %c, %c, %pos {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64} : tensor<1x1x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<i32> -> tensor<1x1x32xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_attention' k_cache (tensor<1x8x16xf32>) must be [B, S, 8]{{$}}
  func.return
}

// -----

func.func @more_queries_than_cache(%q: tensor<1x9x8xf32>, %c: tensor<1x8x8xf32>, %pos: tensor<i32>) {
  %0 = nn.cache_attention %q, %c, %c, %pos {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64} : tensor<1x9x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<i32> -> tensor<1x9x8xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_attention' q (tensor<1x9x8xf32>) has more positions than the cache holds (tensor<1x8x8xf32>){{$}}
  func.return
}

// -----

func.func @cache_batch(%q: tensor<2x1x8xf32>, %c: tensor<1x8x8xf32>, %pos: tensor<i32>) {
  %0 = nn.cache_attention %q, %c, %c, %pos {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64} : tensor<2x1x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<i32> -> tensor<2x1x8xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_attention' k_cache (tensor<1x8x8xf32>) must have the batch size of q (tensor<2x1x8xf32>){{$}}
  func.return
}

// -----

func.func @k_v_shapes(%q: tensor<1x1x8xf32>, %k: tensor<1x8x8xf32>, %v: tensor<1x4x8xf32>, %pos: tensor<i32>) {
  %0 = nn.cache_attention %q, %k, %v, %pos {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64} : tensor<1x1x8xf32>, tensor<1x8x8xf32>, tensor<1x4x8xf32>, tensor<i32> -> tensor<1x1x8xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.cache_attention' k_cache (tensor<1x8x8xf32>) and v_cache (tensor<1x4x8xf32>) must have the same shape{{$}}
  func.return
}

// -----

func.func @argmax_result_type(%x: tensor<2x5xf32>) {
  %0 = nn.argmax %x : tensor<2x5xf32> -> tensor<2xf32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.argmax' result has element type f32 (tensor<2xf32>); expected i32{{$}}
  func.return
}

// -----

func.func @argmax_shape(%x: tensor<2x5xf32>) {
  %0 = nn.argmax %x : tensor<2x5xf32> -> tensor<5xi32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.argmax' result type tensor<5xi32> does not have the expected shape [2]{{$}}
  func.return
}

// -----

func.func @argmax_empty_axis(%x: tensor<2x0xf32>) {
  %0 = nn.argmax %x : tensor<2x0xf32> -> tensor<2xi32>
  // CHECK: {{^}}nn-kv-cache-invalid.mlir:[[# @LINE - 1]]:3: error: 'nn.argmax' has no element to choose along the empty axis 1 of tensor<2x0xf32>{{$}}
  func.return
}
