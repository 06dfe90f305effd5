"""fusec: an MLIR-style fusion compiler for tensor programs, built on xDSL.

The repository folders are the subpackages: ``fusec.dialects`` (the ``nn`` and ``fused``
dialects), ``fusec.passes`` (fusion and un-fusion rewrites), ``fusec.compiler`` (context,
pipelines, OpenCL emission), ``fusec.runtime`` (PyOpenCL execution and the numpy reference
semantics) and ``fusec.tools`` (the command-line entry points).
"""

__version__ = "0.1.0"

__all__ = ["compile", "generate", "load"]


def __getattr__(name: str) -> object:
    """``fusec.compile``, ``fusec.generate`` and ``fusec.load`` are imported on first use, so
    that ``import fusec`` stays light (``load``, of a ``fusec-build`` artifact, imports only the
    runtime)."""
    if name == "compile":
        from fusec.compiler.driver import compile

        return compile
    if name == "generate":
        from fusec.runtime.generation import generate

        return generate
    if name == "load":
        from fusec.runtime.artifact import load

        return load
    raise AttributeError(f"module 'fusec' has no attribute {name!r}")
