import sys
from pathlib import Path

import pytest
from scrub_helpers import fake_library

from issuetriage.scrub.bisect import bisect, parse_interpreters, version_key
from issuetriage.scrub.model import Expected, Interpreter, Outcome
from issuetriage.scrub.outcome import classify
from issuetriage.scrub.sandbox import run_script

REPRO = "from fakelib import combine\nprint(combine([1, 2], [3]))\n"
EXPECTED = Expected("ValueError", "length mismatch between operands")


def _probe(code, log):
    def outcome(interp):
        log.append(interp.label)
        return classify(run_script(code, interp, isolation=None), EXPECTED)
    return outcome


def test_bisect_finds_first_fixed_version_over_fake_library_versions(tmp_path):
    versions = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "2.0", "2.1", "2.2", "2.3"]
    interps = [fake_library(tmp_path, v) for v in versions]
    log: list[str] = []
    result = bisect(interps, _probe(REPRO, log), parallel=3)
    assert result.first_changed == "fakelib-2.0" and result.last_same == "fakelib-1.6"
    assert dict(result.outcomes)["fakelib-2.0"] == "passes"
    assert len(log) < len(versions)


def test_bisect_finds_the_fix_after_an_older_release_that_errors_differently():
    # the repro needs an API from 1.2 (older releases fail differently), the bug is fixed in 1.6
    outcomes = [Outcome.DIFFERENT_ERROR] * 2 + [Outcome.SAME_ERROR] * 4 + [Outcome.PASSES] * 3
    interps = [Interpreter(f"lib-1.{k}", Path(sys.executable)) for k in range(len(outcomes))]
    result = bisect(interps, lambda i: outcomes[int(i.label.split(".")[1])], parallel=1)
    assert (result.last_same, result.first_changed) == ("lib-1.5", "lib-1.6")
    assert dict(result.outcomes)["lib-1.2"] == "same_error"  # the first change, found on the way


def test_bisect_reports_no_change_when_all_versions_agree(tmp_path):
    interps = [fake_library(tmp_path, v) for v in ["1.0", "1.1", "1.2"]]
    result = bisect(interps, _probe(REPRO, []))
    assert result.first_changed is None


PYENV = sorted(Path("/root/.pyenv/versions").glob("3.1[123]*/bin/python"))


@pytest.mark.skipif(len(PYENV) < 2, reason="needs two or more pyenv interpreters 3.11-3.13")
def test_bisect_over_real_interpreters():
    interps = parse_interpreters([str(p) for p in PYENV])
    assert [i.label for i in interps] == sorted((i.label for i in interps), key=version_key)
    code = "import itertools\nprint(list(itertools.batched('abcd', 2)))\n"
    expected = Expected("AttributeError", "has no attribute")
    outcome = lambda interp: classify(run_script(code, interp, isolation=None), expected)
    result = bisect(interps, outcome)
    if interps[0].label.startswith("python-3.11"):
        assert result.first_changed.startswith("python-3.12")
        assert dict(result.outcomes)[interps[0].label] == Outcome.SAME_ERROR


def test_conda_envs_named_like_pytorch_versions_are_found_in_version_order(tmp_path):
    for name in ("pytorch-2.10", "pytorch-2.8", "other-env", "pytorch-2.9"):
        (tmp_path / name / "bin").mkdir(parents=True)
        (tmp_path / name / "bin" / "python").symlink_to(sys.executable)
    from issuetriage.scrub.bisect import conda_interpreters

    assert [i.label for i in conda_interpreters([str(tmp_path)])] == ["pytorch-2.8", "pytorch-2.9", "pytorch-2.10"]


def test_label_equals_path_spec_keeps_the_label():
    (interp,) = parse_interpreters([f"mylib-3.1={sys.executable}"])
    assert interp.label == "mylib-3.1" and str(interp.python) == sys.executable
