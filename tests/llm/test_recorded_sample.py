"""The committed recordings (bench/recorded) still answer today's requests: a change to what the
model reads shows here, so the LLM figures are re-recorded instead of silently falling back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import run_cli

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"


@pytest.mark.skipif(not DEV.is_file(), reason="the dev corpus (../shared/data) is not here")
@pytest.mark.parametrize("folder, prompt, neighbours", [("new", "catalog", "0"),
                                                       ("old", "shortlist", "0"),
                                                       ("stack", "catalog", "5")])
def test_every_recorded_answer_replays_for_its_request(capsys, folder, prompt, neighbours):
    code, out, err = run_cli(capsys, "eval", "--corpus", str(DEV), "--judge", "llm", "--sample", "60",
                             "--seed", "0", "--prompt", prompt, "--neighbours", neighbours, "--format", "json",
                             "--answers", str(ROOT / "bench" / "recorded" / folder / "answers.jsonl"))
    assert code == 0, err
    assert json.loads(out)["judged_by"] == {"llm:replay:claude-blind-helper": 60}, err[:500]
