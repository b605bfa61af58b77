"""The scrub flow end to end through the library API and the CLI runner."""

import json
import sys

import pytest
from scrub_helpers import block, fake_library, make_issue
from typer.testing import CliRunner

from issuetriage.cli.app import _register, app
from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.model import Outcome
from issuetriage.scrub.report import save, to_json, to_markdown

TRACE = ('Traceback (most recent call last):\n  File "bug.py", line 3, in <module>\n'
         '  File "fakelib.py", line 6, in combine\n'
         'ValueError: combine: length mismatch between operands (2 vs 1)\n')
REPRO = ("import json\nfrom fakelib import combine\nleft = [1, 2]\nright = [3]\n"
         "print(json.dumps({'a': 1}))\nprint(combine(left, right))\n")


def _issue(code=REPRO, **kw):
    return make_issue(block(code) + "\nIt fails:\n" + block(TRACE, ""), **kw)


def test_reproduces_bisects_and_minimizes(tmp_path):
    interps = tuple(fake_library(tmp_path, v) for v in ("1.0", "1.5", "2.0", "2.1"))
    report = scrub(_issue(), Options(interpreters=interps[:2], isolation=None, runs=3, workers=2))
    data = to_json(report)
    assert data["outcome"] == "same_error" and data["same_error_ratio"] == "3/3"
    assert data["expected"] | {"exception": "ValueError", "substring": "length mismatch between operands",
                               "crash": False, "source": "traceback"} == data["expected"]
    assert data["minimized_lines"] < data["original_lines"] and data["oracle_calls"] > 0
    assert "Still reproduces on `fakelib-1.5`" in data["comment"]
    fixed = scrub(_issue(), Options(interpreters=interps, isolation=None, minimize=False))
    assert fixed.outcome is Outcome.PASSES and fixed.bisect.first_changed == "fakelib-2.0"
    assert "No longer reproduces" in to_markdown(fixed) and "`fakelib-2.0`" in to_markdown(fixed)
    written = save(report, tmp_path / "out")
    assert [p.name for p in written] == ["original.py", "minimized.py", "report.json"]


def test_unsafe_script_is_not_run_unless_allowed(tmp_path):
    lib = fake_library(tmp_path, "1.0")
    code = "import os\nos.system('true')\n" + REPRO
    report = scrub(_issue(code), Options(interpreters=(lib,), isolation=None, minimize=False))
    assert not report.ran and report.blocked == ("subprocess",)
    assert report.safety[0].rule == "subprocess" and report.safety[0].line == 2
    allowed = scrub(_issue(code), Options(interpreters=(lib,), isolation=None, minimize=False,
                                          allow=frozenset({"subprocess"})))
    assert allowed.ran and allowed.safety and allowed.outcome is Outcome.SAME_ERROR


def test_flaky_outcome_reruns_to_five_and_reports_the_ratio(tmp_path):
    lib = fake_library(tmp_path, "1.0")
    flaky = "import os\nfrom fakelib import combine\nright = [3] if int(os.environ['PYTHONHASHSEED']) % 2 else [3, 4]\ncombine([1, 2], right)\n"
    report = scrub(_issue(flaky), Options(interpreters=(lib,), isolation=None, minimize=False,
                                          allow=frozenset({"environment"})))
    assert len(report.runs) == 5 and to_json(report)["same_error_ratio"] == "2/5"


def test_closed_issue_stops_before_running():
    report = scrub(_issue(state="closed"), Options(isolation=None))
    assert not report.ran and "closed" in report.stop.reason


def _cli(args):
    _register()
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize(("flags", "runs"), [([], "warm (fork server"), (["--cold"], "cold")])
def test_cli_json_report(tmp_path, flags, runs):
    path = tmp_path / "issue.json"
    code = "data = {'x': [1]}\nprint(data['x'][3])\n"
    body = block(code) + block('Traceback (most recent call last):\n  File "a.py", line 2\nIndexError: list index out of range', "")
    path.write_text(json.dumps({"repo": "acme/widgets", "number": 3, "title": "t", "body": body,
                                "user": {"login": "op"}}))
    result = _cli(["scrub", "--issue", str(path), "--format", "json", "--no-isolation",
                   "--python", f"py={sys.executable}", "--out", str(tmp_path / "out"), *flags])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("repro_source", "expected", "safety", "ran", "isolation", "outcome", "runs", "bisect",
                "original_lines", "minimized", "minimized_lines", "oracle_calls", "comment"):
        assert key in data
    assert data["outcome"] == "same_error" and data["isolation"] == "none"
    assert data["minimize_runs"].startswith(runs)
    assert (tmp_path / "out" / "report.json").exists()


def test_cli_rejects_unknown_allow_rule(tmp_path):
    from issuetriage.errors import UserError

    bad = _cli(["scrub", "--issue", "x.json", "--allow", "nonsense"])
    assert isinstance(bad.exception, UserError) and "nonsense" in str(bad.exception)


def test_owner_repo_number_goes_through_the_github_adapter(monkeypatch):
    from issuetriage.errors import UserError
    from issuetriage.github import client, reads
    from issuetriage.scrub import source

    seen = []

    class FakeClient:
        def close(self):
            seen.append("closed")

    monkeypatch.setattr(client.GitHubClient, "from_env", classmethod(lambda cls, **kw: FakeClient()))
    monkeypatch.setattr(reads, "fetch_issue", lambda c, repo, n: seen.append((repo, n)) or make_issue(number=n))
    assert source.load_issue("pytorch/pytorch#5").number == 5 and seen == [("pytorch/pytorch", 5), "closed"]
    monkeypatch.setitem(sys.modules, "issuetriage.github.reads", None)
    try:
        source.load_issue("pytorch/pytorch#5")
        raise AssertionError("expected a UserError")
    except UserError as exc:
        assert "GitHub adapter" in str(exc)


def test_named_gpu_without_cuda_in_the_script_still_runs(tmp_path):
    lib = fake_library(tmp_path, "1.0")
    issue = make_issue("Seen on an A100 box.\n" + block(REPRO) + block(TRACE, ""))
    report = scrub(issue, Options(interpreters=(lib,), isolation=None, minimize=False, runs=1))
    assert report.ran and report.outcome is Outcome.SAME_ERROR
    cuda = make_issue("Seen on an A100 box.\n" + block("import torch\nx = torch.ones(2).cuda()\n"))
    stopped = scrub(cuda, Options(isolation=None))
    assert not stopped.ran and stopped.stop.label == "module: cuda"


def test_markdown_comment_for_a_blocked_script_names_the_rule(tmp_path):
    report = scrub(_issue("import pickle\nobj = pickle.loads(b'')\n"), Options(isolation=None))
    comment = to_markdown(report)
    assert "Did not run" in comment and "deserialization" in comment


def _issue_file(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"repo": "acme/widgets", "number": 3, "title": "t",
                                "body": block("print('ran')\n"), "user": {"login": "op"}}))
    return path


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "inf", "1e308"])
def test_cli_refuses_a_timeout_that_is_not_a_positive_number_of_seconds(tmp_path, capsys, timeout):
    from builders import run_cli

    code, out, err = run_cli(capsys, "scrub", "--issue", str(_issue_file(tmp_path)), "--no-isolation",
                             "--python", f"py={sys.executable}", "--timeout", timeout)
    assert code == 2 and out == "" and err.startswith("error: --timeout")
    assert len(err.strip().splitlines()) == 1


def test_cli_out_on_an_existing_file_is_refused_before_running(tmp_path, capsys):
    from builders import run_cli

    target = tmp_path / "report"
    target.write_text("keep me")
    code, out, err = run_cli(capsys, "scrub", "--issue", str(_issue_file(tmp_path)), "--no-isolation",
                             "--python", f"py={sys.executable}", "--out", str(target))
    assert code == 2 and out == "" and err.startswith("error: --out") and target.read_text() == "keep me"
