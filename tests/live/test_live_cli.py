"""The report, corrections and stale commands: what they write, and one-line errors on bad input."""

from __future__ import annotations

import json
import os

import pytest
from livetest import HUMAN, happened, record

from builders import make_issue, run_cli
from issuetriage.store.sqlite import Store


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "t.db"
    with Store(path) as db:
        for n in (1, 2):
            db.put_issue(make_issue(number=n, title=f"<b>issue {n}</b>"))
        record(db, 1, ("module: nn",))
        happened(db, 1, ("labeled", "module: nn", HUMAN))
        record(db, 2, ("module: cuda",))
        happened(db, 2, ("labeled", "module: nn", HUMAN))
    return path


def test_report_writes_html_and_json_with_the_per_label_table(capsys, store_path, tmp_path):
    code, out, _ = run_cli(capsys, "report", "--store", str(store_path), "--out", str(tmp_path / "rep"))
    assert code == 0 and "index.html" in out
    summary = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert summary["per_label"]["module: nn"]["tp"] == 1 and summary["per_label"]["module: cuda"]["fp"] == 1
    page = (tmp_path / "rep" / "index.html").read_text()
    assert 'id="per-label"' in page and "data:image/png;base64," in page


def test_report_folder_that_cannot_be_written_is_one_line(capsys, store_path, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, out, err = run_cli(capsys, "report", "--store", str(store_path), "--out", str(blocker / "rep"))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "cannot write the report" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_report_into_a_read_only_folder_leaves_nothing(capsys, store_path, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    code, _, err = run_cli(capsys, "report", "--store", str(store_path), "--out", str(folder))
    assert code == 2 and list(folder.iterdir()) == []


def test_report_on_another_profiles_store_is_one_line(capsys, tmp_path):
    path = tmp_path / "other.db"
    with Store(path) as db:
        db.put_issue(make_issue(repo="someone/else"))
    code, _, err = run_cli(capsys, "report", "--store", str(path), "--out", str(tmp_path / "rep"),
                           "--profile", "pytorch")
    assert code == 2 and "not of pytorch/pytorch" in err and not (tmp_path / "rep").exists()
    code, _, err = run_cli(capsys, "report", "--store", str(path), "--out", str(tmp_path / "rep"))
    assert code == 2 and "someone/else: no profile" in err and not (tmp_path / "rep").exists()


def test_report_on_an_event_stream_with_a_gap_is_one_line(capsys, store_path, tmp_path):
    with Store(store_path) as db:
        db.put_issue(db.get_issue("pytorch/pytorch", 2).model_copy(update={"labels": ("module: nn", "module: mps")}))
    code, _, err = run_cli(capsys, "report", "--store", str(store_path), "--out", str(tmp_path / "rep"))
    assert code == 2 and "gap in the event stream" in err and not (tmp_path / "rep").exists()


def test_corrections_export_a_training_corpus(capsys, store_path, tmp_path):
    out = tmp_path / "c.jsonl"
    code, _, _ = run_cli(capsys, "corrections", "--store", str(store_path), "--out", str(out))
    rows = {r["number"]: r["labels"] for r in map(json.loads, out.read_text().splitlines())}
    assert code == 0 and rows == {1: ["module: nn"], 2: ["module: nn"]}  # cuda, the bot's mistake, is absent


def test_serve_refuses_a_public_bind(capsys, store_path):
    code, _, err = run_cli(capsys, "serve", "--store", str(store_path), "--host", "0.0.0.0")
    assert code == 2 and "not a loopback address" in err


def test_stale_is_off_by_default(capsys, store_path):
    code, _, err = run_cli(capsys, "stale", "--store", str(store_path))
    assert code == 2 and "stale follow-up is off" in err
