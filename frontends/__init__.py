"""Stage 1, frontends: a model file in another format in, `nn` IR (and its weights) out.

Each importer lives in its own module (the ONNX importer in `onnx`); what it writes is what
`fusec-opt` reads, and goes to `fusec.passes` next.
"""
