"""Per-repository profiles in App mode: a repo-local one (fetched at the default branch through the
contents API, cached by blob id, vetted as hostile data) or a server-side mapping, per installation;
no usable profile → a one-line reason the receiver can answer with."""

from __future__ import annotations

from pathlib import Path

import pytest
from ghtest import REPO, app_env

from issuetriage.errors import ConfigError
from issuetriage.github.installations import GitHubApp
from issuetriage.github.repo_profile import MAX_FILE, PROFILE_DIR
from issuetriage.policy import PROFILES_DIR
from issuetriage.service.app_mode import AppResolver, load_profile_map

SHIPPED = PROFILES_DIR / "pytorch"
LOCAL = 4242  # installation whose repositories bring their own profile
MAPPED = 77


def put_profile(standin, repo: str = REPO, **changes: str) -> None:
    """The shipped profile as `repo`'s .github/issuetriage/ (with files replaced by `changes`)."""
    files = {p.name: p.read_text() for p in SHIPPED.glob("*.toml")}
    files["profile.toml"] = files["profile.toml"].replace('repo = "pytorch/pytorch"', f'repo = "{repo}"')
    files.update({name.replace("_", "."): text for name, text in changes.items()})
    standin.state.files[repo] = {f"{PROFILE_DIR}/{name}": text.encode() for name, text in files.items()}
    standin.state.files[repo]["README.md"] = b"not the profile"


@pytest.fixture
def resolver(standin, clock, tmp_path) -> AppResolver:
    standin.state.installations = {REPO: LOCAL, "pytorch/vision": MAPPED, "pytorch/audio": MAPPED}
    mapping = tmp_path / "profiles.toml"
    mapping.write_text(f'[repos]\n"pytorch/vision" = "pytorch"\n[installations]\n"{LOCAL}" = "repo"\n')
    app = GitHubApp.from_env(app_env(standin, clock), clock=clock)
    return AppResolver(app, load_profile_map(mapping))


def profile_for(resolver: AppResolver, repo: str, installation: int | None = None):
    return resolver.profile(repo, resolver.client(repo, installation))


def api_paths(standin) -> list[str]:
    return [r.path for r in standin.log if "/contents/" in r.path or "/git/blobs/" in r.path]


def test_repo_local_profile_is_fetched_once_and_cached_by_blob(resolver, standin):
    put_profile(standin)
    policy = profile_for(resolver, REPO, LOCAL)
    assert policy.name == "pytorch" and policy.meta.repo == REPO and len(policy.labels) > 100
    assert len(api_paths(standin)) == 1 + 7  # the folder listing, then each profile file's blob
    standin.reset_log()
    assert profile_for(resolver, REPO, LOCAL) is policy
    assert api_paths(standin) == [f"/repos/{REPO}/contents/{PROFILE_DIR}"]  # a listing, nothing more
    assert standin.log[-1].headers.get("if-none-match")  # conditional: unchanged is a free 304
    assert resolver.repo_profiles.loads == 1


def test_a_push_to_the_profile_is_picked_up(resolver, standin):
    put_profile(standin)
    before = profile_for(resolver, REPO, LOCAL)
    templates = (SHIPPED / "templates.toml").read_text() + '\n[templates.thanks]\naction = "comment"\n' \
        'use_when = "never"\ncomment = "Thanks!"\n'
    put_profile(standin, templates_toml=templates)
    standin.reset_log()
    after = profile_for(resolver, REPO, LOCAL)
    assert "thanks" in after.templates and "thanks" not in before.templates
    assert len(api_paths(standin)) == 1 + 7  # a new commit: the listing says which blobs changed
    assert resolver.repo_profiles.loads == 2


def test_server_side_mapping_reads_no_repository_files(resolver, standin):
    put_profile(standin, "pytorch/vision")  # present, but this installation uses the mapping
    policy = profile_for(resolver, "pytorch/vision", MAPPED)
    assert policy.name == "pytorch" and api_paths(standin) == []


@pytest.mark.parametrize("setup,reason", [
    (lambda s: None, "no profile: .github/issuetriage/ is not on the default branch"),
    (lambda s: put_profile(s, labels_toml="this is not toml ["), "labels.toml: not valid TOML"),
    (lambda s: put_profile(s, rules_toml='hub_patterns = ["(?!x)y"]\n'), "does not compile on RE2"),
    (lambda s: put_profile(s, rules_toml='hub_patterns = ["(x)\\\\1"]\n'), "does not compile on RE2"),
    (lambda s: put_profile(s, rules_toml='hub_patterns = ["(?s)x.{0,1000}.{0,1000}"]\n'), "too large for RE2"),
    (lambda s: put_profile(s, rules_toml="x = " + "[" * 5000 + "]" * 5000 + "\n"), "nested too deeply"),
    (lambda s: put_profile(s, labels_toml="#" * (MAX_FILE + 1)), "too large"),
    (lambda s: put_profile(s, profile_toml=(SHIPPED / "profile.toml").read_text().replace(
        'repo = "pytorch/pytorch"', 'repo = "pytorch/vision"')), "repo is 'pytorch/vision', not this repository"),
    (lambda s: put_profile(s, queues_toml=(SHIPPED / "queues.toml").read_text() +
                           '\n[[transfer]]\nrepo = "elsewhere/sink"\n'), "leaves pytorch"),
    (lambda s: s.state.files.__setitem__(REPO, {f"{PROFILE_DIR}/labels.toml": b"x"}), "missing profile file"),
])
def test_no_usable_repo_local_profile_is_a_one_line_reason(resolver, standin, setup, reason):
    setup(standin)
    repo = "pytorch/pytorch"
    assert resolver.accepts(repo, LOCAL) is None  # nothing known yet: the receiver accepts
    with pytest.raises(ConfigError, match=reason.replace("(", r"\(").replace("+", r"\+")) as info:
        profile_for(resolver, repo, LOCAL)
    message = str(info.value)
    assert "\n" not in message and "/tmp" not in message and message.startswith(repo)
    assert resolver.accepts(repo, LOCAL) == message  # remembered: the next delivery is refused at once


def test_a_refusal_is_forgotten_after_the_ttl_and_a_fix(resolver, standin, clock):
    with pytest.raises(ConfigError):
        profile_for(resolver, REPO, LOCAL)
    assert resolver.accepts(REPO, LOCAL)
    put_profile(standin)  # the maintainers push a profile
    clock.sleep(resolver.failure_ttl)
    assert resolver.accepts(REPO, LOCAL) is None
    assert profile_for(resolver, REPO, LOCAL).meta.repo == REPO
    assert resolver.accepts(REPO, LOCAL) is None


def test_mapping_refusals_come_from_memory(resolver, standin):
    assert resolver.accepts("pytorch/audio", MAPPED) == \
        f"pytorch/audio: no profile: not in the server's mapping ({resolver.profiles.where})"
    assert resolver.accepts("pytorch/vision", MAPPED) is None
    assert standin.log == []  # accepts() never calls GitHub
    with pytest.raises(ConfigError, match="not in the server's mapping"):
        profile_for(resolver, "pytorch/audio", MAPPED)


def test_not_installed_is_refused_once_known(resolver, standin):
    with pytest.raises(Exception, match="not installed on someone/else"):
        resolver.client("someone/else", None)
    assert resolver.accepts("someone/else", None) == "the App is not installed on someone/else"


@pytest.mark.parametrize("text,problem", [
    ('[installations]\n"abc" = "repo"\n', "an installation id is a number"),
    ('[installations]\n"12" = "elsewhere"\n', "installations.12"),
    ('unknown = 1\n', "unknown"),
    ('repos = [', "not valid TOML"),
])
def test_a_bad_mapping_file_names_the_problem(tmp_path, text, problem):
    path = tmp_path / "profiles.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        load_profile_map(path)


def test_mapping_folders_resolve_next_to_the_file(tmp_path):
    (tmp_path / "vision").mkdir()
    path = tmp_path / "profiles.toml"
    path.write_text('default = "pytorch"\n[repos]\n"pytorch/vision" = "vision"\n')
    found = load_profile_map(path)
    assert Path(found.profile_for("PyTorch/Vision") or "") == tmp_path / "vision"
    assert found.profile_for("pytorch/other") == "pytorch"  # the file's own default is a catch-all


def test_the_command_line_profile_serves_only_its_own_repository(tmp_path):
    """`--profile` is not a catch-all: another project's issues never get its catalog."""
    bare = load_profile_map(None, "pytorch")
    assert bare.profile_for("pytorch/pytorch") == "pytorch"
    assert bare.profile_for("someone/else") is None
    path = tmp_path / "profiles.toml"
    path.write_text('[repos]\n"pytorch/vision" = "pytorch"\n')
    mapped = load_profile_map(path, "pytorch")
    assert mapped.profile_for("pytorch/pytorch") == "pytorch"
    assert mapped.profile_for("pytorch/vision") == "pytorch"
    assert mapped.profile_for("pytorch/audio") is None


def test_the_shipped_profile_passes_the_repo_local_vetting():
    from issuetriage.github.repo_profile import load_texts
    texts = {p.name: p.read_text() for p in SHIPPED.glob("*.toml")}
    assert load_texts("pytorch/pytorch", texts).meta.repo == "pytorch/pytorch"


def test_installation_events_teach_where_repositories_are(resolver, standin):
    repo = {"full_name": "pytorch/new"}
    resolver.installation_changed("installation_repositories", {
        "action": "added", "installation": {"id": MAPPED}, "repositories_added": [repo]})
    assert resolver.app.known_installation("pytorch/new") == MAPPED
    resolver.installation_changed("installation_repositories", {
        "action": "removed", "installation": {"id": MAPPED}, "repositories_removed": [repo]})
    assert resolver.accepts("pytorch/new", None) == "the App is not installed on pytorch/new"
    resolver.installation_changed("installation", {
        "action": "deleted", "installation": {"id": LOCAL}, "repositories": [{"full_name": REPO}]})
    assert resolver.app.is_known_absent(REPO)
    resolver.installation_changed("installation", {"action": "created", "installation": "bad"})  # ignored
    assert standin.log == []


def test_a_thread_reuses_its_client_per_installation(resolver, monkeypatch):
    import issuetriage.service.app_mode as app_mode
    monkeypatch.setattr(app_mode, "CLIENTS_PER_THREAD", 2)
    first = resolver.client(REPO, LOCAL)
    assert resolver.client(REPO, LOCAL) is first
    closed = []
    monkeypatch.setattr(type(first), "close", lambda self: closed.append(self))
    resolver.client("pytorch/vision", MAPPED)
    resolver.client("x/y", 5)  # a third installation: the least recently used is closed
    assert closed == [first] and resolver.client(REPO, LOCAL) is not first
