import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from builders import make_issue
from issuetriage.evidence import signals as signals_module
from issuetriage.evidence.matcher import Matcher
from issuetriage.evidence.signals import extract_signals, ngrams_of, normalize_keyword, tokens_of
from issuetriage.text import BODY_LIMIT, TITLE_LIMIT, fences

BODY = """### Describe the bug
Calling `torch.linalg.svd` on CUDA fails.

```python
import torch
torch.linalg.svd(torch.ones(2, 2, device="cuda"))
```

```
Traceback (most recent call last):
  File "x.py", line 2, in <module>
torch._C._LinAlgError: linalg.svd: The algorithm failed to converge
```

See https://example.com/a.zip and https://pytorch.org/docs.

### Versions
Collecting environment information...
PyTorch version: 2.9.1
OS: Microsoft Windows 11
[pip3] torchvision==0.24.1
"""


def test_signals_read_code_errors_links_versions_platforms():
    s = extract_signals(make_issue(title="svd fails", body=BODY))
    assert len(s.code_blocks) == 2 and s.has_traceback
    assert "_LinAlgError" in s.exceptions
    assert s.links == ("https://example.com/a.zip", "https://pytorch.org/docs")
    assert s.versions == ("2.9",) and "cuda" in s.backends and "windows" in s.platforms


def test_environment_report_is_not_keyword_matched():
    s = extract_signals(make_issue(title="svd fails", body=BODY))
    assert "torch.linalg" in s.pieces and "torchvision" not in s.pieces


def test_dotted_names_match_their_pieces_and_phrases_their_words():
    text = "Use torch.nn.functional.interpolate for the graph break here, mode='max-autotune'"
    signals = extract_signals(make_issue(title="t", body=text))
    assert {"torch.nn", "nn.functional", "interpolate"} <= signals.pieces
    matcher = Matcher({"a": (("graph break", "torch.nn.functional", "mode=\"max-autotune\""), ()),
                       "b": (("break graph", "graph breaks"), ())})
    hits = matcher.hits(signals)
    assert {h.evidence for h in hits["a"]} == {"graph break", "torch.nn.functional", "mode=\"max-autotune\""}
    assert "b" not in hits
    assert normalize_keyword("mode=\"max-autotune\"") == "mode max autotune"
    assert "graph break here" in ngrams_of(tokens_of(text))


def test_only_comments_by_the_author_count_as_the_issue_as_filed():
    issue = make_issue(body="x", comments=[{"author": "other", "body": "torch.compile"},
                                           {"author": "", "body": "DataLoader"}])
    pieces = extract_signals(issue).pieces
    assert "dataloader" in pieces and "torch.compile" not in pieces


def test_patterns_find_what_they_say_in_any_case_and_unicode():
    matcher = Matcher({"k": ((), (r"Signal\s+11",))})
    assert matcher.hits(extract_signals(make_issue(body="died with SIGNAL  11")))
    assert matcher.hits(extract_signals(make_issue(body="died with \u017fignal 11")))  # RE2 folds the long s
    assert not matcher.hits(extract_signals(make_issue(body="signal 12")))


def test_a_match_in_which_the_unless_group_took_part_is_no_hit():
    matcher = Matcher({"k": ((), (r"aot_eager[^.]{0,40}?(?:(?P<unless>works)|fails)",))})
    def hit(body: str) -> bool:
        return bool(matcher.hits(extract_signals(make_issue(body=body))))
    assert hit("aot_eager fails too") and not hit("aot_eager works, inductor fails")
    assert hit("aot_eager works. Then with aot_eager it fails")  # a later match counts


# The patterns the linear versions replace, kept here to check that they find the same things.
OLD_FENCE = re.compile(r"^[ \t]*(```|~~~)([^\n]*)\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
OLD_EXCEPTION = re.compile(
    r"^\s*(?:[\w.]+\.)?(_?[A-Z]\w*(?:Error|Exception|Warning|Failed|Unsupported|Interrupt))\b(?::|$)", re.M)
OLD_TORCH_VERSION = re.compile(r"torch(?: version)?(?:==| |: ?)\s*:?\s*v?(\d+\.\d+)(?:\.\d+)?")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["```", "~~~", "````", " ", "\t", "\n", "\r", "py", "x", "`"]), max_size=30))
def test_fences_are_the_blocks_the_old_pattern_found(parts):
    text = "".join(parts)
    old = [(m.start(), m.end(), m.group(1), m.group(2), m.group(3)) for m in OLD_FENCE.finditer(text)]
    assert [(b.start, b.end, b.marker, b.info, b.content) for b in fences(text)] == old


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\n", " ", "\t", "\xa0", "\x0c", "torch.", "_", "Value", "Error", "Warning",
                                 ":", "a", "É", "x.y"]), max_size=20))
@example(["\n", "\n", "\xa0", "Value", "Error", ":"])
@example(["\x0c", "torch.", "Value", "Error", "\n", "\t", "Warning"])
def test_exception_names_are_the_ones_the_old_pattern_found(parts):
    text = "".join(parts)
    assert signals_module._EXCEPTION.findall(text) == OLD_EXCEPTION.findall(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["torch", " version", " ", "\t", ":", "==", "v", "2.5", ".1", "\n", "x"]),
                max_size=14))
def test_versions_are_the_ones_the_old_pattern_found(parts):
    text = "".join(parts)
    assert signals_module._TORCH_VERSION.findall(text) == OLD_TORCH_VERSION.findall(text)


def test_issue_text_is_read_up_to_githubs_limits():
    issue = make_issue(title="t" * TITLE_LIMIT + " cuda", body="x" * BODY_LIMIT + " windows")
    signals = extract_signals(issue)
    assert "cuda" not in signals.backends and "windows" not in signals.platforms
    assert len(signals.text) == TITLE_LIMIT + 2 + BODY_LIMIT
