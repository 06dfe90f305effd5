"""``fusec-bench``: fusec against the tools a user would otherwise reach for.

Where the pieces live: this package is ``fusec.bench`` (installed with fusec, so that
``fusec-bench`` and ``python3 -m fusec.tools.fusec_bench`` work from any checkout); the
peers' libraries are optional (``pip install 'fusec[bench]'``) and imported only when used.

- `program`: a writer of fusec IR text; `workloads`: the workloads as functions of their sizes;
- `graph`: a workload's IR parsed by fusec into plain nodes, which the peers translate through
  their op tables (`peer_numpy`, `peer_torch`, `peer_onnx`, on top of `interpret`);
- `peers` and `fusec_runner`: the runners; `harness`: check against the reference, then time;
  `report`: the table and the JSON; `special`: host overhead and compile time.

The command-line entry point is ``fusec.tools.fusec_bench``.
"""
