"""Writes a small ExportedProgram for fusec-import-pt2.mlir and fusec-build-pt2.mlir:
``export_pt2.py OUT.pt2 KIND`` (KIND: ``linear``, a Linear and a GELU; ``cumsum``, an op fusec
has no converter for; ``dynamic``, the Linear exported with a dynamic batch dimension)."""

import sys

import torch


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


class Cumsum(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


torch.manual_seed(0)
kind = sys.argv[2]
model = {"linear": Linear, "cumsum": Cumsum, "dynamic": Linear}[kind]().eval()
dynamic = {"x": {0: torch.export.Dim("batch", min=2, max=64)}} if kind == "dynamic" else None
torch.export.save(torch.export.export(model, (torch.randn(2, 4),), dynamic_shapes=dynamic),
                  sys.argv[1])
