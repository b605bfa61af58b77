"""Every command that takes `--store` works the same on each engine: import, run (applied and
shadow), audit, the review app, the report and the corrections export."""

import json
import re

from ghtest import REPO, number_for, seed
from starlette.testclient import TestClient

from builders import run_cli
from issuetriage.cli.engine import SAMPLES
from issuetriage.store.sqlite import Store
from issuetriage.web.app import create_app

TOKEN = "csrf-token-for-tests"


def test_the_store_commands_on_each_engine(url, tmp_path, capsys, policy, monkeypatch):
    monkeypatch.setenv("ISSUETRIAGE_STORE", url)
    code, out, _ = run_cli(capsys, "store", "import", str(SAMPLES), "--json")
    assert code == 0 and json.loads(out)["imported"] == 21
    assert ":" not in json.loads(out)["store"].partition("://")[2].partition("@")[0]  # no password shown
    code, out, _ = run_cli(capsys, "run", "--shadow", "--json")
    assert code == 0
    with Store(url) as store:
        waiting = [row for row in store.audit() if row["extra"].get("shadow")]
        assert waiting and not any(row["applied"] for row in waiting)

    client = TestClient(create_app(url, policy, reviewer="tester", token=TOKEN), base_url="http://127.0.0.1")
    queue = client.get("/")
    ids = [int(i) for i in re.findall(r'id="plan-(\d+)"', queue.text)]
    assert queue.status_code == 200 and ids
    approved = client.post(f"/plan/{ids[0]}/approve", data={"csrf": TOKEN})
    assert approved.status_code == 200 and "applied" in approved.text
    rejected = client.post(f"/plan/{ids[1]}/reject", data={"csrf": TOKEN, "note": "wrong module"})
    assert rejected.status_code == 200
    with Store(url) as store:
        verdicts = sorted(tuple(r) for r in store.db.execute("SELECT audit_id, verdict FROM reviews"))
        assert verdicts == [(ids[0], "approved"), (ids[1], "rejected")]
        number = next(row["number"] for row in store.audit() if row["id"] == ids[0])
        assert policy.bot.bot_triaged in store.get_issue("pytorch/pytorch", number).labels

    code, out, _ = run_cli(capsys, "run", "--apply", "--json")
    assert code == 0
    code, out, _ = run_cli(capsys, "audit", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == len({r["id"] for r in rows}) > 21
    code, out, _ = run_cli(capsys, "report", "--out", str(tmp_path / "report"), "--update-demotions", "--json")
    assert code == 0 and (tmp_path / "report" / "index.html").is_file()
    code, out, _ = run_cli(capsys, "corrections", "--out", str(tmp_path / "c.jsonl"), "--json")
    assert code == 0 and json.loads(out)["issues"] == 1  # the rejected plan


def test_sync_and_a_live_triage_record_in_each_engine(url, standin, monkeypatch, capsys):
    """The GitHub side: `sync` mirrors into the store (cursors, labels, events) and a live
    `triage --apply` audits there, through the GitHub stand-in."""
    for key, value in standin.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_APP_ID", raising=False)
    numbers = [number_for("label"), number_for("request_info")]
    for n in numbers:
        seed(standin, n)
    for _ in range(2):  # the second sync starts from the stored cursor
        code, out, err = run_cli(capsys, "sync", REPO, "--store", url)
        assert code == 0, err
    code, out, err = run_cli(capsys, "triage", f"{REPO}#{numbers[0]}", "--apply", "--store", url, "--json")
    assert code == 0, err
    with Store(url) as store:
        assert sorted(i.number for i in store.issues(REPO)) == sorted(numbers)
        [row] = store.audit(REPO, numbers[0])
        assert row["applied"] == 1 and row["extra"]["where"] == "github"
        assert set(store.get_issue(REPO, numbers[0]).labels) == set(row["plan"]["labels_added"])
