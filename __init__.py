"""fusec: an MLIR-style fusion compiler for tensor programs, built on xDSL.

The repository folders are the subpackages: ``fusec.dialects`` (the ``nn`` and ``fused``
dialects), ``fusec.passes`` (fusion and un-fusion rewrites), ``fusec.compiler`` (context,
pipelines, OpenCL emission), ``fusec.runtime`` (PyOpenCL execution and the numpy reference
semantics) and ``fusec.tools`` (the command-line entry points).
"""

__version__ = "0.1.0"
