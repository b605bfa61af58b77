"""Benchmark: what GitHub App mode costs on top of the triage itself, in GitHub calls per job.

Issues from ../shared/data are spread over three repositories on two installations (one takes its
profile from the repository, `.github/issuetriage/`; the other from the server's mapping), and
each is triaged live as a worker job would be (AppResolver → client → profile → the one flow),
with simulated time passing (a fake clock: 8 hours over the run, so tokens expire and are renewed).
Ours: one GitHubApp and one AppResolver for the process (shared token cache, repo → installation
cache, profiles cached by blob id). Baseline, same process: a fresh App and resolver per job (a
token minted, the installation looked up, the repo-local profile read, each time).

    python bench/app_calls.py [--issues 600]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "github"))

from ghtest import app_env  # noqa: E402
from standin import StandIn  # noqa: E402

from issuetriage.act.flow import act, engine  # noqa: E402
from issuetriage.github.apply import GitHubApplier  # noqa: E402
from issuetriage.github.installations import GitHubApp  # noqa: E402
from issuetriage.github.repo_profile import PROFILE_DIR  # noqa: E402
from issuetriage.github.retry import FakeClock  # noqa: E402
from issuetriage.policy import PROFILES_DIR  # noqa: E402
from issuetriage.service.app_mode import AppResolver, ProfileMap  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"
REPOS = {"pytorch/pytorch": 4242, "pytorch/vision": 77, "pytorch/audio": 77}
HOURS = 8


def kind(path: str) -> str:
    if path.endswith("/access_tokens"):
        return "token"
    if path.endswith("/installation"):
        return "installation"
    if "/contents/" in path or "/git/blobs/" in path:
        return "profile"
    return "triage"


def run(records: list[dict], shared: bool) -> dict[str, object]:
    clock = FakeClock()
    mapping = ProfileMap(default="pytorch", installations={"4242": "repo"})
    with StandIn() as server:
        env = app_env(server, clock)
        server.state.installations = dict(REPOS)
        texts = {p.name: p.read_text() for p in (PROFILES_DIR / "pytorch").glob("*.toml")}
        server.state.files["pytorch/pytorch"] = {f"{PROFILE_DIR}/{n}": t.encode() for n, t in texts.items()}
        jobs = [(list(REPOS)[i % 3], r) for i, r in enumerate(records)]
        for repo, r in jobs:
            server.state.add_issue(repo, r["number"], r["title"], r.get("body") or "")
        resolver = AppResolver(GitHubApp.from_env(env, clock=clock), mapping)
        step = HOURS * 3600 / len(jobs)
        for repo, r in jobs:
            if not shared:
                resolver = AppResolver(GitHubApp.from_env(env, clock=clock), mapping)
            client = resolver.client(repo, REPOS[repo])
            act(GitHubApplier(client), repo, r["number"], resolver.profile(repo, client), engine(), apply=True)
            clock.sleep(step)
        counts = Counter(kind(req.path) for req in server.log)
    return {"jobs": len(jobs), "calls": dict(counts), "per_job": {k: round(v / len(jobs), 3) for k, v in counts.items()},
            "overhead_per_job": round((sum(counts.values()) - counts["triage"]) / len(jobs), 3)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=600)
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is not present")
        return
    records = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()][: args.issues]
    ours, baseline = run(records, shared=True), run(records, shared=False)
    print(json.dumps({"ours": ours, "baseline_fresh_per_job": baseline,
                      "overhead_ratio": round(ours["overhead_per_job"] / baseline["overhead_per_job"], 4)},  # type: ignore[operator]
                     indent=2))


if __name__ == "__main__":
    main()
