"""Stage 4, code generation: the kernel-level IR in, OpenCL C and a `ProgramPlan` out.

`emitter` prints generated `kernel.func`s as OpenCL C, `kernels/` holds the parameterised
templates (GEMM, norms, softmax, attention), `program` assembles one function's kernels,
buffers and launches into the plain-data `plan.ProgramPlan` that `fusec.runtime` runs next.
"""
