"""`issuetriage history build`: built once into a folder, loaded without refitting, the same
judgments as the history fitted at start; bad input is one line and exit 2, nothing half-written."""

from __future__ import annotations

import json

import pytest

from builders import run_cli
from history_helpers import issue_file, made_up_records, write_corpus
from issuetriage.judges import stacking


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A corpus of the made-up history and the folder built from it (once: building fits)."""
    from issuetriage.cli.history import build_command

    root = tmp_path_factory.mktemp("history")
    corpus = write_corpus(root / "corpus.jsonl", made_up_records())
    build_command(corpus, None, root / "folder", "pytorch", None, update=False)
    return corpus, root / "folder"


def plan(capsys, tmp_path, monkeypatch, history):
    monkeypatch.setenv("ISSUETRIAGE_HISTORY", str(history))
    return run_cli(capsys, "plan", "--issue", str(issue_file(tmp_path / "issue.json")), "--judge", "heuristic",
                   "--format", "json")


def copy_of(folder, tmp_path):
    import shutil

    return shutil.copytree(folder, tmp_path / "copy")


def test_the_folder_loads_without_refitting_and_plans_as_the_jsonl_fitted_at_start(built, capsys, tmp_path,
                                                                                  monkeypatch):
    corpus, folder = built
    code, fitted, err = plan(capsys, tmp_path, monkeypatch, corpus)
    assert code == 0 and err.count("\n") == 1 and "fitted at every start" in err  # the JSONL path warns once
    monkeypatch.setattr(stacking, "fit_stack", lambda *a, **k: pytest.fail("the built folder was refitted"))
    code, loaded, err = plan(capsys, tmp_path, monkeypatch, folder)
    assert code == 0 and not err
    assert json.loads(loaded)["judge"] == "heuristic+history"
    assert "module: nccl" in json.loads(loaded)["labels_added"]
    assert json.loads(loaded)["trace"] == json.loads(fitted)["trace"]


def test_the_manifest_names_profile_repository_source_and_counts(built, capsys):
    corpus, folder = built
    code, out, err = run_cli(capsys, "history", "show", str(folder), "--format", "json")
    manifest = json.loads(out)
    assert code == 0 and manifest["profile"] == "pytorch" and manifest["repo"] == "pytorch/pytorch"
    assert manifest["source"]["name"] == str(corpus) and len(manifest["source"]["sha256"]) == 64
    assert manifest["counts"]["labelled"] == 40 and manifest["schema_version"] == 2
    assert not [p for p in folder.iterdir() if p.suffix == ".pkl"]


def test_a_gh_issue_list_array_is_a_corpus(tmp_path, capsys):
    records = [{"number": r["number"], "title": r["title"], "body": r["body"], "state": "CLOSED",
                "labels": [{"id": "L", "name": n, "color": "ffffff"} for n in r["labels"]]}
               for r in made_up_records(n_each=4)]  # `gh issue list --json number,title,body,labels,state`
    corpus = tmp_path / "issues.json"
    corpus.write_text(json.dumps(records, indent=2))
    code, _, err = run_cli(capsys, "history", "build", "--corpus", str(corpus), "--out", str(tmp_path / "h"))
    assert code == 2 and err.startswith("error: no profile") and not (tmp_path / "h").exists()  # names no repository
    code, out, err = run_cli(capsys, "history", "build", "--corpus", str(corpus), "--out", str(tmp_path / "h"),
                             "--format", "json", "--profile", "pytorch")
    assert code == 0, err
    assert json.loads(out)["labelled"] == 8


def test_update_indexes_only_what_changed_and_refreshes_the_manifest(built, capsys, tmp_path):
    corpus, folder = built
    folder = copy_of(folder, tmp_path)
    records = made_up_records() + [{"repo": "pytorch/pytorch", "number": 90, "labels": ["module: nccl"],
                                    "title": "thunderclap gasket leaks", "body": "the thunderclap gasket"}]
    code, out, err = run_cli(capsys, "history", "build", "--corpus", str(write_corpus(tmp_path / "c.jsonl", records)),
                             "--out", str(folder), "--update", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["labelled"] == 41
    from history_helpers import new_issue
    from issuetriage.judges.history_folder import load_folder
    from issuetriage.policy import load_profile

    found = load_folder(folder, load_profile("pytorch")).history.similar(new_issue(title="thunderclap gasket"), 5)
    assert (found[0].number, found[0].labels) == (90, ("module: nccl",))


def test_a_failed_build_leaves_nothing_behind(tmp_path, capsys, monkeypatch):
    corpus = write_corpus(tmp_path / "c.jsonl", made_up_records())

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("issuetriage.history.build.fit_stack", boom)
    with pytest.raises(OSError):
        run_cli(capsys, "history", "build", "--corpus", str(corpus), "--out", str(tmp_path / "out"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def _damage(folder, how):
    manifest = json.loads((folder / "manifest.json").read_text())
    if how in ("repo", "profile", "schema_version"):
        manifest[how] = {"repo": "acme/widgets", "profile": "other", "schema_version": 99}[how]
        (folder / "manifest.json").write_text(json.dumps(manifest))
    elif how == "manifest":
        (folder / "manifest.json").write_text("{not json")
    elif how == "truncated":
        data = (folder / "text_coef.npy").read_bytes()
        (folder / "text_coef.npy").write_bytes(data[: len(data) // 2])
    elif how == "missing":
        (folder / "stack.npz").unlink()
    elif how == "flipped":
        data = bytearray((folder / "stack.json").read_bytes())
        data[5] ^= 1
        (folder / "stack.json").write_bytes(bytes(data))
    elif how == "index":
        size = (folder / "index.sqlite3").stat().st_size
        (folder / "index.sqlite3").write_bytes(b"x" * size)


@pytest.mark.parametrize("how, says", [("repo", "built for repository 'acme/widgets'"),
                                       ("profile", "built for profile 'other'"),
                                       ("schema_version", "schema version 99"), ("manifest", "damaged"),
                                       ("truncated", "damaged"), ("missing", "missing"), ("flipped", "damaged"),
                                       ("index", "damaged index")])
def test_a_bad_folder_is_one_line_and_exit_2(built, capsys, tmp_path, monkeypatch, how, says):
    folder = copy_of(built[1], tmp_path)
    _damage(folder, how)
    code, out, err = plan(capsys, tmp_path, monkeypatch, folder)
    assert code == 2 and not out
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err


def test_an_empty_corpus_is_one_line_and_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = run_cli(capsys, "history", "build", "--corpus", str(empty), "--out", str(tmp_path / "h"))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "h").exists()


def test_a_corpus_without_catalog_labels_is_one_line_and_exit_2(tmp_path, capsys):
    records = [{**r, "labels": ["not in the catalog"]} for r in made_up_records(n_each=3)]
    code, _, err = run_cli(capsys, "history", "build", "--corpus", str(write_corpus(tmp_path / "c.jsonl", records)),
                           "--out", str(tmp_path / "h"))
    assert code == 2 and "no issue carries a label" in err and err.count("\n") == 1
    assert not (tmp_path / "h").exists()


def test_out_must_be_a_history_folder_or_new(tmp_path, capsys):
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "keep.txt").write_text("x")
    code, _, err = run_cli(capsys, "history", "build", "--corpus", str(tmp_path / "none.jsonl"),
                           "--out", str(tmp_path / "h"), "--profile", "pytorch")
    assert code == 2 and "not a history folder" in err
    assert [p.name for p in (tmp_path / "h").iterdir()] == ["keep.txt"]
