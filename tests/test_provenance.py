"""Who judged, said everywhere (plan JSON, text, audit row), and plans that are byte-stable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from builders import make_issue, run_cli
from issuetriage.cli.render import plan_text
from issuetriage.engine.pipeline import triage_with
from issuetriage.store.sqlite import Store

ROOT = Path(__file__).resolve().parents[1]
# Several keywords of one label in one issue: their order in the reason used to follow set order.
ISSUES = [
    {"repo": "pytorch/pytorch", "number": 241, "title": "torch.distributed all_reduce hangs",
     "body": "init_process_group then allreduce on the process group hangs; torch.distributed "
             "with nccl, DistributedDataParallel, torchrun, all_gather and broadcast too."},
    {"repo": "pytorch/pytorch", "number": 520, "title": "half precision autograd gives NaN",
     "body": "torch.autograd with half precision fp16 float16 gives NaN in backward; "
             "requires_grad and grad_fn look fine; torch.linalg.svd and torch.linalg.qr too."},
]


def test_plan_json_text_and_audit_row_name_the_judge(policy):
    outcome = triage_with(make_issue(title="torch.linalg.svd wrong U", body="torch.linalg.svd"), policy)
    assert outcome.plan.judge == outcome.judgment.judge == "heuristic"
    assert outcome.plan.to_json()["judge"] == "heuristic"
    assert "  judge:     heuristic" in plan_text(outcome.plan).splitlines()
    with Store(":memory:") as store:
        store.record(outcome.plan)
        assert store.audit()[0]["judge"] == "heuristic"
        assert store.audit()[0]["plan"]["judge"] == "heuristic"


def test_plan_text_output_names_the_judge(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text(json.dumps(ISSUES[0]))
    code, out, _ = run_cli(capsys, "plan", "--issue", str(path), "--format", "text")
    assert code == 0 and "judge:     heuristic" in out


def _plans(path: Path, hashseed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT / "src")}
    code = "import sys; from issuetriage.cli.app import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, "plan", "--issue", str(path)], env=env,
                          capture_output=True, check=True).stdout


def test_the_same_issue_gives_byte_identical_plans_under_any_hash_seed(tmp_path):
    path = tmp_path / "issues.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ISSUES))
    runs = {_plans(path, seed) for seed in ("1", "2", "3", "4")}
    assert len(runs) == 1 and runs.pop().count(b"\n") == len(ISSUES)
