"""Stage 5b, placement: a lowered program and the devices at hand in, a device per kernel out.

This is where CPU/GPU auto-offload lives: the cost model, its calibration and the per-device
cache of what was measured. It reads `fusec.codegen` plans and `fusec.runtime` devices, and
`fusec.compiler.driver` calls it.
"""
