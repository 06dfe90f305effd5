"""Stage 0, the IR: the `nn` dialect (the ops a model is written in), `fused` (what the fusion
passes make of groups of them) and `kernel` (buffers and launches, what lowering makes).

Every other stage imports these and nothing here imports another stage; `fusec.frontends` and
hand-written text produce `nn` IR, `fusec.passes` rewrites it next.
"""
