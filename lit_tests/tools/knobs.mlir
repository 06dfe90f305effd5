// Code-generation knobs (fusec.knobs) per compile: `--knob NAME=VALUE` of fusec-opt and
// fusec-run, and FUSEC_KNOB_<NAME> in the environment; the option wins over the environment.
// gram_split_on_gpu picks the GPU lowering of fused.centered_gram.

// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=SPLIT
// RUN: env FUSEC_KNOB_GRAM_SPLIT_ON_GPU=0 fusec-opt %s -p 'lower-to-kernels{device=gpu}' --knob gram_split_on_gpu=true | filecheck %s --check-prefix=SPLIT
// SPLIT: kernel.template "gram_slices"
// SPLIT-NEXT: kernel.template "gram_combine"

// RUN: fusec-opt %s -p 'lower-to-kernels{device=gpu}' --knob gram_split_on_gpu=false | filecheck %s --check-prefix=TILED
// RUN: env FUSEC_KNOB_GRAM_SPLIT_ON_GPU=off fusec-opt %s -p 'lower-to-kernels{device=gpu}' | filecheck %s --check-prefix=TILED
// TILED: kernel.template "column_mean"
// TILED-NEXT: kernel.template "centered_gram"

// Bad knobs are command-line errors, exit 2, one line.
// RUN: sh -c "fusec-opt %s --knob nope=1 2>&1; echo exit=\$?" | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: {{^}}fusec-opt: error: unknown knob 'nope' (known: attention_cpu_vectors, attention_mma, attention_mma_async_copy, attention_mma_ldmatrix, cuda_dependent_launch, cuda_graph_new_outputs, cuda_graph_own_blocks, ffma_b_k_major, ffma_fill_waves, gpu_half_vectors, gram_split_on_gpu, row_groups_fill_units, row_warp_shuffles, skinny_gemm, wgmma_192_blocks, wgmma_64_blocks, wgmma_b_as_held, wgmma_deep_stages, wgmma_layer_gemms, wgmma_narrow_blocks, wgmma_persistent, wgmma_prefetch_b, wgmma_resident_waves, wgmma_short_blocks, wgmma_split_k, wgmma_split_tf32, wgmma_split_tf32_b_rows, wgmma_sum_parts, wgmma_swiglu_epilogue) (see 'fusec-opt --help'){{$}}
// UNKNOWN-NEXT: exit=2
// RUN: sh -c "fusec-opt %s --knob gram_split_on_gpu=maybe 2>&1; echo exit=\$?" | filecheck %s --check-prefix=VALUE
// VALUE: {{^}}fusec-opt: error: knob 'gram_split_on_gpu' takes true or false (1/0, on/off), not 'maybe' (see 'fusec-opt --help'){{$}}
// VALUE-NEXT: exit=2
// RUN: sh -c "fusec-opt %s --knob gram_split_on_gpu 2>&1; echo exit=\$?" | filecheck %s --check-prefix=FORM
// FORM: {{^}}fusec-opt: error: --knob takes NAME=VALUE, not 'gram_split_on_gpu' (see 'fusec-opt --help'){{$}}
// FORM-NEXT: exit=2
// RUN: sh -c "env FUSEC_KNOB_ATTENTION_MMA=2 fusec-opt %s 2>&1; echo exit=\$?" | filecheck %s --check-prefix=ENV
// ENV: {{^}}fusec-opt: error: FUSEC_KNOB_ATTENTION_MMA: knob 'attention_mma' takes true or false (1/0, on/off), not '2' (see 'fusec-opt --help'){{$}}
// ENV-NEXT: exit=2
// RUN: sh -c "fusec-run %s --device cpu --knob nope=1 2>&1; echo exit=\$?" | filecheck %s --check-prefix=TOOL
// TOOL: {{^}}fusec-run: error: unknown knob 'nope' (known: {{.*}}) (see 'fusec-run --help'){{$}}
// TOOL-NEXT: exit=2

func.func @gram(%x: tensor<64x8xf32>) -> tensor<8x8xf32> {
  %g = fused.centered_gram %x : tensor<64x8xf32> -> tensor<8x8xf32>
  func.return %g : tensor<8x8xf32>
}
