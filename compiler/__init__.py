"""The driver: text in, a checked module, a pass pipeline, or a runnable `Executable` out.

It holds the context (loaded dialects), located diagnostics, the pass registry and pipelines,
`-t` targets and `fusec.compile`; it calls every stage in order and is called by `fusec.tools`.
"""
