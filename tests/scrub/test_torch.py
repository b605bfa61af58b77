"""A real torch repro end to end (CPU): sandboxed run, strict oracle, minimization."""

import importlib.util

import pytest
from scrub_helpers import block, make_issue

from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.model import Outcome
from issuetriage.scrub.report import to_json
from issuetriage.scrub.sandbox import isolation_mode

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")]

REPRO = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.proj(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(16)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.block(x))


def main():
    model = Model().to(device)
    x = torch.randn(8, 16, device=device)
    with torch.no_grad():
        out = model(x)
    print(out.shape)


main()
'''
LOG = '''Traceback (most recent call last):
  File "/home/u/r.py", line 35, in <module>
  File "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", line 125, in forward
RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x16 and 32x4)
'''


def test_torch_repro_end_to_end():
    issue = make_issue(block(REPRO) + block(LOG, ""), title="Linear head fails")
    options = Options(isolation="auto" if isolation_mode() else None, runs=1, workers=2)
    report = scrub(issue, options)
    data = to_json(report)
    assert report.outcome is Outcome.SAME_ERROR, data["runs"][0]["stderr_tail"]
    assert data["minimized_lines"] is not None and data["minimized_lines"] < data["original_lines"]
    assert "nn.Linear" in data["minimized"]
    assert data["minimize_runs"].startswith("warm (fork server, torch pre-imported; 0 fell back cold)")
