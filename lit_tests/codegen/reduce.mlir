// A fused reduction lowers to a generated kernel: one work-item per kept element, an scf.for
// over the reduced elements carrying the accumulator, the prologue body inside the loop, and
// the mean's 1/n after it.
// On a CPU (the default) the loop folds float16 vectors of the contiguous innermost reduced
// dimension into a vector accumulator (float8 where 16 would straddle two rows of the reduced
// elements), folds its lanes pairwise, then takes the remainder one element at a time; a
// reduction with few outputs is split into contiguous chunks, one work-item each, and a
// second kernel combines the chunks' partial results.
// On a GPU (GPU, GPU-CL) the short reduction is a plain scalar loop and the long one a
// work-group tree.

// RUN: fusec-opt %s -p lower-opencl | filecheck %s
// RUN: fusec-opt %s -t opencl | filecheck %s --check-prefix=CL
// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu},plan-buffers' | filecheck %s --check-prefix=GPU
// RUN: fusec-opt %s -t 'opencl{device=gpu}' | filecheck %s --check-prefix=GPU-CL

// CHECK-LABEL: func.func @centered_sq(%x: memref<3x5x37xf32>, %b: memref<37xf32>) -> memref<3x5x1xf32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<3x5x1xf32>
// CHECK-NEXT:    kernel.launch @centered_sq_reduce_mean_0(%x, %b, %[[Y]]) {global_size = array<i64: 16>, local_size = array<i64: 16>}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-LABEL: kernel.func @centered_sq_reduce_mean_0(%in0: memref<3x5x37xf32>, %in1: memref<37xf32>, %out: memref<3x5x1xf32>) {
// CHECK:           %[[INIT:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[UB:.*]] = arith.constant 37 : index
// CHECK-NEXT:      %[[VUB:.*]] = arith.constant 32 : index
// CHECK-NEXT:      %[[SPLAT:.*]] = vector.broadcast %[[INIT]] : f32 to vector<16xf32>
// CHECK-NEXT:      %[[VSTEP:.*]] = arith.constant 16 : index
// CHECK-NEXT:      %[[VSUM:.*]] = scf.for %[[VR:.*]] = %[[LB]] to %[[VUB]] step %[[VSTEP]] iter_args(%[[VACC:.*]] = %[[SPLAT]]) -> (vector<16xf32>) {
// CHECK-NEXT:        %[[VA:.*]] = vector.load %in0[%[[I0:.*]], %[[I1:.*]], %[[VR]]] : memref<3x5x37xf32>, vector<16xf32>
// CHECK-NEXT:        %[[VB:.*]] = vector.load %in1[%[[VR]]] : memref<37xf32>, vector<16xf32>
// CHECK-NEXT:        %[[VD:.*]] = arith.subf %[[VA]], %[[VB]] : vector<16xf32>
// CHECK-NEXT:        %[[VSQ:.*]] = arith.mulf %[[VD]], %[[VD]] : vector<16xf32>
// CHECK-NEXT:        %[[VNEXT:.*]] = arith.addf %[[VACC]], %[[VSQ]] : vector<16xf32>
// CHECK-NEXT:        scf.yield %[[VNEXT]] : vector<16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[L0:.*]] = vector.extract %[[VSUM]][0] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L1:.*]] = vector.extract %[[VSUM]][1] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L2:.*]] = vector.extract %[[VSUM]][2] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L3:.*]] = vector.extract %[[VSUM]][3] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L4:.*]] = vector.extract %[[VSUM]][4] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L5:.*]] = vector.extract %[[VSUM]][5] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L6:.*]] = vector.extract %[[VSUM]][6] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L7:.*]] = vector.extract %[[VSUM]][7] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L8:.*]] = vector.extract %[[VSUM]][8] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L9:.*]] = vector.extract %[[VSUM]][9] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L10:.*]] = vector.extract %[[VSUM]][10] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L11:.*]] = vector.extract %[[VSUM]][11] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L12:.*]] = vector.extract %[[VSUM]][12] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L13:.*]] = vector.extract %[[VSUM]][13] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L14:.*]] = vector.extract %[[VSUM]][14] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[L15:.*]] = vector.extract %[[VSUM]][15] : f32 from vector<16xf32>
// CHECK-NEXT:      %[[P0:.*]] = arith.addf %[[L0]], %[[L8]] : f32
// CHECK-NEXT:      %[[P1:.*]] = arith.addf %[[L1]], %[[L9]] : f32
// CHECK-NEXT:      %[[P2:.*]] = arith.addf %[[L2]], %[[L10]] : f32
// CHECK-NEXT:      %[[P3:.*]] = arith.addf %[[L3]], %[[L11]] : f32
// CHECK-NEXT:      %[[P4:.*]] = arith.addf %[[L4]], %[[L12]] : f32
// CHECK-NEXT:      %[[P5:.*]] = arith.addf %[[L5]], %[[L13]] : f32
// CHECK-NEXT:      %[[P6:.*]] = arith.addf %[[L6]], %[[L14]] : f32
// CHECK-NEXT:      %[[P7:.*]] = arith.addf %[[L7]], %[[L15]] : f32
// CHECK-NEXT:      %[[Q0:.*]] = arith.addf %[[P0]], %[[P4]] : f32
// CHECK-NEXT:      %[[Q1:.*]] = arith.addf %[[P1]], %[[P5]] : f32
// CHECK-NEXT:      %[[Q2:.*]] = arith.addf %[[P2]], %[[P6]] : f32
// CHECK-NEXT:      %[[Q3:.*]] = arith.addf %[[P3]], %[[P7]] : f32
// CHECK-NEXT:      %[[R0:.*]] = arith.addf %[[Q0]], %[[Q2]] : f32
// CHECK-NEXT:      %[[R1:.*]] = arith.addf %[[Q1]], %[[Q3]] : f32
// CHECK-NEXT:      %[[LANES:.*]] = arith.addf %[[R0]], %[[R1]] : f32
// CHECK-NEXT:      %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[R:.*]] = %[[VUB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %[[LANES]]) -> (f32) {
// CHECK-NEXT:        %[[A:.*]] = memref.load %in0[%[[I0]], %[[I1]], %[[R]]] : memref<3x5x37xf32>
// CHECK-NEXT:        %[[B:.*]] = memref.load %in1[%[[R]]] : memref<37xf32>
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 0.0270270277 : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.mulf %[[SUM]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.store %[[MEAN]], %out[%[[I0]], %[[I1]], %[[ZERO]]] : memref<3x5x1xf32>

// CL-LABEL: __kernel void centered_sq_reduce_mean_0(
// CL:          float16 [[VACC:v[0-9]+]] = [[SPLAT:v[0-9]+]];
// CL-NEXT:     for (int [[VR:v[0-9]+]] = 0; [[VR]] < 32; [[VR]] += 16) {
// CL-NEXT:       const float16 [[VA:v[0-9]+]] = vload16(0, in0 + [[I0:v[0-9]+]] * 185 + [[I1:v[0-9]+]] * 37 + [[VR]]);
// CL-NEXT:       const float16 [[VB:v[0-9]+]] = vload16(0, in1 + [[VR]]);
// CL-NEXT:       const float16 [[VD:v[0-9]+]] = [[VA]] - [[VB]];
// CL-NEXT:       const float16 [[VSQ:v[0-9]+]] = [[VD]] * [[VD]];
// CL-NEXT:       const float16 [[VNEXT:v[0-9]+]] = [[VACC]] + [[VSQ]];
// CL-NEXT:       [[VACC]] = [[VNEXT]];
// CL-NEXT:     }
// CL-NEXT:     const float [[L0:v[0-9]+]] = [[VACC]].s0;
// CL-NEXT:     const float [[L1:v[0-9]+]] = [[VACC]].s1;
// CL-NEXT:     const float [[L2:v[0-9]+]] = [[VACC]].s2;
// CL-NEXT:     const float [[L3:v[0-9]+]] = [[VACC]].s3;
// CL-NEXT:     const float [[L4:v[0-9]+]] = [[VACC]].s4;
// CL-NEXT:     const float [[L5:v[0-9]+]] = [[VACC]].s5;
// CL-NEXT:     const float [[L6:v[0-9]+]] = [[VACC]].s6;
// CL-NEXT:     const float [[L7:v[0-9]+]] = [[VACC]].s7;
// CL-NEXT:     const float [[L8:v[0-9]+]] = [[VACC]].s8;
// CL-NEXT:     const float [[L9:v[0-9]+]] = [[VACC]].s9;
// CL-NEXT:     const float [[L10:v[0-9]+]] = [[VACC]].sa;
// CL-NEXT:     const float [[L11:v[0-9]+]] = [[VACC]].sb;
// CL-NEXT:     const float [[L12:v[0-9]+]] = [[VACC]].sc;
// CL-NEXT:     const float [[L13:v[0-9]+]] = [[VACC]].sd;
// CL-NEXT:     const float [[L14:v[0-9]+]] = [[VACC]].se;
// CL-NEXT:     const float [[L15:v[0-9]+]] = [[VACC]].sf;
// CL-NEXT:     const float [[P0:v[0-9]+]] = [[L0]] + [[L8]];
// CL-NEXT:     const float [[P1:v[0-9]+]] = [[L1]] + [[L9]];
// CL-NEXT:     const float [[P2:v[0-9]+]] = [[L2]] + [[L10]];
// CL-NEXT:     const float [[P3:v[0-9]+]] = [[L3]] + [[L11]];
// CL-NEXT:     const float [[P4:v[0-9]+]] = [[L4]] + [[L12]];
// CL-NEXT:     const float [[P5:v[0-9]+]] = [[L5]] + [[L13]];
// CL-NEXT:     const float [[P6:v[0-9]+]] = [[L6]] + [[L14]];
// CL-NEXT:     const float [[P7:v[0-9]+]] = [[L7]] + [[L15]];
// CL-NEXT:     const float [[Q0:v[0-9]+]] = [[P0]] + [[P4]];
// CL-NEXT:     const float [[Q1:v[0-9]+]] = [[P1]] + [[P5]];
// CL-NEXT:     const float [[Q2:v[0-9]+]] = [[P2]] + [[P6]];
// CL-NEXT:     const float [[Q3:v[0-9]+]] = [[P3]] + [[P7]];
// CL-NEXT:     const float [[R0:v[0-9]+]] = [[Q0]] + [[Q2]];
// CL-NEXT:     const float [[R1:v[0-9]+]] = [[Q1]] + [[Q3]];
// CL-NEXT:     const float [[LANES:v[0-9]+]] = [[R0]] + [[R1]];
// CL-NEXT:     float [[ACC:v[0-9]+]] = [[LANES]];
// CL-NEXT:     for (int [[R:v[0-9]+]] = 32; [[R]] < 37; ++[[R]]) {
// CL-NEXT:       const float [[A:v[0-9]+]] = in0[[[I0]] * 185 + [[I1]] * 37 + [[R]]];
// CL-NEXT:       const float [[B:v[0-9]+]] = in1[[[R]]];
// CL-NEXT:       const float [[D:v[0-9]+]] = [[A]] - [[B]];
// CL-NEXT:       const float [[SQ:v[0-9]+]] = [[D]] * [[D]];
// CL-NEXT:       const float [[NEXT:v[0-9]+]] = [[ACC]] + [[SQ]];
// CL-NEXT:       [[ACC]] = [[NEXT]];
// CL-NEXT:     }
// CL-NEXT:     const float [[MEAN:v[0-9]+]] = [[ACC]] * 0.027027027681469917f;
// CL-NEXT:     out[[[I0]] * 5 + [[I1]]] = [[MEAN]];

// A max over all 27000 elements: six contiguous chunks of 4504 (whole float8 vectors, as 16
// does not divide the rows of 9000; the last chunk is shorter), one work-item each, then one
// work-item folds the six partial maxima.

// CHECK-LABEL: func.func @total(%x: memref<3x9000xf32>) -> memref<f32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT:    %[[PARTS:.*]] = kernel.alloc slot 0 : memref<6xf32>
// CHECK-NEXT:    kernel.launch @total_reduce_max_0(%x, %[[PARTS]]) {global_size = array<i64: 8>, local_size = array<i64: 8>}
// CHECK-NEXT:    kernel.launch @total_reduce_max_parts_1(%[[PARTS]], %[[Y]]) {global_size = array<i64: 8>, local_size = array<i64: 8>}
// CHECK-NEXT:    func.return %[[Y]] : memref<f32>

// CL-LABEL: __kernel void total_reduce_max_0(
// CL:          const int [[PART:v[0-9]+]] = (int)get_global_id(0);
// CL-NEXT:     const int [[IN:v[0-9]+]] = [[PART]] < 6;
// CL-NEXT:     if ([[IN]]) {
// CL-NEXT:       const int [[START:v[0-9]+]] = [[PART]] * 4504;
// CL-NEXT:       const int [[END:v[0-9]+]] = [[START]] + 4504;
// CL-NEXT:       const int [[STOP:v[0-9]+]] = min([[END]], 27000);
// CL-NEXT:       const float8 [[SPLAT:v[0-9]+]] = (float8)((-INFINITY));
// CL-NEXT:       float8 [[VACC:v[0-9]+]] = [[SPLAT]];
// CL-NEXT:       for (int [[R:v[0-9]+]] = [[START]]; [[R]] < [[STOP]]; [[R]] += 8) {
// CL-NEXT:         const int [[COL:v[0-9]+]] = (int)((uint)[[R]] % (uint)9000);
// CL-NEXT:         const int [[ROW:v[0-9]+]] = (int)((uint)[[R]] / (uint)9000);
// CL-NEXT:         const float8 [[X:v[0-9]+]] = vload8(0, in0 + [[ROW]] * 9000 + [[COL]]);
// CL-NEXT:         const float8 [[MAX:v[0-9]+]] = select(fmax([[VACC]], [[X]]), [[VACC]] + [[X]], isnan(fabs([[VACC]]) + fabs([[X]])) | (fabs([[VACC]]) + fabs([[X]]) == 0.0f));
// CL-NEXT:         [[VACC]] = [[MAX]];
// CL-NEXT:       }
// CL:            out[[[PART]]] = {{v[0-9]+}};
// CL-LABEL: __kernel void total_reduce_max_parts_1(
// CL:          for (int [[I:v[0-9]+]] = 0; [[I]] < 6; ++[[I]]) {
// CL-NEXT:       const float [[P:v[0-9]+]] = partials[[[I]]];

// GPU-LABEL: func.func @centered_sq(%x: memref<3x5x37xf32>, %b: memref<37xf32>) -> memref<3x5x1xf32> {
// GPU-NEXT:    %[[Y:.*]] = memref.alloc() : memref<3x5x1xf32>
// GPU-NEXT:    kernel.launch @centered_sq_reduce_mean_0(%x, %b, %[[Y]]) {global_size = array<i64: 16>, local_size = array<i64: 16>}
// GPU-NEXT:    func.return %[[Y]]
// GPU-LABEL: kernel.func @centered_sq_reduce_mean_0(%in0: memref<3x5x37xf32>, %in1: memref<37xf32>, %out: memref<3x5x1xf32>) {
// GPU:           %[[INIT:.*]] = arith.constant 0.000000e+00 : f32
// GPU-NEXT:      %[[LB:.*]] = arith.constant 0 : index
// GPU-NEXT:      %[[UB:.*]] = arith.constant 37 : index
// GPU-NEXT:      %[[STEP:.*]] = arith.constant 1 : index
// GPU-NEXT:      %[[SUM:.*]] = scf.for %[[R:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// GPU-NEXT:        %[[A:.*]] = memref.load %in0[%[[I0:.*]], %[[I1:.*]], %[[R]]] : memref<3x5x37xf32>
// GPU-NEXT:        %[[B:.*]] = memref.load %in1[%[[R]]] : memref<37xf32>
// GPU-NEXT:        %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// GPU-NEXT:        %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// GPU-NEXT:        %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// GPU-NEXT:        scf.yield %[[NEXT]] : f32
// GPU-NEXT:      }
// GPU-NEXT:      %[[SCALE:.*]] = arith.constant 0.0270270277 : f32
// GPU-NEXT:      %[[MEAN:.*]] = arith.mulf %[[SUM]], %[[SCALE]] : f32
// GPU-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// GPU-NEXT:      memref.store %[[MEAN]], %out[%[[I0]], %[[I1]], %[[ZERO]]] : memref<3x5x1xf32>

// GPU-CL:      __kernel void centered_sq_reduce_mean_0(
// GPU-CL:          float [[ACC:v[0-9]+]] = 0.0f;
// GPU-CL-NEXT:     for (int [[R:v[0-9]+]] = 0; [[R]] < 37; ++[[R]]) {
// GPU-CL-NEXT:       const float [[A:v[0-9]+]] = in0[[[I0:v[0-9]+]] * 185 + [[I1:v[0-9]+]] * 37 + [[R]]];
// GPU-CL-NEXT:       const float [[B:v[0-9]+]] = in1[[[R]]];
// GPU-CL-NEXT:       const float [[D:v[0-9]+]] = [[A]] - [[B]];
// GPU-CL-NEXT:       const float [[SQ:v[0-9]+]] = [[D]] * [[D]];
// GPU-CL-NEXT:       const float [[NEXT:v[0-9]+]] = [[ACC]] + [[SQ]];
// GPU-CL-NEXT:       [[ACC]] = [[NEXT]];
// GPU-CL-NEXT:     }
// GPU-CL-NEXT:     const float [[MEAN:v[0-9]+]] = [[ACC]] * 0.027027027681469917f;
// GPU-CL-NEXT:     out[[[I0]] * 5 + [[I1]]] = [[MEAN]];

// GPU-LABEL: func.func @total(%x: memref<3x9000xf32>) -> memref<f32> {
// GPU-NEXT:    %[[Y:.*]] = memref.alloc() : memref<f32>
// GPU-NEXT:    %[[PARTS:.*]] = kernel.alloc slot 0 : memref<26xf32>
// GPU-NEXT:    kernel.launch @total_reduce_max_0(%x, %[[PARTS]]) {global_size = array<i64: 1664>, local_size = array<i64: 64>}
// GPU-NEXT:    kernel.launch @total_reduce_max_parts_1(%[[PARTS]], %[[Y]]) {global_size = array<i64: 8>, local_size = array<i64: 8>}
// GPU-NEXT:    func.return %[[Y]] : memref<f32>

// GPU-CL-LABEL: __kernel void total_reduce_max_0(
// GPU-CL:          __local float [[SCRATCH:v[0-9]+]][64];
// GPU-CL-NEXT:     const int [[LID:v[0-9]+]] = (int)get_local_id(0);
// GPU-CL-NEXT:     const int [[GROUP:v[0-9]+]] = (int)get_group_id(0);
// GPU-CL-NEXT:     const int [[FIRST:v[0-9]+]] = [[GROUP]] * 1088;
// GPU-CL-NEXT:     const int [[START:v[0-9]+]] = [[FIRST]] + [[LID]];
// GPU-CL-NEXT:     const int [[END:v[0-9]+]] = [[FIRST]] + 1088;
// GPU-CL-NEXT:     const int [[STOP:v[0-9]+]] = min([[END]], 27000);
// GPU-CL-NEXT:     float [[ACC:v[0-9]+]] = (-INFINITY);
// GPU-CL-NEXT:     for (int [[R:v[0-9]+]] = [[START]]; [[R]] < [[STOP]]; [[R]] += 64) {
// GPU-CL:          [[SCRATCH]][[[LID]]] = [[ACC]];
// GPU-CL-NEXT:     barrier(CLK_LOCAL_MEM_FENCE);

func.func @centered_sq(%x: tensor<3x5x37xf32>, %b: tensor<37xf32>) -> tensor<3x5x1xf32> {
  %y = fused.reduce %x, %b {kind = "mean", axes = array<i64: -1>, keepdims = true} : (tensor<3x5x37xf32>, tensor<37xf32>) -> tensor<3x5x1xf32> {
  ^bb0(%a: f32, %c: f32):
    %d = arith.subf %a, %c : f32
    %sq = arith.mulf %d, %d : f32
    fused.yield %sq : f32
  }
  func.return %y : tensor<3x5x1xf32>
}

func.func @total(%x: tensor<3x9000xf32>) -> tensor<f32> {
  %y = nn.reduce_max %x {axes = array<i64: 0, 1>} : tensor<3x9000xf32> -> tensor<f32>
  func.return %y : tensor<f32>
}
