// On a GPU a 16-bit elementwise kernel whose accesses along its rows are 16-byte aligned runs
// 8 lanes a work-item, each vector load and store marked kernel.aligned and printed as one
// uint4 (the knob gpu_half_vectors, on); the kernel IR prints and parses again. Off, or where
// a run of 8 may start off 16 bytes (@narrowed: rows read from element 4), it stays scalar.

// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=IR
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | fusec-opt - | filecheck %s --check-prefix=IR
// RUN: fusec-opt %s -t 'opencl{device=gpu}' | filecheck %s --check-prefix=CL
// RUN: fusec-opt %s --knob gpu_half_vectors=0 -t 'opencl{device=gpu}' | filecheck %s --check-prefix=OFF

// IR-LABEL: kernel.func @f_mul_0
// IR: vector.load %in0[{{.*}}] {kernel.aligned} : memref<4x64xf16>, vector<8xf16>
// IR: vector.load %in1[{{.*}}] {kernel.aligned} : memref<4x64xf16>, vector<8xf16>
// IR: vector.store {{.*}} {kernel.aligned} : memref<4x64xf16>, vector<8xf16>
// IR-LABEL: kernel.func @narrowed_
// IR-NOT: vector.load
// IR-NOT: kernel.aligned

// CL-LABEL: __kernel void f_
// CL: const int v1 = v0 < 32;
// CL: fusec_load_half8(a + v3 * 64 + v4)
// CL: fusec_load_half8(b + v3 * 64 + v4)
// CL: fusec_store_half8({{.*}} + v3 * 64 + v4)
// CL-LABEL: __kernel void narrowed_
// CL-NOT: fusec_load_half8
// CL: vload_half(v3 * 72 + v4, a)

// OFF-NOT: fusec_load_half8
// OFF: const int v1 = v0 < 256;
// OFF: vload_half(v3 * 64 + v2, a)
func.func @f(%a: tensor<4x64xf16>, %b: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %0 = nn.mul %a, %b : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  %1 = nn.tanh %0 : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return %1 : tensor<4x64xf16>
}

func.func @narrowed(%a: tensor<4x72xf16>, %b: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %n = nn.narrow %a {axis = 1 : i64, start = 4 : i64, length = 64 : i64} : tensor<4x72xf16> -> tensor<4x64xf16>
  %0 = nn.add %n, %b : tensor<4x64xf16>, tensor<4x64xf16> -> tensor<4x64xf16>
  func.return %0 : tensor<4x64xf16>
}
