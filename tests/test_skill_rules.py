"""The offline judge follows the triage skill's own rules where keywords alone went wrong."""

from __future__ import annotations

import pytest

from builders import make_issue
from issuetriage.engine.pipeline import triage_with


def labels(policy, title, body):
    return triage_with(make_issue(title=title, body=body), policy).plan.labels_added


def test_a_negated_mention_is_no_evidence(policy):
    body = "flex_attention under torch.compile gives wrong gradients on H100, {} helion involved."
    assert "module: helion" not in labels(policy, "flex attention wrong grads", body.format("no"))
    assert "module: helion" in labels(policy, "flex attention wrong grads", body.format("with"))


@pytest.mark.parametrize("extra, pt2", [("", False), (" No torch.compile involved.", False),
                                        (" It also fails under torch.compile.", True)])
def test_pure_torch_export_goes_to_the_export_queue_not_pt2(policy, extra, pt2):
    body = ("```python\nep = torch.export.export(model, (x,))\n```\nraises "
            "torch._dynamo.exc.Unsupported: dict output." + extra)
    got = labels(policy, "torch.export fails on a model with dict outputs", body)
    assert "oncall: export" in got and ("oncall: pt2" in got) is pt2


def test_an_undefined_symbol_at_import_torch_is_a_binaries_problem(policy):
    body = ("After pip install, `import torch` fails:\n```\nImportError: /site-packages/torch/lib/"
            "libtorch_cuda.so: undefined symbol: ncclCommRegister\n```")
    got = labels(policy, "ImportError undefined symbol", body)
    assert "module: binaries" in got and "oncall: distributed" not in got


def test_a_broken_documentation_link_is_module_docs(policy):
    got = labels(policy, "Broken link in torch.nn.functional docs",
                 "The link to the tutorial on the nn.functional page is a broken link (404).")
    assert "module: docs" in got and "module: doc infra" not in got


@pytest.mark.parametrize("title, body", [
    ("torch.matmul gives wrong result on CPU for large matrices",
     "torch.matmul silently returns incorrect values for float32 inputs larger than 4096, "
     "compared to numpy. No error is raised."),
    # the singular "wrong result" / "wrong sum", with no keyword of the plural list
    ("scatter_add_ gives a wrong sum for repeated indices",
     "```python\nout.scatter_add_(0, idx, src)\n```\nThe total differs from a Python loop; nothing is raised."),
])
def test_a_silent_wrong_result_is_escalated_not_marked_triaged(policy, title, body):
    plan = triage_with(make_issue(title=title, body=body), policy).plan
    assert "triage review" in plan.labels_added and "triaged" not in plan.labels_added


def test_a_new_function_request_gets_the_function_request_type(policy):
    got = labels(policy, "Add torch.nanpercentile",
                 "Feature request: it would be great to have a new function like numpy.nanpercentile.")
    assert "function request" in got and "feature" not in got


FEATURE_TEMPLATE = "### 🚀 The feature, motivation and pitch\n\n{}\n\n### Alternatives\n\n_No response_"


@pytest.mark.parametrize("title, body, expected", [
    # the skill's `enhancement`: a clearer error message improves something that works; quoting
    # the error it improves does not make it a bug report
    ("Improve the error message when torch.cat gets tensors of different dtypes",
     "The current error message is confusing: `RuntimeError: expected scalar type Float but found "
     "Double`. A clearer error message naming the offending argument would help.", "enhancement"),
    # `function request`: a new argument to an existing function
    ("Add a `dim` argument to torch.unique_consecutive", "Please add a new argument so counts work along a dim.",
     "function request"),
])
def test_a_request_gets_the_skills_specific_type_label(policy, title, body, expected):
    got = labels(policy, title, FEATURE_TEMPLATE.format(body))
    assert expected in got and "feature" not in got
