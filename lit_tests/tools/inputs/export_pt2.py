"""Writes a small ExportedProgram for fusec-import-pt2.mlir and fusec-build-pt2.mlir:
``export_pt2.py OUT.pt2 KIND`` (KIND: ``linear``, a Linear and a GELU; ``cumsum``, an op fusec
has no converter for; ``dynamic``, the Linear exported with a dynamic batch dimension;
``attention``, a causal self-attention written out as Hugging Face's ``eager`` one is)."""

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


class EagerAttention(torch.nn.Module):
    """softmax(q @ k^T * scale + causal mask) @ v over 2 heads of 4, the mask of 0 and
    finfo.min built from arange (a constant)."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (t.view(b, s, 2, 4).transpose(1, 2) for t in self.qkv(x).split(8, dim=-1))
        position = torch.arange(s)
        hidden = position[None, :] > position[:, None]
        mask = torch.zeros(s, s).masked_fill(hidden, torch.finfo(torch.float32).min)
        scores = torch.matmul(q, k.transpose(2, 3)) * 0.5 + mask
        weights = torch.nn.functional.softmax(scores, dim=-1, dtype=torch.float32)
        return torch.matmul(weights, v).transpose(1, 2).reshape(b, s, 8)


torch.manual_seed(0)
kind = sys.argv[2]
model = {"linear": Linear, "cumsum": Cumsum, "dynamic": Linear,
         "attention": EagerAttention}[kind]().eval()
dynamic = {"x": {0: torch.export.Dim("batch", min=2, max=64)}} if kind == "dynamic" else None
example = torch.randn(2, 6, 8) if kind == "attention" else torch.randn(2, 4)
torch.export.save(torch.export.export(model, (example,), dynamic_shapes=dynamic), sys.argv[1])
