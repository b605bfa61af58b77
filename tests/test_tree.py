"""Each decision-tree step, fed a judgment directly, so the tree is tested apart from any judge."""

import pytest

from builders import make_issue, make_judgment
from issuetriage.engine.tree import propose
from issuetriage.evidence.downloads import REMOVAL_NOTICE
from issuetriage.evidence.signals import extract_signals
from issuetriage.judges.base import Kind, MissingRepro
from issuetriage.models import Decision


def plan_for(policy, issue=None, judgment=None):
    issue = issue or make_issue()
    return propose(issue, extract_signals(issue), judgment or make_judgment(), policy)


def test_step0_already_routed_adds_nothing(policy):
    plan = plan_for(policy, make_issue(labels=["oncall: jit"]),
                    make_judgment(labels={"module: nn": 0.99}, escalate=("crash",)))
    assert plan.decision is Decision.SKIP_ALREADY_ROUTED
    assert not plan.has_effect and plan.trace[0].step.startswith("0 ")


def test_step1_confident_question_is_closed_with_forum_redirect(policy):
    plan = plan_for(policy, judgment=make_judgment(Kind.QUESTION, 0.95))
    assert plan.decision is Decision.CLOSE_QUESTION and plan.close
    assert plan.templates == ("redirect_to_forum",)
    assert "triaged" not in plan.labels_added and "bot-triaged" in plan.labels_added


@pytest.mark.parametrize("kind,conf", [(Kind.UNCLEAR, 0.9), (Kind.QUESTION, 0.5)])
def test_step1_unclear_requests_info_and_stops(policy, kind, conf):
    plan = plan_for(policy, judgment=make_judgment(kind, conf, {"module: nn": 0.9}))
    assert plan.decision is Decision.REQUEST_INFO and not plan.close
    assert plan.templates == ("request_more_info",) and "module: nn" not in plan.labels_added


def test_step1_expected_behaviour_closes(policy):
    plan = plan_for(policy, judgment=make_judgment(Kind.EXPECTED_BEHAVIOR, 0.9))
    assert plan.decision is Decision.CLOSE_EXPECTED_BEHAVIOR and plan.close


@pytest.mark.parametrize("link", [
    "https://drive.google.com/file/d/xyz/view", "https://example.com/model.pt",
    "https://example.com/a/b/weights.safetensors", "https://www.dropbox.com/s/abc/data.zip?dl=0",
    "https://huggingface.co/someone/model/resolve/main/pytorch_model.bin", "https://mega.nz/file/abc",
    "https://we.tl/t-abc", "https://1drv.ms/u/s!abc", "https://example.com/data.pkl",
])
def test_step1_5_download_links_are_removed_and_no_triaged(policy, link):
    issue = make_issue(body=f"Get the file at {link} and run it.\n\nSee https://pytorch.org/docs/stable/index.html")
    plan = plan_for(policy, issue, make_judgment(labels={"module: nn": 0.9}))
    assert plan.decision is Decision.REQUEST_REPRODUCTION
    assert plan.templates == ("request_self_contained_reproduction",)
    assert link not in plan.body_edit and REMOVAL_NOTICE in plan.body_edit
    assert "https://pytorch.org/docs/stable/index.html" in plan.body_edit
    assert "triaged" not in plan.labels_added and "needs reproduction" not in plan.labels_added
    assert "module: nn" in plan.labels_added  # still routed to its module


def test_step1_5_ordinary_links_are_kept(policy):
    issue = make_issue(body="See https://github.com/pytorch/pytorch/blob/main/torch/nn/functional.py")
    assert plan_for(policy, issue, make_judgment(labels={"module: nn": 0.9})).decision is Decision.LABEL


@pytest.mark.parametrize("kind", [k for k in MissingRepro if k is not MissingRepro.DOWNLOAD])
def test_step1_55_missing_repro_requests_reproduction(policy, kind):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: nn": 0.9}, missing=kind))
    assert plan.decision is Decision.REQUEST_REPRODUCTION and plan.body_edit is None
    assert "triaged" not in plan.labels_added and "module: nn" in plan.labels_added


def test_a_reproduction_request_is_routed_but_keeps_its_decision_and_comment(policy):
    """The request for a self-contained reproduction edits and comments without stopping (only
    `request_more_info` stops): later steps add routing labels, never their own decision,
    comment, review or `triaged`."""
    issue = make_issue(body="Load https://example.com/model.pt and the distributed job hangs.")
    queue = plan_for(policy, issue, make_judgment(labels={"oncall: distributed": 0.9, "module: nn": 0.9}))
    assert queue.decision is Decision.REQUEST_REPRODUCTION and queue.body_edit is not None
    assert queue.templates == ("request_self_contained_reproduction",)
    assert [x for x in queue.labels_added if x != "bot-triaged"] == ["oncall: distributed"]
    unsure = plan_for(policy, issue, make_judgment(labels={"module: nn": 0.2}))
    assert unsure.decision is Decision.REQUEST_REPRODUCTION
    assert "triage review" not in unsure.labels_added and "triaged" not in unsure.labels_added
    assert unsure.templates == ("request_self_contained_reproduction",)


def test_a_crash_that_needs_a_reproduction_is_escalated_and_keeps_its_request(policy):
    """The skill's high-priority rule holds whatever the repro state: `triage review`, while the
    decision, the link removal and the comment stand; the trace says what the later steps gave."""
    from issuetriage.engine.guard import guard

    issue = make_issue(body="Load https://example.com/model.pt and conv2d segfaults.")
    plan = plan_for(policy, issue, make_judgment(labels={"module: convolution": 0.9}, escalate=("crash",)))
    assert plan.decision is Decision.REQUEST_REPRODUCTION and plan.body_edit is not None
    assert {"module: convolution", "triage review"} <= set(plan.labels_added)
    assert "triaged" not in plan.labels_added
    general = next(t for t in plan.trace if t.step.startswith("4 "))
    assert general.outcome == "+module: convolution" and "reproduction request stands" in general.reason
    guarded = guard(plan, issue, policy).plan
    assert guarded.body_edit == plan.body_edit and "triage review" in guarded.labels_added
    assert guarded.templates == ("request_self_contained_reproduction",)


def test_step1_6_edge_case_adds_label_template_and_keeps_going(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: edge cases": 0.9, "topic: fuzzer": 0.8,
                                                           "module: nn": 0.9}))
    assert {"module: edge cases", "topic: fuzzer", "module: nn", "triaged"} <= set(plan.labels_added)
    assert plan.templates == ("numerical_accuracy",) and plan.decision is Decision.LABEL


def test_step1_6_fuzzer_label_without_an_edge_case(policy):
    pt2 = plan_for(policy, judgment=make_judgment(labels={"topic: fuzzer": 0.8, "oncall: pt2": 0.9,
                                                          "module: inductor": 0.9}))
    assert {"topic: fuzzer", "oncall: pt2", "module: inductor"} <= set(pt2.labels_added)
    assert "module: edge cases" not in pt2.labels_added and pt2.templates == ()
    quiet = plan_for(policy, judgment=make_judgment(labels={"topic: fuzzer": 0.3, "oncall: pt2": 0.9}))
    assert "topic: fuzzer" not in quiet.labels_added
    alone = plan_for(policy, judgment=make_judgment(labels={"topic: fuzzer": 0.8}))
    assert alone.decision is Decision.TRIAGE_REVIEW  # a fuzzer label is not a module to route by
    assert {"topic: fuzzer", "triage review"} <= set(alone.labels_added)
    assert "triaged" not in alone.labels_added


def test_step2_transfer_to_sibling_repo(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: nn": 0.9}, transfer="pytorch/vision"))
    assert plan.decision is Decision.TRANSFER and plan.transfer_repo == "pytorch/vision"
    assert "triaged" not in plan.labels_added and "module: nn" not in plan.labels_added


def test_step2_unknown_transfer_target_is_ignored(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: nn": 0.9}, transfer="evil/repo"))
    assert plan.decision is Decision.LABEL and plan.transfer_repo is None


def test_step2_5_pt2_gets_a_module_label_fallback(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"oncall: pt2": 0.9}))
    assert plan.decision is Decision.LABEL
    assert {"oncall: pt2", "module: compile ux", "triaged"} <= set(plan.labels_added)


@pytest.mark.parametrize("module", ["module: flex attention", "module: cuda graphs"])
def test_step2_5_a_compile_only_module_makes_a_pt2_issue(policy, module):
    assert "oncall: pt2" in policy.implied([module])
    plan = plan_for(policy, judgment=make_judgment(labels={module: 0.8}))
    assert {"oncall: pt2", module} <= set(plan.labels_added) and plan.decision is Decision.LABEL
    assert any(t.step.endswith("compile_issue") and "implied by" in t.reason for t in plan.trace)
    weak = plan_for(policy, judgment=make_judgment(labels={module: 0.3, "module: nn": 0.9}))
    assert "oncall: pt2" not in weak.labels_added


def test_step2_5_the_label_that_made_a_pt2_issue_is_applied(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={
        "module: nn": 0.95, "module: linear algebra": 0.9, "module: aotinductor": 0.6}))
    assert {"oncall: pt2", "module: aotinductor", "oncall: export"} <= set(plan.labels_added)
    step = next(t for t in plan.trace if t.step.endswith("compile_issue"))
    assert "implied by module: aotinductor" in step.reason
    direct = plan_for(policy, judgment=make_judgment(labels={"oncall: pt2": 0.9,
                                                             "module: flex attention": 0.8}))
    step = next(t for t in direct.trace if t.step.endswith("compile_issue"))
    assert "implied by" not in step.reason


def test_step2_5_a_confident_feature_request_gets_its_type_label_on_the_pt2_queue(policy):
    """The skill's redirect-and-stop has PT2 as its exception, and its type labels go on "when
    confident": the same gates as the general queue (kind >= thresholds.type_kind, label >= label)."""
    labels = {"oncall: pt2": 0.9, "module: dynamo": 0.8, "feature": 0.7}
    plan = plan_for(policy, judgment=make_judgment(Kind.FEATURE, 0.8, labels))
    assert {"oncall: pt2", "module: dynamo", "feature"} <= set(plan.labels_added)
    assert plan.decision is Decision.LABEL
    unsure = plan_for(policy, judgment=make_judgment(Kind.FEATURE, 0.7, labels))
    bug = plan_for(policy, judgment=make_judgment(Kind.BUG, 0.9, labels))
    for other in (unsure, bug):
        assert "oncall: pt2" in other.labels_added and "feature" not in other.labels_added


def test_step2_5_aot_eager_failing_too_means_dispatcher_not_inductor(policy):
    issue = make_issue(title="torch.compile problem", body="It also fails with backend aot_eager, same error.")
    plan = plan_for(policy, issue, make_judgment(labels={"oncall: pt2": 0.9, "module: inductor": 0.9}))
    assert "module: pt2-dispatcher" in plan.labels_added and "module: inductor" not in plan.labels_added


def test_step2_5_rubric_labels_come_from_the_judge(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"oncall: pt2": 0.9, "module: dynamo": 0.8,
                                                           "module: inductor": 0.3}))
    assert "module: dynamo" in plan.labels_added and "module: inductor" not in plan.labels_added
    weak = plan_for(policy, judgment=make_judgment(labels={"oncall: pt2": 0.9, "module: inductor": 0.3}))
    assert "module: inductor" in weak.labels_added and "module: compile ux" not in weak.labels_added


@pytest.mark.parametrize("text,expected,absent", [
    ("It also fails with backend aot_eager, same error.", "module: pt2-dispatcher", "module: inductor"),
    ("With backend aot_eager it works; only inductor breaks in torch._inductor codegen.", "module: inductor", "module: pt2-dispatcher"),
    ("Dynamo raises torch._dynamo.exc.Unsupported while tracing: a graph break.", "module: dynamo", "module: pt2-dispatcher"),
    ("We use mark_dynamic and the SymInt guard fails with dynamic shapes.", "module: dynamic shapes", "module: helion"),
])
def test_step2_5_pt2_rubric_with_the_heuristic_judge(policy, text, expected, absent):
    from issuetriage.engine.pipeline import triage
    plan = triage(make_issue(title="torch.compile problem", body=f"With torch.compile: {text}"), policy)
    assert "oncall: pt2" in plan.labels_added
    assert expected in plan.labels_added and absent not in plan.labels_added


def test_step2_5_cpu_only_inductor_goes_to_cpu_subqueue(policy):
    issue = make_issue(body="torch.compile with inductor on cpu only: the cpp codegen vectorization is wrong; aot_eager works.")
    plan = plan_for(policy, issue, make_judgment(labels={"oncall: pt2": 0.9, "module: inductor": 0.8}))
    assert "oncall: cpu inductor" in plan.labels_added


def test_step2_5_compile_plus_distributed_routes_to_both(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"oncall: pt2": 0.9, "oncall: distributed": 0.9}))
    assert {"oncall: pt2", "oncall: distributed"} <= set(plan.labels_added)


def test_step2_5_helion_only_when_named(policy):
    named = make_issue(body="A helion kernel under torch.compile fails.")
    plan = plan_for(policy, named, make_judgment(labels={"oncall: pt2": 0.9}))
    assert {"module: helion", "module: inductor"} <= set(plan.labels_added)
    plain = plan_for(policy, make_issue(body="torch.compile fails"), make_judgment(labels={"oncall: pt2": 0.9}))
    assert "module: helion" not in plain.labels_added


def test_step2_5_and_4_add_what_the_labels_imply(policy):
    pt2 = plan_for(policy, judgment=make_judgment(labels={"module: flex attention": 0.8}))
    assert {"oncall: pt2", "module: flex attention", "module: higher order operators",
            "module: pt2-dispatcher"} <= set(pt2.labels_added)
    general = plan_for(policy, judgment=make_judgment(labels={"module: vmap": 0.8}))
    assert general.decision is Decision.LABEL
    assert {"module: vmap", "module: functorch"} <= set(general.labels_added)
    redirect = plan_for(policy, judgment=make_judgment(labels={"oncall: jit": 0.9, "module: vmap": 0.9}))
    assert "module: functorch" not in redirect.labels_added


def test_step3_redirect_has_exactly_one_oncall_and_nothing_else(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"oncall: jit": 0.7, "oncall: profiler": 0.6,
                                                           "module: nn": 0.9, "module: edge cases": 0.9}))
    assert plan.decision is Decision.REDIRECT_ONCALL
    assert [l for l in plan.labels_added if l.startswith("oncall:")] == ["oncall: jit"]
    assert set(plan.labels_added) == {"oncall: jit", "bot-triaged"} and plan.templates == ()


def test_step3_a_label_that_implies_a_queue_redirects_there(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: dtensor": 0.8, "module: nn": 0.9}))
    assert plan.decision is Decision.REDIRECT_ONCALL
    assert [label for label in plan.labels_added if label != "bot-triaged"] == ["oncall: distributed"]
    assert any(t.step.endswith("secondary_queue") and "implied by module: dtensor" in t.reason
               for t in plan.trace)


def test_step4_general_queue_labels_specific_and_one_type(policy):
    plan = plan_for(policy, judgment=make_judgment(Kind.FEATURE, 0.8, {"module: rnn": 0.9, "module: nn": 0.8,
                                                                       "feature": 0.7, "enhancement": 0.6}))
    assert plan.decision is Decision.LABEL and "module: rnn" in plan.labels_added
    assert len([l for l in plan.labels_added if l in policy.meta.type_labels]) == 1
    assert "triaged" in plan.labels_added


def test_step4_caps_module_labels_but_always_keeps_commonly_missed_ones(policy):
    from issuetriage.engine.tree.general import MAX_MODULES

    modules = {"module: sdpa": 0.9, "module: cudnn": 0.8, "module: nn": 0.75, "module: cuda": 0.7}
    plan = plan_for(policy, judgment=make_judgment(labels={**modules, "module: regression": 0.55}))
    added = [label for label in plan.labels_added if label in modules]
    assert added == list(modules)[:MAX_MODULES]  # the cap, best first
    assert "module: regression" in plan.labels_added  # the skill: always check for these


def test_step4_abstains_without_a_confident_module(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: nn": 0.2}))
    assert plan.decision is Decision.TRIAGE_REVIEW
    assert "triage review" in plan.labels_added and "triaged" not in plan.labels_added


@pytest.mark.parametrize("reason", ["crash", "silent_correctness", "regression", "internal_assert", "wide_impact"])
def test_step5a_escalation_is_triage_review_never_high_priority(policy, reason):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: nn": 0.9}, escalate=(reason,)))
    assert plan.decision is Decision.TRIAGE_REVIEW and "triage review" in plan.labels_added
    assert "high priority" not in plan.labels_added and "triaged" not in plan.labels_added
    assert "module: nn" in plan.labels_added


@pytest.mark.parametrize("body,labels,flagged", [
    ("PyTorch version: 2.9.1\nit fails", [], True),
    ("torch==2.9.0 breaks this", [], True),
    ("PyTorch version: 2.7.0", [], False),
    ("no version at all", ["high priority"], True),
    ("no version at all", [], False),
])
def test_step5b_release_triage(policy, body, labels, flagged):
    plan = plan_for(policy, make_issue(body=body, labels=labels), make_judgment(labels={"module: nn": 0.9}))
    assert ("release triage" in plan.labels_added) is flagged


def test_step5b_never_with_unknown_release(policy):
    import copy

    from issuetriage.policy import Meta, Release
    unknown = copy.copy(policy)
    unknown.meta = Meta.model_validate({**policy.meta.model_dump(), "release": Release(latest_minor="unknown")})
    plan = plan_for(unknown, make_issue(body="PyTorch version: 2.9.1", labels=["high priority"]),
                    make_judgment(labels={"module: nn": 0.9}))
    assert "release triage" not in plan.labels_added


def test_every_plan_explains_itself(policy):
    plan = plan_for(policy, judgment=make_judgment(labels={"module: nn": 0.9}))
    assert [t.step.split()[0] for t in plan.trace] == ["4", "6", "7"]
    assert all(t.reason for t in plan.trace)
