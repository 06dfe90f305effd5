"""The reference semantics: an `nn`/`fused` function and numpy arrays in, numpy results out.

Each op is computed in float64 and rounded once to its declared type (`ops`, with the scalar
bodies of fused regions in `scalar`; `executor` runs a function). It depends on the dialects
only; `fusec-run --check`, the differential tests and the benchmarks compare against it.
"""
