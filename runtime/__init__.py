"""Stage 5, the OpenCL runtime: a `ProgramPlan` in, results on a device out.

Device selection and probing (`device`), program build and cache (`program_cache`), and the
callable `executable.Executable` with its buffers and launches. It knows no IR; what calls it is
`fusec.compiler.driver` (and `fusec.placement` for work split between devices).
"""
