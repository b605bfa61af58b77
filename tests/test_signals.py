from builders import make_issue
from issuetriage.evidence.matcher import Matcher, required_literals
from issuetriage.evidence.signals import extract_signals, ngrams_of, normalize_keyword, tokens_of

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


def test_required_literal_prefilter_is_sound():
    assert required_literals(r"torch\.compile\(") == ("torch.compile(",)
    assert required_literals(r"(?:a|b)c") == ()
    assert required_literals(r"^\s*(how|what|why)\b[^\n]*\?") == ("how", "what", "why")
    assert required_literals(r"\b(returns?|produces?)\s+(nan|inf)") == ("return", "produce")
    matcher = Matcher({"k": ((), (r"Signal\s+11",))})
    assert matcher.hits(extract_signals(make_issue(body="died with SIGNAL  11")))  # literal is "signal"
