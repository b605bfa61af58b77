"""Versions provisioned on demand with uv from a wheel folder built here (no network), cached,
bounded, and bisected to the release that changed the outcome."""

import json
import math
import sys
from pathlib import Path

import pytest
from scrub_helpers import block, make_issue
from wheels import tinylib_wheels

from issuetriage.errors import UserError
from issuetriage.scrub.flow import Options, scrub
from issuetriage.scrub.model import Interpreter, Outcome
from issuetriage.scrub.provision import READY, Provisioner, version_interpreters
from issuetriage.scrub.report import to_markdown

VERSIONS = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5"]
TRACE = ('Traceback (most recent call last):\n  File "bug.py", line 3, in <module>\n'
         '  File "tinylib.py", line 8, in combine\n'
         'ValueError: combine: length mismatch between operands (2 vs 1)\n')
REPRO = "import json\nfrom tinylib import combine\nleft = [1, 2]\nright = [3]\nprint(json.dumps({'a': 1}))\nprint(combine(left, right))\n"


@pytest.fixture(autouse=True)
def _uv_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("UV_OFFLINE", "1")


def _provisioner(tmp_path, broken=frozenset({"1.0", "1.1", "1.2"}), **kw):
    wheels = tinylib_wheels(tmp_path / "wheels", VERSIONS + ["2.0rc1"], set(broken))
    return Provisioner(base_python=Path(sys.executable), cache=tmp_path / "envs", find_links=(str(wheels),),
                       no_index=True, **kw)


def _issue():
    return make_issue(block(REPRO) + "\nIt fails:\n" + block(TRACE, ""))


def test_a_range_is_resolved_from_the_wheel_folder_released_and_in_order(tmp_path):
    provisioner = _provisioner(tmp_path)
    assert provisioner.versions("tinylib", ">=1.1,<1.5") == ["1.1", "1.2", "1.3", "1.4"]
    assert provisioner.versions("TinyLib") == VERSIONS  # names compare canonicalized; no 2.0rc1
    listed = version_interpreters("tinylib=1.3,1.0", (), provisioner)
    assert [i.label for i in listed] == ["tinylib-1.0", "tinylib-1.3"]
    assert listed[0].requirements == ("tinylib==1.0",)


def test_an_environment_is_made_once_and_reused_across_runs(tmp_path, monkeypatch):
    provisioner = _provisioner(tmp_path)
    calls = []
    real = Provisioner._uv
    monkeypatch.setattr(Provisioner, "_uv", lambda self, args, interp: calls.append(args[0]) or real(self, args, interp))
    wanted = Interpreter("tinylib-1.2", Path(sys.executable), requirements=("tinylib==1.2",))
    made = provisioner.ensure(wanted)
    assert calls == ["venv", "pip"] and made.requirements == () and made.python.exists()
    again = _provisioner(tmp_path).ensure(wanted)  # a new run: same cache folder
    assert again.python == made.python and calls == ["venv", "pip"]


def test_the_cache_keeps_at_most_max_envs_least_recently_used_first(tmp_path):
    provisioner = _provisioner(tmp_path, max_envs=2)
    for version in ("1.0", "1.1", "1.2"):
        provisioner.ensure(Interpreter(f"tinylib-{version}", Path(sys.executable), requirements=(f"tinylib=={version}",)))
    kept = sorted(p.parent.name.split("-")[1] for p in (tmp_path / "envs").glob(f"*/{READY}"))
    assert kept == ["1.1", "1.2"]


@pytest.mark.parametrize(("broken", "first", "last", "sentence"), [
    ({"1.0", "1.1", "1.2"}, "tinylib-1.3", "tinylib-1.2", "Fixed in `tinylib-1.3` (last affected: `tinylib-1.2`)"),
    ({"1.4", "1.5"}, "tinylib-1.4", "tinylib-1.3", "Introduced in `tinylib-1.4` (last good: `tinylib-1.3`)"),
])
def test_bisection_over_released_versions_finds_the_boundary_in_log_n_environments(tmp_path, broken, first, last, sentence):
    provisioner = _provisioner(tmp_path, broken=broken)
    interps = tuple(version_interpreters("tinylib>=1.0", (), provisioner))
    seen = []
    report = scrub(_issue(), Options(interpreters=interps, isolation=None, runs=1, provisioner=provisioner,
                                     minimize=False, progress=seen.append))
    assert (report.bisect.first_changed, report.bisect.last_same) == (first, last)
    assert len(report.bisect.outcomes) <= 2 + math.ceil(math.log2(len(VERSIONS)))
    assert len(list((tmp_path / "envs").glob(f"*/{READY}"))) == len(report.bisect.outcomes)
    assert sentence in to_markdown(report)
    assert any(line.startswith("bisect: ") for line in seen)


def test_a_fixed_bug_is_minimized_on_the_last_affected_release(tmp_path):
    provisioner = _provisioner(tmp_path)
    interps = tuple(version_interpreters("tinylib=1.1,1.2,1.3", (), provisioner))
    report = scrub(_issue(), Options(interpreters=interps, isolation=None, runs=1, provisioner=provisioner, workers=2))
    assert report.outcome is Outcome.PASSES and report.minimized_on == "tinylib-1.2"
    assert report.minimize_note.endswith("failed as reported and passed on tinylib-1.3")
    assert report.minimized.lines < report.original_lines
    assert (report.verified.how, report.verified.affected, report.verified.fixed) == \
        ("differential", "tinylib-1.2", "tinylib-1.3")


def test_unknown_package_or_version_and_unreachable_index_are_one_line_errors(tmp_path):
    provisioner = _provisioner(tmp_path)
    with pytest.raises(UserError, match="no released version of nosuchpkg"):
        provisioner.versions("nosuchpkg", ">=1")
    with pytest.raises(UserError, match=r"^cannot install tinylib==9\.9: ") as bad:
        provisioner.ensure(Interpreter("tinylib-9.9", Path(sys.executable), requirements=("tinylib==9.9",)))
    assert "\n" not in str(bad.value)
    offline = Provisioner(cache=tmp_path / "envs", index_url="http://127.0.0.1:9/simple")
    with pytest.raises(UserError, match="cannot reach the index"):
        offline.versions("tinylib", ">=1")


def _cli_issue(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"repo": "acme/widgets", "number": 3, "title": "t",
                                "body": block(REPRO) + block(TRACE, ""), "user": {"login": "op"}}))
    return str(path)


def test_cli_versions_exits_1_when_fixed_and_2_with_one_line_for_a_bad_version(tmp_path, capsys):
    from builders import run_cli

    wheels = tinylib_wheels(tmp_path / "wheels", VERSIONS, {"1.0", "1.1", "1.2"})
    common = ["scrub", "--issue", _cli_issue(tmp_path), "--no-isolation", "--no-minimize", "--runs", "1",
              "--python", f"py={sys.executable}", "--find-links", str(wheels), "--no-index",
              "--env-cache", str(tmp_path / "envs"), "--format", "json"]
    code, out, err = run_cli(capsys, *common, "--versions", "tinylib>=1.1,<=1.4")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "not reproduced" and data["bisect"]["first_changed"] == "tinylib-1.3"
    assert "scrub: bisect: " in err
    code, out, err = run_cli(capsys, *common, "--with", "tinylib==7.7")
    errors = [line for line in err.splitlines() if not line.startswith("scrub: ")]  # progress lines
    assert code == 2 and out == "" and len(errors) == 1
    assert errors[0].startswith("error: cannot install tinylib==7.7: Because there is no version of tinylib==7.7")
