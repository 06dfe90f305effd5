"""The PyTorch front door's tests share `torch_helpers`; pytest's importlib mode does not put
this folder on ``sys.path``, so this does."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
