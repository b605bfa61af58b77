"""An agent's writes through the one flow: the MCP `submit_plan` tool and the Claude Code hooks.

The agent proposes (`agents/proposal.py` turns its call into a plan and says what it refused);
the flow guards that plan against the issue as it is now. MCP applies it (with `--apply`) through
the session's applier; a hook only judges, read-only, because the agent sends the call itself.
Both honour shadow mode (`act/hold.py`): the plan is held and nothing is written, and a hook then
denies the call. Demotion needs the live figures of an audit store: MCP with a store honours it;
hooks have no store, so only the guard and shadow mode apply there."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from issuetriage.act.applier import Applier, ReadOnly
from issuetriage.act.flow import Decide, Report, act
from issuetriage.act.hold import Mode
from issuetriage.models import Issue
from issuetriage.policy import Policy

if TYPE_CHECKING:  # the store loads only where a caller brings one (hooks start without it)
    from issuetriage.store.sqlite import Store


def submit(applier: Applier, repo: str, number: int, policy: Policy, decider: Decide, *, apply: bool,
           audit: Store | None) -> Report:
    """An agent's plan for `repo#number`, guarded, then applied when `apply` and not held."""
    return act(applier, repo, number, policy, decider, Mode(apply=apply), audit=audit, respect_marker=False)


def check(read: Callable[[str, int], Issue], repo: str, number: int, policy: Policy, decider: Decide) -> Report:
    """What the guard keeps of an agent's call that the agent will send itself; `Report.held`
    when shadow mode holds it."""
    return act(ReadOnly(read), repo, number, policy, decider, Mode(apply=False), respect_marker=False)
