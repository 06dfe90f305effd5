"""Fuzzing: random programs and mangled text in, failures out (minimized regression cases).

`generator` makes random well-typed `nn` programs, `inputs` the adversarial arrays they run
on (NaN, infinities, large magnitudes, subnormals, signed zeros, INT_MIN), `oracle` compiles a
program with the default pipeline and with none, runs both on an OpenCL device and compares
them with the numpy reference, `minimize` shrinks a failing program while it still fails,
`mutate` mangles program text for the parser and every pass (a one-line error, never a
traceback), and `campaign` runs seeds of both and writes each failure out. This folder may
import every stage; only `tools/` (``fusec-fuzz``) imports it.
"""
