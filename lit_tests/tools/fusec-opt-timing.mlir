// --timing: one row for parsing, each pass in pipeline order, verification and printing, on
// stderr; the rows are always in this order.

// RUN: fusec-opt %s -p 'fuse-matmul-bias-act,cse,cse' --timing 2>&1 >/dev/null | filecheck %s
// CHECK:      {{^}}===-{{-+}}==={{$}}
// CHECK-NEXT: fusec-opt execution time report
// CHECK-NEXT: {{^}}===-{{-+}}==={{$}}
// CHECK-NEXT: {{^}}  Total Execution Time: {{[0-9]+\.[0-9][0-9][0-9][0-9]}} seconds{{$}}
// CHECK-EMPTY:
// CHECK-NEXT: ----Wall Time----  ----Name----
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  parse$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  fuse-matmul-bias-act$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  cse$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  cse #2$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  verify$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)  print$}}
// CHECK-NEXT: {{^ +[0-9]+\.[0-9][0-9][0-9][0-9] \(100\.0%\)  Total$}}

// Without --timing, nothing on stderr.
// RUN: fusec-opt %s -p default 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: {{.}}

func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %mm = nn.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %h = nn.add %mm, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  func.return %h : tensor<8x64xf32>
}
