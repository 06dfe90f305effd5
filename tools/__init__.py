"""The command-line entry points (`fusec-opt`, `fusec-run`, `fusec-bench`).

Each parses its arguments, calls `fusec.compiler` (or `fusec.bench`), and turns errors into
one-line messages and exit codes; no compiler logic lives here.
"""
