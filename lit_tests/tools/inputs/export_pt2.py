"""Writes a small ExportedProgram for fusec-import-pt2.mlir: ``export_pt2.py OUT.pt2 KIND``
(KIND: ``linear``, a Linear and a GELU; ``cumsum``, an op fusec has no converter for)."""

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
model = {"linear": Linear, "cumsum": Cumsum}[sys.argv[2]]().eval()
torch.export.save(torch.export.export(model, (torch.randn(2, 4),)), sys.argv[1])
