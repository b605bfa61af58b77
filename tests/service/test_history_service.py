"""Service mode and the history (issue #24): workers load the built folder and reload it when
`history build --update` replaces it; a folder they cannot load never fails a job: the issue is
judged without history, the audit row says why, and `/metrics` shows it."""

from __future__ import annotations

import os

from ghtest import number_for, seed
from service_helpers import REPO, deliver, drain, payload, rows

from history_helpers import made_up_records, write_corpus
from issuetriage.policy import load_profile


def damaged_folder(tmp_path):
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "manifest.json").write_text("{not json")
    return folder


def test_a_damaged_history_is_judged_without_and_said_so(client, jobs, standin, tmp_path, monkeypatch):
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(damaged_folder(tmp_path)))
    n = number_for("label")
    seed(standin, n)
    deliver(client, "issues", payload("issues", "opened", n))
    assert drain(jobs) == 1
    [row] = jobs.store().audit(REPO, n)
    assert "damaged" in row["extra"]["history_unavailable"] and row["judge"] == "heuristic"
    assert rows(jobs, "dead_letters") == [] and {r["outcome"] for r in rows(jobs, "deliveries")} == {"done"}
    assert 'issuetriage_history_unavailable{repo="pytorch/pytorch"} 1' in client.get("/metrics").text


def test_workers_load_the_folder_and_reload_it_when_it_is_replaced(sqlite_jobs, tmp_path, monkeypatch):
    from issuetriage.cli.history import build_command

    folder = tmp_path / "history"
    build_command(write_corpus(tmp_path / "c.jsonl", made_up_records()), None, folder, "pytorch", None, update=False)
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(folder))
    policy = load_profile("pytorch")
    judge, problem = sqlite_jobs.judge_and_history(policy)
    assert judge.name == "heuristic+history" and problem == ""
    assert sqlite_jobs.judge_and_history(policy)[0] is judge  # loaded once per thread
    manifest = folder / "manifest.json"
    manifest.write_text("{not json")  # what a replaced (here: broken) folder looks like to the worker
    os.utime(manifest, ns=(manifest.stat().st_mtime_ns + 10**9,) * 2)
    judge, problem = sqlite_jobs.judge_and_history(policy)
    assert judge.name == "heuristic" and "damaged" in problem
    assert sqlite_jobs.store().db.execute("SELECT problem FROM history_status").fetchone()[0] == problem
