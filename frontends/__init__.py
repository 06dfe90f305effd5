"""Stage 1, frontends: a model file in another format in, `nn` IR (and its weights) out.

Each importer lives in its own modules (the ONNX importer: `onnx_import`, with its op table
`onnx_table` of the converters in `onnx_ops` and `onnx_attention`, import-time folding
`onnx_simplify` and the exporters' patterns `onnx_patterns`);
what it writes is what `fusec-opt` reads, and goes to `fusec.passes` next.
"""
