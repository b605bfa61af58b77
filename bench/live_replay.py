"""Benchmark: the dev corpus replayed as if live, and the live report checked against `eval`.

Each issue of ../shared/data is put into the loopback GitHub stand-in as filed (open, no
labels); `sync` mirrors it; a shadow `run` records the heuristic judge's plans without writing;
then "maintainers" apply each issue's final labels (and close the closed ones) an hour later,
which the stand-in records as label events; a second `sync` stores those events; the report's
outcomes are computed from them. The baseline, in the same process, is `eval` on the same file:
wherever both measure the same thing (per-label tp/fp/fn, micro precision/recall) they must agree.

    python bench/live_replay.py [--issues N] [--out DIR] [--store FILE] [--screens DIR]

With --screens, the replayed store is served by `issuetriage serve`'s app and the review queue,
one plan and the report are screenshot in headless Chromium (tests/live/browser.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "github"))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from rich.console import Console  # noqa: E402
from standin import StandIn  # noqa: E402

from issuetriage.cli.engine import run_store  # noqa: E402
from issuetriage.evaluate.run import evaluate  # noqa: E402
from issuetriage.github.client import GitHubClient  # noqa: E402
from issuetriage.github.retry import FakeClock  # noqa: E402
from issuetriage.github.sync import sync  # noqa: E402
from issuetriage.judges.learned.corpus import load_corpus  # noqa: E402
from issuetriage.policy import load_profile  # noqa: E402
from issuetriage.report import data, html  # noqa: E402
from issuetriage.store.sqlite import Store  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "pytorch-issues-dev.jsonl"
REPO = "pytorch/pytorch"
MAINTAINER = "a-maintainer"


def _z(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def replay_live(corpus_path: Path, store_path: Path, limit: int | None) -> tuple[data.Report, int]:
    """Seed, sync, shadow-run, let humans label, sync again; the report and the API calls spent."""
    policy = load_profile("pytorch")
    examples = load_corpus(corpus_path, policy).examples[:limit]
    with StandIn() as server, Store(store_path) as store:
        for ex in examples:
            issue = ex.issue
            server.state.add_issue(REPO, issue.number, issue.title, issue.body, author=issue.author or "reporter")
            if issue.created_at:
                server.state.issues[(REPO, issue.number)]["created_at"] = _z(issue.created_at)
        client = GitHubClient.from_env(server.env(), clock=FakeClock())
        sync(client, store, REPO)
        run_store(store, "pytorch", False, "heuristic", None, REPO, Console(stderr=True, quiet=True), shadow=True)
        later = _z(datetime.now(UTC) + timedelta(hours=1))
        for ex in examples:
            server.state.human_labels(REPO, ex.issue.number, ex.raw_labels, MAINTAINER, created_at=later)
            if ex.final_state == "closed":
                server.state.issues[(REPO, ex.issue.number)]["state"] = "closed"
                server.state.add_event(REPO, ex.issue.number, "closed", MAINTAINER, created_at=later)
        sync(client, store, REPO)
        return data.build(store, policy), len(client.calls)


def compare(live: data.Report, offline: dict) -> tuple[int, list[str]]:
    """Labels whose live tp/fp/fn equal eval's, and the ones that differ."""
    want = offline["labels"]["per_label"]
    have = {k: v.to_json() for k, v in live.quality.per_label.items()}
    differ = [name for name in sorted(set(want) | set(have))
              if {k: want.get(name, {}).get(k) for k in ("tp", "fp", "fn")}
              != {k: have.get(name, {}).get(k) for k in ("tp", "fp", "fn")}]
    return len(set(want) | set(have)) - len(differ), differ


def screenshots(store_path: Path, folder: Path) -> list[Path]:
    """The queue, the first plan and the report of the replayed store, from headless Chromium."""
    from browser import browser_page, serving

    from issuetriage.web.app import create_app

    folder.mkdir(parents=True, exist_ok=True)
    shots = [folder / name for name in ("live-review-queue.png", "live-plan.png", "live-report.png")]
    with serving(create_app(store_path, load_profile("pytorch"))) as url, browser_page() as page:
        page.goto(url + "/")
        page.screenshot(path=str(shots[0]))
        page.click("#queue tr[id^=plan-] a")
        page.screenshot(path=str(shots[1]), full_page=True)
        page.goto(url + "/report")
        page.screenshot(path=str(shots[2]), full_page=True)
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=None, help="only the first N issues")
    parser.add_argument("--out", type=Path, default=None, help="write the HTML report here")
    parser.add_argument("--store", type=Path, default=None, help="keep the replayed store here")
    parser.add_argument("--screens", type=Path, default=None, help="save browser screenshots here")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} not found")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        corpus = DATA
        if args.issues:
            corpus = Path(tmp) / "subset.jsonl"
            corpus.write_text("".join(DATA.read_text(encoding="utf-8").splitlines(True)[:args.issues]), encoding="utf-8")
        store_path = args.store or Path(tmp) / "live.db"
        if store_path.exists():
            store_path.unlink()
        live, calls = replay_live(corpus, store_path, None)
        offline = evaluate(corpus, "pytorch", "heuristic")
        if args.out:
            html.write(live, args.out)
        shots = screenshots(store_path, args.screens) if args.screens else []
    same, differ = compare(live, offline)
    q, m = live.quality, offline["labels"]["micro"]
    print(f"replayed {q.plans} shadow plans; {q.acted_on} acted on by humans; {q.scored_issues} scored "
          f"(eval: {offline['labelled_issues']} labelled issues); {calls} API calls")
    print(f"live micro  precision {q.micro.precision:.4f} recall {q.micro.recall:.4f} "
          f"(tp {q.micro.tp} fp {q.micro.fp} fn {q.micro.fn})")
    print(f"eval micro  precision {m['precision']:.4f} recall {m['recall']:.4f} "
          f"(tp {m['tp']} fp {m['fp']} fn {m['fn']})")
    print(f"per-label tp/fp/fn equal to eval's: {same} of {same + len(differ)} labels"
          + (f"; differ: {differ[:10]}" if differ else ""))
    if args.out:
        print(f"report: {args.out / 'index.html'}")
    for shot in shots:
        print(f"screenshot: {shot}")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
