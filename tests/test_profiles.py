"""Any project, from data alone: `profile init` from a made-up repository's label list, then
triage with it, and nothing of PyTorch's (labels, template text, names) shows anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builders import run_cli
from issuetriage.policy import PROFILES_DIR, load_profile, load_profile_dir, profile_problems
from issuetriage.store.sqlite import Store

REPO = "acme/widgets"
# What `gh label list --json name,description` prints for the made-up repository.
GH_LABELS = [
    {"name": "area/parser", "description": "Parsing of YAML and TOML configuration files"},
    {"name": "area/cli", "description": "Command-line flags, subcommands and shell completion"},
    {"name": "area/network", "description": "HTTP client, proxies, TLS certificates and timeouts"},
    {"name": "area/docs", "description": "The user guide, tutorials and reference pages"},
    {"name": "kind/bug", "description": "Something is not working"},
    {"name": "kind/feature", "description": "New functionality or an enhancement"},
    {"name": "kind/question", "description": "A usage question"},
    {"name": "team/packaging", "description": "Installers, Docker images and wheels for every platform"},
    {"name": "priority/critical", "description": "Drop everything"},
    {"name": "good first issue", "description": "Good for newcomers"},
]
ISSUES = [
    ("YAML parser crashes on anchors", "Loading a config file with YAML anchors fails:\n\n"
     "```\nTraceback (most recent call last):\nValueError: bad anchor\n```"),
    ("How do I set a proxy?", "How can I make the client use my company proxy? I am new to this."),
    ("Add shell completion for zsh", "It would be great to have zsh completion for the subcommands. "
     "Please add support for it; motivation: faster typing on the command-line."),
    ("it broke", "nothing works"),
    ("Crash when reading my archive", "Reproducing needs my files: https://drive.google.com/file/d/abc/view "
     "and then the loader fails with an error on the configuration."),
    ("Docker images missing for arm64", "The Docker images and installers have no arm64 build, "
     "so wheels fail to install on that platform."),
    ("Wrong results after upgrading", "After upgrading, some values come out wrong, with no error at all, "
     "and I cannot tell which part of the program does it."),
]


def _write_labels(tmp_path: Path, labels: list[dict]) -> Path:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    return path


@pytest.fixture
def made_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The made-up repository's profile, built by the CLI from its label list alone."""
    out = tmp_path / "widgets-profile"
    code, text, err = run_cli(capsys, "profile", "init", str(out), "--repo", REPO,
                              "--labels", str(_write_labels(tmp_path, GH_LABELS)))
    assert code == 0, err
    assert "area families ['area/']" in text
    return out


def _pytorch_strings() -> tuple[set[str], list[str]]:
    """PyTorch's label names, and every sentence of its templates."""
    pytorch = load_profile("pytorch")
    names = set(pytorch.labels) | pytorch.bot_label_names | pytorch.redirect_labels
    sentences = [s.strip() for tpl in pytorch.templates.values()
                 for s in re.split(r"(?<=[.!?:])\s+", tpl.comment) if len(s.strip()) > 25]
    return names, sentences


def test_a_profile_from_labels_alone_triages_with_nothing_of_pytorch(made_up, tmp_path, capsys):
    data = tmp_path / "issues.jsonl"
    data.write_text("\n".join(json.dumps({"repo": REPO, "number": n, "title": t, "body": b})
                              for n, (t, b) in enumerate(ISSUES, 1)) + "\n")
    code, out, err = run_cli(capsys, "plan", "--issue", str(data), "--profile", str(made_up))
    assert code == 0, err
    plans = [json.loads(line) for line in out.splitlines()]
    store = tmp_path / "t.db"
    assert run_cli(capsys, "store", "import", str(data), "--store", str(store))[0] == 0
    code, ran, err = run_cli(capsys, "run", "--store", str(store), "--apply", "--profile", str(made_up),
                             "--format", "json")
    assert code == 0, err
    with Store(store) as db:
        comments = [c.body for issue in db.issues() for c in issue.comments]
        audit = json.dumps(db.audit())

    decisions = {p["number"]: p["decision"] for p in plans}
    assert decisions[1] == "label" and "area/parser" in plans[0]["labels_added"]
    assert decisions[2] == "close_question" and decisions[4] == "request_info"
    assert decisions[5] == "request_reproduction"
    assert "kind/feature" in plans[2]["labels_added"] and "area/cli" in plans[2]["labels_added"]
    assert plans[5]["labels_added"][0] == "team/packaging" and decisions[6] == "redirect_oncall"
    assert len(comments) >= 3 and all("widgets" in c for c in comments)

    names, sentences = _pytorch_strings()
    own = {label["name"] for label in GH_LABELS} | load_profile_dir(made_up).bot_label_names
    added = {label for p in plans for label in p["labels_added"]}
    assert added <= own and not added & names
    everything = "\n".join([out, ran, audit, *comments])
    assert not re.search(r"torch|pytorch", everything, re.I)
    assert not any(sentence in everything for sentence in sentences)


def test_a_label_description_is_enough_to_get_the_label(made_up, tmp_path, capsys):
    issue = tmp_path / "i.json"
    issue.write_text(json.dumps({"repo": REPO, "number": 9, "title": "YAML parser crash",
                                 "body": "It crashes on a document with a tab.\n\n```\nValueError\n```"}))
    code, out, _ = run_cli(capsys, "plan", "--issue", str(issue), "--profile", str(made_up))
    assert code == 0 and "area/parser" in json.loads(out)["labels_added"]


def test_the_rest_label_shape_gives_the_same_profile(tmp_path, capsys):
    rest = [{"id": i, "node_id": f"L{i}", "url": f"https://api.github.com/repos/{REPO}/labels/x",
             "name": label["name"], "color": "ededed", "default": False,
             "description": label["description"]} for i, label in enumerate(GH_LABELS)]
    for name, labels in (("gh", GH_LABELS), ("rest", rest)):
        assert run_cli(capsys, "profile", "init", str(tmp_path / name), "--repo", REPO,
                       "--labels", str(_write_labels(tmp_path, labels)))[0] == 0
    assert (tmp_path / "gh" / "labels.toml").read_text() == (tmp_path / "rest" / "labels.toml").read_text()


def test_families_come_from_the_profile_not_from_code(made_up):
    policy = load_profile_dir(made_up)
    assert policy.is_area("area/parser") and not policy.is_area("kind/bug")
    assert policy.is_oncall("team/packaging") and not policy.is_oncall("oncall: jit")
    assert policy.meta.type_labels == ("kind/feature",) and policy.meta.question_labels == ("kind/question",)
    assert policy.forbidden_reason("priority/critical") and policy.forbidden_reason("good first issue")
    assert not policy.bot.edge_cases and not policy.bot.high_priority


def test_a_catalog_without_any_pytorch_default_loads(tmp_path):
    """No hidden PyTorch label (edge cases, fuzzer, high priority) must exist in a catalog."""
    out = tmp_path / "p"
    from issuetriage.policy.init import init_profile
    policy = init_profile(out, REPO, _write_labels(tmp_path, GH_LABELS[:1]))
    text = "".join(p.read_text() for p in out.iterdir())
    assert "module:" not in text and "topic:" not in text and "high priority" not in text
    assert set(policy.labels) == {"area/parser"} | policy.bot_label_names


def test_init_refuses_bad_input_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "labels.json"
    bad.write_text('{"name": "x"}')
    code, _, err = run_cli(capsys, "profile", "init", str(tmp_path / "p"), "--repo", REPO, "--labels", str(bad))
    assert code == 2 and err.startswith("error: ") and "list" in err and not (tmp_path / "p").exists()
    code, _, err = run_cli(capsys, "profile", "init", str(tmp_path / "p"), "--repo", "nope")
    assert code == 2 and "OWNER/NAME" in err and not (tmp_path / "p").exists()


def test_profile_check_reports_every_problem_at_once(tmp_path, capsys):
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(PROFILES_DIR / "pytorch", broken)
    (broken / "profile.toml").write_text((broken / "profile.toml").read_text()
                                         .replace('name = "pytorch"', 'name = "pytorch"\ncolour = "red"')
                                         .replace("label = 0.5", "label = 7"))
    (broken / "redundancy.toml").write_text('[[pair]]\nspecific = "no such"\n')
    (broken / "rules.toml").unlink()
    code, out, _ = run_cli(capsys, "profile", "check", str(broken))
    problems = [line for line in out.splitlines() if line.startswith("error: ")]
    assert code == 2 and len(problems) == 4, out
    for expected in ("colour: unknown key", "thresholds.label", "pair.0.generic: missing",
                     "rules.toml: missing profile file"):
        assert any(expected in line for line in problems), expected
    assert profile_problems(PROFILES_DIR / "pytorch") == []


def _docs_example(tmp_path: Path) -> Path:
    """The from-scratch example profile of docs/profiles.md, written out file by file."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "profiles.md").read_text()
    blocks = re.findall(r"```toml\n# (\w+\.toml)\n(.*?)```", text, re.S)
    out = tmp_path / "example"
    out.mkdir()
    for name, body in blocks:
        (out / name).write_text(body)
    return out


def test_the_from_scratch_example_in_the_docs_loads_and_triages(tmp_path, capsys):
    example = _docs_example(tmp_path)
    assert sorted(p.name for p in example.iterdir()) == sorted(
        ["profile.toml", "labels.toml", "forbidden.toml", "redundancy.toml", "queues.toml",
         "templates.toml", "rules.toml"])
    policy = load_profile_dir(example)
    issue = tmp_path / "i.json"
    issue.write_text(json.dumps({"repo": policy.meta.repo, "number": 3, "title": "Parser crash on nested lists",
                                 "body": "The parser fails on nested lists.\n\n```\nTraceback\n```"}))
    code, out, err = run_cli(capsys, "plan", "--issue", str(issue), "--profile", str(example))
    assert code == 0, err
    assert any(label.startswith(policy.meta.families.area) for label in json.loads(out)["labels_added"])


def test_the_docs_name_every_key_of_every_profile_file():
    from pydantic import BaseModel

    from issuetriage.policy import FILES
    docs = (Path(__file__).resolve().parents[1] / "docs" / "profiles.md").read_text()

    def keys(model: type[BaseModel]) -> set[str]:
        found = set()
        for name, field in model.model_fields.items():
            found.add(name)
            for arg in (field.annotation, *getattr(field.annotation, "__args__", ())):
                for inner in (arg, *getattr(arg, "__args__", ())):
                    if isinstance(inner, type) and issubclass(inner, BaseModel):
                        found |= keys(inner)
        return found

    for file, model in FILES.items():
        assert f"`{file}`" in docs
        missing = sorted(k for k in keys(model)  # `key`, or a part of `a.key.b`
                         if not re.search(rf"`([\w.]*\.)?{k}(\.[\w.]*)?`", docs))
        assert not missing, f"{file}: undocumented keys {missing}"


def _history(seed: int, n: int) -> str:
    """A made-up labelled history of acme/widgets: each area and the packaging queue has words
    its label description never uses, so only learning from history can find them."""
    import random

    words = {"area/parser": ["anchor", "indentation", "scalar", "multiline", "quoting", "frontmatter"],
             "area/cli": ["flag", "subcommand", "argv", "verbose", "alias", "pager"],
             "area/network": ["socket", "handshake", "retries", "keepalive", "dns", "redirects"],
             "team/packaging": ["manylinux", "conda", "arm64", "homebrew", "msi", "notarization"]}
    rng = random.Random(seed)
    lines = []
    for i in range(1, n + 1):
        label = rng.choice(sorted(words))
        a, b, c = rng.sample(words[label], 3)
        lines.append(json.dumps({
            "repo": REPO, "number": seed * 1000 + i, "title": f"{a} {b} misbehaves",
            "body": f"When I use {a} together with {c}, the result is odd.\n\n```\nRuntimeError: {b}\n```",
            "labels": [{"name": label}, {"name": "kind/bug"}], "state": "CLOSED"}))  # gh's shape
    return "\n".join(lines) + "\n"


def test_train_and_eval_learn_labels_and_routing_for_a_new_profile(made_up, tmp_path, capsys):
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    train.write_text(_history(1, 120))
    test.write_text(_history(2, 60))
    code, _, err = run_cli(capsys, "train", "--corpus", str(train), "--profile", str(made_up),
                           "--out", str(tmp_path / "model"))
    assert code == 0, err
    scores = {}
    for judge in ("heuristic", "learned"):
        extra = ["--model", str(tmp_path / "model")] if judge == "learned" else []
        code, out, err = run_cli(capsys, "eval", "--corpus", str(test), "--profile", str(made_up),
                                 "--judge", judge, *extra, "--json")
        assert code == 0, err
        scores[judge] = json.loads(out)
    heuristic, learned = scores["heuristic"], scores["learned"]
    assert heuristic["labels"]["per_label"]["area/parser"]["recall"] == 0  # the descriptions can't tell
    for label in ("area/parser", "area/cli", "area/network"):
        assert learned["labels"]["per_label"][label]["f1"] >= 0.9, label
    assert learned["routing"]["per_queue"]["team/packaging"]["recall"] >= 0.9
    assert learned["routing"]["per_queue"]["team/packaging"]["precision"] >= 0.9


def test_the_hybrid_judge_takes_a_learned_model_of_its_own_profile(made_up, tmp_path, capsys, monkeypatch):
    """The hybrid judge's offline half is checked against the profile it serves, not PyTorch's:
    a model trained for acme/widgets loads, one trained for another profile is refused."""
    from issuetriage.errors import ModelError
    from issuetriage.judges.factory import get_judge

    train = tmp_path / "train.jsonl"
    train.write_text(_history(1, 120))
    code, _, err = run_cli(capsys, "train", "--corpus", str(train), "--profile", str(made_up),
                           "--out", str(tmp_path / "model"))
    assert code == 0, err
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    monkeypatch.setenv("ISSUETRIAGE_LLM_PROVIDER", "replay")
    monkeypatch.setenv("ISSUETRIAGE_LLM_ANSWERS", str(answers))
    judge = get_judge("hybrid", tmp_path / "model", profile=load_profile_dir(made_up), env={})
    assert judge.offline.model.profile == load_profile_dir(made_up).name  # type: ignore[attr-defined]
    with pytest.raises(ModelError):
        get_judge("hybrid", tmp_path / "model", profile=load_profile_dir(PROFILES_DIR / "pytorch"), env={})


def test_a_queue_declared_in_queues_toml_is_a_queue_without_a_family(tmp_path, capsys):
    """A hand-written profile with no `families.queue` still redirects to its declared queues,
    and an issue carrying one counts as routed."""
    example = _docs_example(tmp_path)
    meta = example / "profile.toml"
    meta.write_text(meta.read_text().replace('queue = ["team/"]\n', ""))
    policy = load_profile_dir(example)
    assert not policy.meta.families.queue and policy.is_oncall("team/release")
    issue = tmp_path / "i.json"
    for labels, decision in (([], "redirect_oncall"), (["team/release"], "skip_already_routed")):
        issue.write_text(json.dumps({"repo": policy.meta.repo, "number": 4, "labels": labels,
                                     "title": "The wheel installer breaks the release build",
                                     "body": "The release build wheel fails.\n\n```\nerror\n```"}))
        code, out, err = run_cli(capsys, "plan", "--issue", str(issue), "--profile", str(example))
        assert code == 0 and json.loads(out)["decision"] == decision, err or out


def test_profile_init_keywords_process_labels_and_parent_folders(tmp_path, capsys):
    """Keywords without contraction fragments, bare plurals or generic words; the repository's
    own `needs triage` takes the bot's triage-review role instead of being forbidden and
    duplicated; missing parent folders are made."""
    labels = [{"name": "area/network", "description": "HTTP clients, proxies and TLS certificates"},
              {"name": "api", "description": "The public API isn't stable: files and servers"},
              {"name": "needs triage", "description": "Nobody has looked yet"}]
    out = tmp_path / "not" / "yet" / "profile"
    code, _, err = run_cli(capsys, "profile", "init", str(out), "--repo", REPO,
                           "--labels", str(_write_labels(tmp_path, labels)))
    assert code == 0, err
    policy = load_profile_dir(out)
    words = {w for spec in policy.catalog.label for w in spec.keywords}
    assert {"proxy", "certificate", "public", "stable"} <= words
    assert not words & {"isn", "proxies", "certificates", "clients", "client", "files", "file", "servers"}
    assert policy.bot.triage_review == "needs triage" and policy.forbidden_reason("needs triage") is None
    assert "needs-human-triage" not in policy.labels
