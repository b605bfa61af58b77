"""`issuetriage scrub` exit codes a script can branch on, and the text a person reads."""

import json
import sys

import pytest
from scrub_helpers import block

TRACE = 'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nKeyError: \'widget\'\n'


def _issue(tmp_path, code, trace=TRACE, **extra):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"repo": "acme/widgets", "number": 3, "title": "t", "user": {"login": "op"},
                                "body": block(code) + (block(trace, "") if trace else ""), **extra}))
    return str(path)


@pytest.mark.parametrize(("code", "extra", "exit_code", "verdict"), [
    ("d = {}\nd['widget']\n", {}, 0, "reproduced"),
    ("d = {'widget': 1}\nprint(d['widget'])\n", {}, 1, "not reproduced"),
    ("raise ValueError('another problem')\n", {}, 3, "different error"),
    ("import no_such_module_at_all\nno_such_module_at_all.run()\n", {}, 4, "environment"),
    ("import pickle\npickle.loads(b'x')\n", {}, 5, "blocked"),
    ("d = {}\nd['widget']\n", {"state": "closed"}, 6, "not run"),
])
def test_each_verdict_has_its_exit_code(tmp_path, capsys, code, extra, exit_code, verdict):
    from builders import run_cli

    got, out, _ = run_cli(capsys, "scrub", "--issue", _issue(tmp_path, code, **extra), "--no-isolation",
                          "--python", f"py={sys.executable}", "--runs", "1", "--no-minimize", "--format", "json")
    data = json.loads(out)
    assert (got, data["verdict"], data["exit_code"]) == (exit_code, verdict, exit_code)


def test_bad_input_is_exit_2_with_one_line(tmp_path, capsys):
    from builders import run_cli

    got, out, err = run_cli(capsys, "scrub", "--issue", _issue(tmp_path, "print(1)\n"), "--no-isolation",
                            "--versions", "not a spec at all")
    assert got == 2 and out == "" and err.startswith("error: --versions") and len(err.splitlines()) == 1


def test_text_format_reads_as_sentences_not_a_dict_dump(tmp_path, capsys):
    from builders import run_cli

    got, out, _ = run_cli(capsys, "scrub", "--issue", _issue(tmp_path, "d = {}\nx = 1\nd['widget']\n"),
                          "--no-isolation", "--python", f"py={sys.executable}", "--runs", "1")
    lines = out.splitlines()
    assert got == 0 and lines[0] == "acme/widgets#3: reproduced (exit 0)"
    assert "Still reproduces on `py`" in lines[1] and "{" not in lines[1]
    assert any(line.startswith("  minimize: stopped: ") for line in lines)
    assert any(line.startswith("  expected: KeyError") for line in lines)
