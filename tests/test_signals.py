from issuetriage.matcher import Matcher, required_literal
from issuetriage.signals import extract_signals, ngrams_of, normalize_keyword, tokens_of

from conftest import make_issue

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
    assert "torch.linalg" in s.grams and "torchvision" not in s.grams


def test_dotted_names_match_their_pieces_and_phrases_their_ngrams():
    grams = ngrams_of(tokens_of("Use torch.nn.functional.interpolate for the graph break here"))
    assert {"torch.nn", "nn.functional", "interpolate", "graph break", "graph break here"} <= grams
    assert normalize_keyword("mode=\"max-autotune\"") == "mode max autotune"


def test_only_comments_by_the_author_count_as_the_issue_as_filed():
    issue = make_issue(body="x", comments=[{"author": "other", "body": "torch.compile"},
                                           {"author": "", "body": "DataLoader"}])
    grams = extract_signals(issue).grams
    assert "dataloader" in grams and "torch.compile" not in grams


def test_required_literal_prefilter_is_sound():
    assert required_literal(r"torch\.compile\(") == "torch.compile("
    assert required_literal(r"(a|b)c") == ""
    matcher = Matcher({"k": ((), (r"Signal\s+11",))})
    assert matcher.hits(extract_signals(make_issue(body="died with SIGNAL  11")))  # literal is "signal"
