"""`issuetriage profile init DIR --repo OWNER/NAME [--labels LABELS.json]`: a working profile for
any repository, from its label list alone.

The label list is what `gh label list --json name,description` prints, or GitHub's REST label
objects (`GET /repos/{owner}/{repo}/labels`). Label families come from name prefixes (`area/`,
`kind/`, `area: `...); each label's keywords come from its own name and the words of its
description no other label's description uses, so an issue about a label's subject gets it with
no hand-written keywords. Templates and rules are generic, in our own words, naming the project.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import tomli_w
from pydantic import ValidationError

from issuetriage.errors import UserError, first_problem
from issuetriage.policy import Policy
from issuetriage.policy.importer import LabelIn, read_json, write_atomically
from issuetriage.text import normalize_keyword, tokens_of

# Family prefixes by the word before the separator; the first family word seen wins its role.
AREA_WORDS = frozenset({"area", "module", "component", "comp", "scope", "pkg", "package",
                        "subsystem", "mod", "domain"})
QUEUE_WORDS = frozenset({"oncall", "team", "sig", "queue", "owner", "squad", "wg"})
TYPE_WORDS = frozenset({"kind", "type", "t"})
TOPIC_WORDS = frozenset({"topic", "feature-area", "tag"})
# Families only people set: the bot may never add these.
HUMAN_WORDS = frozenset({"priority", "p", "status", "lifecycle", "triage", "release", "milestone",
                         "size", "effort", "severity", "sev", "needs", "do-not-merge", "ci",
                         "resolution", "closed"})
HUMAN_EXACT = frozenset({"wontfix", "won't fix", "duplicate", "invalid", "help wanted",
                         "good first issue", "stale", "needs triage", "needs-triage"})
FEATURE_TAILS = frozenset({"feature", "enhancement", "feature-request", "feature request",
                           "request", "improvement"})
QUESTION_TAILS = frozenset({"question", "support", "usage", "help"})
# Label names and descriptions come from the repository: one-way patterns (issuetriage.text). A
# compound starts where a word does (without `\b`, a long word was retried from each of its letters).
_COMPOUND = re.compile(r"\b\w+(?:-\w+)+")
# A contraction (isn't, don't, user's) is one word to drop, never `isn` and `t`; one-way: `\w+`
# cannot take the apostrophe that ends its run.
_CONTRACTION = re.compile(r"\b\w+['\u2019]\w+")
_PREFIX = re.compile(r"^([A-Za-z][\w.-]*)(: ?|/)(?=\S)")
# Words too common in issue reports to tell one label from another.
_GENERIC = frozenset({"bug", "bugs", "issue", "issues", "error", "errors", "problem", "problems",
                      "support", "feature", "features", "request", "requests", "related", "code",
                      "use", "using", "used", "work", "works", "working", "new", "add", "adding",
                      "things", "stuff", "fix", "fixes", "change", "changes", "label", "labels",
                      "relating", "regarding", "concerning", "general", "misc", "various",
                      # in most reports of any software project, so they route nothing
                      "file", "api", "client", "server", "data", "value", "function", "method",
                      "option", "user", "version", "system", "library", "thing", "way", "time",
                      "result", "output", "input", "default", "case", "example", "behavior",
                      "behaviour", "make", "need", "set", "get", "run", "running", "like"})
# Names ending in s that are no plurals: kept whole.
_NOT_PLURAL = frozenset({"windows", "kubernetes", "pandas", "jenkins", "series", "news", "species",
                         "https", "express", "aws", "macos", "ios", "redis", "postgres", "mathematics",
                         "physics", "graphics", "statistics", "metrics", "analytics", "docs"})
# The repository's own process labels the bot's steps use (by name, after lower-casing and turning
# `-`, `_` and `:` into spaces), instead of creating labels of its own next to them.
PROCESS_ROLES = {
    "triage_review": frozenset({"needs triage", "triage review", "status needs triage", "triage needed",
                                "untriaged", "status triage", "to triage"}),
    "triaged": frozenset({"triaged", "status triaged", "triage done"}),
}
MAX_DESCRIPTION_WORDS = 8
# The bot's own markers (named unlike any project's labels; `labels sync` creates them).
BOT_LABELS = {"bot_triaged": "triaged-by-bot", "triaged": "triage-done",
              "triage_review": "needs-human-triage", "blocked": "bot-blocked"}


def read_label_list(path: Path) -> list[LabelIn]:
    """The labels in a gh or REST JSON file (a list, or `{"labels": [...]}`); one-line errors."""
    data = read_json(path)
    if isinstance(data, dict) and "labels" in data:
        data = data["labels"]
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON list of labels (gh label list --json name,description)")
    labels: dict[str, LabelIn] = {}
    for i, item in enumerate(data):
        try:
            label = LabelIn.model_validate(item)
        except ValidationError as exc:
            raise UserError(f"{path}: item {i}: {first_problem(exc).lower()}") from None
        labels.setdefault(label.name, label)
    return list(labels.values())


def split_family(name: str) -> tuple[str, str]:
    """(`area/`, `parser`) for `area/parser`; ("", name) without a family prefix."""
    match = _PREFIX.match(name)
    return (match.group(0), name[match.end():]) if match else ("", name)


def families(labels: Sequence[LabelIn]) -> dict[str, list[str]]:
    """Prefixes by role (area, queue, type, topic, human), from the words before separators."""
    found: dict[str, list[str]] = {"area": [], "queue": [], "type": [], "topic": [], "human": []}
    for label in labels:
        prefix, _ = split_family(label.name)
        word = prefix.rstrip(":/ ").lower()
        for role, words in (("area", AREA_WORDS), ("queue", QUEUE_WORDS), ("type", TYPE_WORDS),
                            ("topic", TOPIC_WORDS), ("human", HUMAN_WORDS)):
            if word in words and prefix not in found[role]:
                found[role].append(prefix)
    return found


def singular(word: str) -> str:
    """A plural's singular by the common English endings (proxies → proxy, certificates →
    certificate, classes → class); other words as they are."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is", "ous")) or word in _NOT_PLURAL:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    return word[:-1]


def _words(text: str) -> list[str]:
    """Content words of a description, singular, without contractions, stop words or words too
    common to route; a hyphenated compound (command-line) stays one phrase."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    text = _CONTRACTION.sub(" ", text)
    compounds = [normalize_keyword(c) for c in _COMPOUND.findall(text)]
    rest = [w if "." in w else singular(w) for w in tokens_of(_COMPOUND.sub(" ", text))]
    return [w for w in dict.fromkeys([*compounds, *rest])
            if len(w) >= 3 and not w.isdigit() and w not in ENGLISH_STOP_WORDS and w not in _GENERIC]


def process_roles(names: Sequence[str]) -> dict[str, str]:
    """The bot's roles (triage_review, triaged) the repository already has a label for."""
    found: dict[str, str] = {}
    for name in names:
        key = " ".join(re.sub(r"[-_:/]", " ", name.lower()).split())
        for role, known in PROCESS_ROLES.items():
            if key in known and role not in found:
                found[role] = name
    return found


def keywords_for(labels: Sequence[LabelIn]) -> dict[str, list[str]]:
    """Each label's keywords: its name without the family prefix (as a phrase), and the words of
    its description that no other label's name or description uses."""
    words = {label.name: _words(f"{split_family(label.name)[1]} {label.description or ''}")
             for label in labels}
    spread = Counter(w for found in words.values() for w in found)
    out = {}
    for label in labels:
        tail = normalize_keyword(split_family(label.name)[1])
        distinct = [w for w in words[label.name] if spread[w] == 1 and w != tail]
        out[label.name] = ([tail] if tail and tail not in _GENERIC else []) + distinct[:MAX_DESCRIPTION_WORDS]
    return out


def _comment(text: str) -> str:
    """Paragraphs on one line each (GitHub keeps single line breaks), list items on their own."""
    lines = [line.strip() for line in text.strip().splitlines()]
    out: list[str] = []
    for line in lines:
        if out and line and out[-1] and not line.startswith("- "):
            out[-1] += " " + line
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def templates(project: str, repo: str) -> dict[str, dict[str, str | list[str]]]:
    """The comments the tree may post, and `scrub --apply`'s close as fixed, generic, in our
    words, naming the project."""
    return {
        "redirect_to_forum": {
            "action": "close with a comment",
            "use_when": f"The issue asks how to use {project}; it reports no bug and requests no feature.",
            "comment": _comment(f"""
                Thanks for getting in touch! This reads as a question about using {project}
                rather than a bug report or a feature request, which is what this tracker is for.

                Questions get better answers where the community discusses usage, for example the
                repository's Discussions (https://github.com/{repo}/discussions) if they are on.

                So we close this one here. Should it be a bug after all, reopen it with a small
                example that shows what goes wrong."""),
        },
        "request_more_info": {
            "action": "comment and wait for the reporter",
            "use_when": "We cannot tell whether this is a question, a bug or a feature request.",
            "comment": _comment(f"""
                Thanks for opening this. We cannot tell yet what goes wrong, so please add:

                - the smallest example or steps that show the problem,
                - the full error message, if there is one,
                - the {project} version and your operating system.

                That lets us route the issue to the right people."""),
        },
        "request_self_contained_reproduction": {
            "action": "remove download links from the body, comment and wait",
            "use_when": "Reproducing would need files to download, or things we cannot have.",
            "comment": _comment(f"""
                Thanks for the report. We do not download or open files linked from issues, so
                we removed those links from the description.

                Could you show the problem with an example that stands on its own, with any input
                it needs written out in the issue? That is the quickest way to a fix in {project}."""),
        },
        "numerical_accuracy": {
            "action": "comment with background on floating point",
            "use_when": "The report is about floating-point precision at extreme values.",
            "comment": _comment("""
                Thanks for the details. Small differences are expected in floating-point
                arithmetic: results depend on the order of operations and on the platform.
                If the difference is larger than rounding explains, please tell us the inputs,
                the platform and the size of the error."""),
        },
        "fixed_in_release": {
            "action": "close as completed, naming the release that fixed it",
            "use_when": "Only `issuetriage scrub --apply`: the reproduction fails as reported on a "
                        "release and no longer fails from the next one on.",
            "variables": ["package", "version"],
            "comment": _comment("""
                Thanks for the report. We re-ran the example from this issue in a sandbox against
                released versions of $package: it fails as reported on the older ones and no
                longer fails from $package $version on, so we close this issue as fixed in
                $package $version.

                Should you still see the problem with $package $version or later, reopen it with
                the version you used and the output you get."""),
        },
    }


# What a feature request says (also the keywords of the profile's type label for features).
FEATURE_WORDS = ["feature request", "would be nice", "would be great", "it would be useful",
                 "please add", "add support", "support for", "proposal", "propose", "enhancement",
                 "motivation", "alternatives considered"]

# Generic rules in our own words: what a question, a bug, a feature request and an unsafe or
# impossible reproduction look like in any project's issues.
RULES = {
    "download_extensions": [".zip", ".tar", ".tar.gz", ".tgz", ".7z", ".rar", ".pkl", ".pickle",
                            ".bin", ".exe", ".dmg", ".msi", ".jar"],
    "download_hosts": ["drive.google.com", "dropbox.com", "dl.dropboxusercontent.com",
                       "onedrive.live.com", "1drv.ms", "mega.nz", "wetransfer.com", "we.tl"],
    "question": {"description": "Asks how to do something and reports no defect.",
                 "keywords": ["how do i", "how can i", "how to", "is it possible to", "is there a way",
                              "what is the best way", "can someone help", "can anyone help",
                              "need help", "question about", "i am new to", "i'm new to"]},
    "question_marker": {"description": "The title asks a question.",
                        "patterns": ["\\?\\s*$", "^\\s*(how|what|why|which|where|is there|can i|should i)\\b"]},
    "bug": {"description": "Reports a defect: an error, a crash, a wrong result.",
            "keywords": ["bug", "error", "exception", "traceback", "crash", "crashes", "segfault",
                         "fails", "failed", "failure", "wrong", "incorrect", "unexpected", "broken",
                         "regression", "doesn't work", "does not work", "not working", "hangs",
                         "steps to reproduce", "expected behavior", "actual behavior"],
            "patterns": ["\\w+Error\\b", "\\w+Exception\\b"]},
    "feature": {"description": "Asks for something new.",
                "keywords": FEATURE_WORDS,
                "patterns": ["^\\s*\\[?(feature|proposal|request)\\]?\\b"]},
    "expected_behavior": {"description": "The reported behaviour is documented and intended.",
                          "keywords": ["as documented", "working as intended", "works as intended",
                                       "by design", "intended behavior", "intended behaviour"]},
    "missing_repro": {
        "private_model": {"description": "Needs private code or data the reporter cannot share.",
                          "keywords": ["can't share the code", "cannot share the code", "unable to share",
                                       "proprietary", "confidential"]},
        "vague_upgrade": {"description": "Something broke after an upgrade, with no example.",
                          "keywords": ["after upgrading", "after updating", "since upgrading"]},
    },
    "escalate": {
        "crash": {"description": "Crashes the process.",
                  "keywords": ["segfault", "segmentation fault", "core dumped", "panic", "panicked"]},
        "silent_correctness": {"description": "Wrong results without an error.",
                               "keywords": ["silently wrong", "wrong result", "wrong results",
                                            "data loss", "data corruption"]},
        "regression": {"description": "Worked in an earlier release.",
                       "keywords": ["regression", "used to work", "worked before"]},
    },
}


def profile_files(repo: str, labels: Sequence[LabelIn], name: str, project: str,
                  shadow: bool = False) -> dict[str, str]:
    """The seven profile files, as TOML text (`shadow`: plans are recorded for review, never
    written, until a maintainer turns it off)."""
    fam = families(labels)
    keywords = keywords_for(labels)
    names = {label.name for label in labels}
    bot = {**BOT_LABELS, **{role: name for role, name in process_roles([label.name for label in labels]).items()
                            if split_family(name)[0] not in fam["human"]}}
    human = [label.name for label in labels if label.name.lower() in HUMAN_EXACT and label.name not in bot.values()]
    type_labels = [label.name for label in labels
                   if split_family(label.name)[0] in fam["type"] + [""]
                   and split_family(label.name)[1].lower() in FEATURE_TAILS
                   and label.name.lower() not in HUMAN_EXACT]
    question_labels = [label.name for label in labels
                       if split_family(label.name)[1].lower() in QUESTION_TAILS]
    catalog = []
    for label in labels:
        spec: dict[str, object] = {"name": label.name, "description": label.description or ""}
        if (label.name not in human and label.name not in bot.values()
                and split_family(label.name)[0] not in fam["human"]):
            words = keywords[label.name] + (FEATURE_WORDS if label.name in type_labels else [])
            if words:
                spec["keywords"] = words
        catalog.append(spec)
    catalog += [{"name": label, "description": f"issuetriage: {role.replace('_', ' ')}"}
                for role, label in bot.items() if label not in names]
    meta = {
        "name": name, "repo": repo, "project": project,
        "description": f"Triage policy for {repo}, made by `issuetriage profile init` from its labels.",
        "families": {"area": fam["area"], "queue": fam["queue"], "topic": fam["topic"]},
        "type_labels": type_labels,
        "question_labels": question_labels,
        "process_labels": sorted(set(bot.values()) | set(human)),
        "bot_labels": bot,
        "release": {"latest_minor": "unknown"},
        "thresholds": {"label": 0.5, "question_close": 0.8, "route": 0.5, "type_kind": 0.8},
        **({"live": {"shadow": True}} if shadow else {}),
    }
    forbidden = {"prefixes": fam["human"], "contains": [], "exact": human}
    queues = {"redirect": [{"label": label.name, "description": label.description or ""}
                           for label in labels if split_family(label.name)[0] in fam["queue"]]}
    header = "# Written by `issuetriage profile init`; edit freely (docs/profiles.md).\n"
    return {
        "profile.toml": header + tomli_w.dumps(meta),
        "labels.toml": header + tomli_w.dumps({"label": catalog}),
        "forbidden.toml": header + tomli_w.dumps(forbidden),
        "redundancy.toml": header + tomli_w.dumps({"pair": []}),
        "queues.toml": header + tomli_w.dumps(queues),
        "templates.toml": header + tomli_w.dumps({"templates": templates(project, repo)},
                                                  multiline_strings=True),
        "rules.toml": header + tomli_w.dumps(RULES),
    }


def init_profile(out: Path, repo: str, labels_path: Path | None = None, name: str | None = None,
                 project: str | None = None) -> Policy:
    """Write a validated profile folder for `repo` at `out` (all of it or nothing)."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise UserError(f"--repo {repo!r}: expected OWNER/NAME")
    labels = read_label_list(labels_path) if labels_path else []
    files = profile_files(repo, labels, name or out.name, project or repo.split("/")[1])
    return write_with_parents(files, out)


def write_with_parents(files: dict[str, str], out: Path) -> Policy:
    """Write the profile folder `out`, creating its missing parent folders; on failure the
    folders made for it go too (nothing half-written)."""
    made = [folder for folder in reversed(out.absolute().parents) if not folder.exists()]
    try:
        for folder in made:
            folder.mkdir()
        return write_atomically(files, {}, out)
    except BaseException:
        for folder in reversed(made):
            folder.rmdir() if folder.is_dir() and not any(folder.iterdir()) else None
        raise
