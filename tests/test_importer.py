"""`issuetriage profile import`: a complete, valid profile folder, or nothing at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from issuetriage.cli.app import main
from issuetriage.errors import UserError
from issuetriage.policy import FILES, load_profile, load_profile_dir
from issuetriage.policy.importer import write_atomically

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "pytorch-triage"
BASE = load_profile("pytorch")

LABELS = {
    "description": "a tiny catalog written for this test",
    "labels": [
        {"name": "module: widgets", "description": "Widget kernels and their gadgets."},
        {"name": "module: nn", "description": "Layers, in a few words of the test's own."},
        {"name": "module: sprockets", "description": ""},
    ],
}
TEMPLATES = {
    "templates": {
        "needs_reproduction": {"action": "comment", "use_when": "no script",
                               "comment": "Please share a script that builds its own inputs."},
        "redirect_to_forum": {"action": "close", "use_when": "a usage question",
                              "comment": "Questions are best asked on the forum."},
    },
}


def _run(*args: str) -> int:
    try:
        main(["profile", *args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_round_trip_writes_a_valid_profile(tmp_path: Path) -> None:
    labels = _write(tmp_path, "labels.json", LABELS)
    templates = _write(tmp_path, "templates.json", TEMPLATES)
    out = tmp_path / "imported"
    assert _run("import", "--labels", str(labels), "--templates", str(templates), "--out", str(out)) == 0
    policy = load_profile_dir(out)
    assert policy.labels["module: widgets"].description == "Widget kernels and their gadgets."
    assert policy.labels["module: sprockets"].description == ""
    # A label the base knows keeps its guidance and signals; the description is the import's.
    assert policy.labels["module: nn"].description == "Layers, in a few words of the test's own."
    assert policy.labels["module: nn"].keywords == BASE.labels["module: nn"].keywords
    # Labels the base's queues and rules need are kept; unreferenced base labels are not.
    assert {q.label for q in policy.queues.redirect} <= set(policy.labels)
    assert "module: fft" not in policy.labels
    # Their template name maps to ours; templates the import lacks come from the base.
    assert policy.templates["request_self_contained_reproduction"].comment.strip() == \
        "Please share a script that builds its own inputs."
    assert "needs_reproduction" not in policy.templates
    assert policy.templates["numerical_accuracy"] == BASE.templates["numerical_accuracy"]
    for name in ("queues.toml", "rules.toml", "profile.toml", "redundancy.toml", "forbidden.toml"):
        assert (out / name).read_bytes() == (BASE.root / name).read_bytes()
    assert _run("check", str(out)) == 0


def test_without_templates_the_base_templates_are_copied(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    assert _run("import", "--labels", str(_write(tmp_path, "l.json", LABELS)), "--out", str(out)) == 0
    assert (out / "templates.toml").read_bytes() == (BASE.root / "templates.toml").read_bytes()


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference skill files not present")
def test_import_of_the_reference_skill_files(tmp_path: Path) -> None:
    label_files = sorted(REFERENCE.glob("*labels.json"))
    template_files = sorted(REFERENCE.glob("*templates.json"))
    args = [a for f in label_files for a in ("--labels", str(f))]
    args += [a for f in template_files for a in ("--templates", str(f))]
    out = tmp_path / "reference"
    assert _run("import", *args, "--out", str(out)) == 0
    policy = load_profile_dir(out)
    names = {label["name"] for f in label_files
             for label in json.loads(f.read_text(encoding="utf-8"))["labels"]}
    assert names <= set(policy.labels)
    assert "request_self_contained_reproduction" in policy.templates
    assert "not_distributed" in policy.templates


@pytest.mark.parametrize(("labels_text", "message"), [
    ("{not json", "not valid JSON"),
    (json.dumps({"description": "no labels key"}), "labels"),
    (json.dumps({"labels": [{"description": "a label without a name"}]}), "labels.0.name"),
    (json.dumps({"labels": "not a list"}), "labels"),
])
def test_bad_labels_file_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    labels_text: str, message: str) -> None:
    labels = _write(tmp_path, "labels.json", labels_text)
    out = tmp_path / "imported"
    assert _run("import", "--labels", str(labels), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.json"]


def test_bad_templates_file_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    labels = _write(tmp_path, "labels.json", LABELS)
    broken = {"templates": {"redirect_to_forum": {"action": "close", "use_when": "question"}}}
    templates = _write(tmp_path, "templates.json", broken)
    out = tmp_path / "imported"
    assert _run("import", "--labels", str(labels), "--templates", str(templates), "--out", str(out)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.json", "templates.json"]


def test_unreadable_input_and_existing_output_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "imported"
    assert _run("import", "--out", str(out)) == 2
    assert _run("import", "--labels", str(_write(tmp_path, "l.json", LABELS))) == 2
    (tmp_path / "l.json").unlink()
    assert _run("import", "--labels", str(tmp_path / "missing.json"), "--out", str(out)) == 2
    assert not out.exists()
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    labels = _write(tmp_path, "labels.json", LABELS)
    assert _run("import", "--labels", str(labels), "--out", str(out)) == 2
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_show_prints_groups_with_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("show", "pytorch") == 0
    text = capsys.readouterr().out
    counts = {g: sum(1 for s in BASE.catalog.label if BASE.group_of(s.name) == g)
              for g in ("area", "queue", "topic", "other")}
    for group, count in counts.items():
        assert f"{group} ({count})" in text
    assert "module: sdpa" in text


def test_check_reports_the_shipped_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("check", str(BASE.root)) == 0
    assert capsys.readouterr().out.startswith(f"ok: profile 'pytorch': {len(BASE.labels)} labels")


def test_a_folder_that_would_not_validate_is_never_renamed_into_place(tmp_path: Path) -> None:
    copies = {name: BASE.root / name for name in FILES if name != "labels.toml"}
    out = tmp_path / "imported"
    with pytest.raises(UserError, match="does not validate"):
        write_atomically({"labels.toml": "[[label]]\nname = 'module: nn'\ncolour = 'red'\n"}, copies, out)
    assert list(tmp_path.iterdir()) == []
