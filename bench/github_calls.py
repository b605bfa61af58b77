"""Benchmark: GitHub API calls per triaged issue, on real issue text, against the loopback stand-in.

Each issue from ../shared/data is put into the stand-in unlabelled (as when it was opened) and
triaged live twice (a webhook delivered twice). Ours: the one flow, `issuetriage.act.act` (one
read, apply by difference, the done marker, the outcome check from the write answers). Baseline, same process: a naive applier that sends the whole
plan every time (labels, one comment per template, close, body, transfer) with no diff.

    python bench/github_calls.py [--issues 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "github"))

from standin import StandIn  # noqa: E402

from issuetriage.engine.pipeline import triage  # noqa: E402
from issuetriage.github import reads, writes  # noqa: E402
from issuetriage.github.client import GitHubClient  # noqa: E402
from issuetriage.github.retry import FakeClock  # noqa: E402
from issuetriage.act.flow import act, engine  # noqa: E402
from issuetriage.github.apply import GitHubApplier  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"
REPO = "pytorch/pytorch"


def naive(client: GitHubClient, number: int, policy) -> None:
    """Read, plan, and send every part of the plan regardless of the issue's state."""
    issue = reads.fetch_issue(client, REPO, number)
    plan = triage(issue, policy)
    for name in plan.templates:
        writes.comment(client, REPO, number, policy.render_template(name))
    if plan.body_edit is not None:
        writes.edit_issue(client, REPO, number, body=plan.body_edit)
    if plan.close:
        writes.edit_issue(client, REPO, number, state="closed", state_reason="not_planned")
    if plan.labels_added:
        writes.add_labels(client, REPO, number, plan.labels_added)
    if plan.transfer_repo:
        writes.transfer(client, REPO, number, plan.transfer_repo)


def measure(records: list[dict], ours: bool) -> dict[str, object]:
    policy = load_profile("pytorch")
    per_decision: dict[str, list[tuple[int, int]]] = defaultdict(list)
    runs = []
    with StandIn() as server:
        for r in records:
            server.state.add_issue(REPO, r["number"], r["title"], r.get("body") or "")
        client = GitHubClient.from_env(server.env(), clock=FakeClock())
        for attempt in (1, 2):
            server.reset_log()
            for r in records:
                before = len(server.log)
                if ours:
                    report = act(GitHubApplier(client), REPO, r["number"], policy, engine(), apply=True)
                    if attempt == 1 and report.plan is not None:
                        per_decision[report.plan.decision.value].append(
                            (len(report.writes), len(server.log) - before))
                else:
                    naive(client, r["number"], policy)
            runs.append((len(server.log), len(server.writes)))
    return {"per_decision": per_decision, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=200)
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} not found")
        return
    records = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()][: args.issues]
    ours, base = measure(records, True), measure(records, False)
    n = len(records)
    print(f"{n} issues from {DATA.name}, triaged twice each against the stand-in\n")
    print(f"{'decision':24} {'issues':>6} {'writes/issue':>18} {'max':>4} {'calls with verify':>19}")
    for decision, counts in sorted(ours["per_decision"].items()):
        apply_calls = [a for a, _ in counts]
        total = [t for _, t in counts]
        print(f"{decision:24} {len(counts):6d} {statistics.mean(apply_calls):18.2f} {max(apply_calls):4d} "
              f"{statistics.mean(total):19.2f}")
    (o1, ow1), (o2, ow2) = ours["runs"]
    (b1, bw1), (b2, bw2) = base["runs"]
    print(f"\n{'':24} {'ours':>10} {'baseline':>10} {'ratio':>8}")
    print(f"{'run 1 calls':24} {o1:10d} {b1:10d} {o1 / b1:8.2f}")
    print(f"{'run 1 writes':24} {ow1:10d} {bw1:10d} {ow1 / max(bw1, 1):8.2f}")
    print(f"{'run 2 calls':24} {o2:10d} {b2:10d} {o2 / b2:8.2f}")
    print(f"{'run 2 writes':24} {ow2:10d} {bw2:10d} {ow2 / max(bw2, 1):8.2f}")
    print("\nours includes the outcome check (from the write answers); the baseline checks nothing.")


if __name__ == "__main__":
    main()
