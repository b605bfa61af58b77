"""A report that bisection shows fixed in a release closes the issue on GitHub (the loopback
stand-in): a comment naming the release, then closed as completed. Anything else writes nothing."""

import sys

import pytest
from scrub_helpers import block, fake_library, make_issue

from issuetriage.scrub.close import close_as_fixed, fixed_in
from issuetriage.scrub.flow import Options, scrub

REPO = "acme/widgets"
TRACE = ('Traceback (most recent call last):\n  File "bug.py", line 3, in <module>\n'
         '  File "fakelib.py", line 6, in combine\n'
         'ValueError: combine: length mismatch between operands (2 vs 1)\n')
BODY = block("from fakelib import combine\nprint(combine([1, 2], [3]))\n") + block(TRACE, "")


def _scrubbed(tmp_path, versions):
    interps = tuple(fake_library(tmp_path, v) for v in versions)
    issue = make_issue(BODY, number=7)
    return issue, scrub(issue, Options(interpreters=interps, isolation=None, runs=1, minimize=False))


def test_fixed_in_a_release_comments_the_version_and_closes_as_completed(tmp_path, standin, client):
    issue, report = _scrubbed(tmp_path, ("1.0", "1.5", "2.0", "2.1"))
    assert fixed_in(report) == "fakelib-2.0"
    standin.state.add_issue(REPO, 7, issue.title, issue.body)
    sent = close_as_fixed(client, report, issue)
    assert [c.kind for c in sent] == ["comment", "close"]
    writes = standin.writes
    assert "Fixed in `fakelib-2.0`" in writes[0].body["body"]
    assert writes[1].body == {"state": "closed", "state_reason": "completed"}
    assert len(writes) == 2


@pytest.mark.parametrize("versions", [("1.0", "1.5"), ("2.0", "2.1")])
def test_still_failing_or_never_failing_writes_nothing(tmp_path, standin, client, versions):
    issue, report = _scrubbed(tmp_path, versions)
    standin.state.add_issue(REPO, 7, issue.title, issue.body)
    assert fixed_in(report) is None and close_as_fixed(client, report, issue) == ()
    assert standin.writes == []


def test_apply_refuses_a_file(tmp_path, capsys):
    from builders import run_cli

    path = tmp_path / "issue.json"
    path.write_text('{"repo": "acme/widgets", "number": 1, "title": "t", "body": "", "user": {"login": "op"}}')
    code, out, err = run_cli(capsys, "scrub", "--issue", str(path), "--apply", "--no-isolation",
                             "--python", f"py={sys.executable}")
    assert code == 2 and out == "" and err.startswith("error: --apply needs OWNER/REPO#N")
