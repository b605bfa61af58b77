"""Minimize a repro while the strict oracle says it is still the same bug.

Order per round: cut what runs after the failure, try the failing call alone after the imports,
drop unused imports and definitions, slice to
what the failing statement needs, delete statements body by body (chunks in parallel, merged and
re-verified), flatten control flow, inline calls, propagate copies, drop dead code (write-only
names, overwritten assignments, unreachable statements), then simplify device, dtype,
backend and sizes. When a round changes nothing, free names (take away the one read that keeps
an import, constant or helper alive) and, if that helped, go on. Rounds repeat to a fixpoint (a round that changes nothing, or returns to an
earlier script) or until the budget (oracle calls, seconds) is spent; never to a size target.
"""

from __future__ import annotations

import ast
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from issuetriage.scrub import astedit, deadcode, freeing, holders, modules, rewrite, transforms
from issuetriage.scrub.model import Budget, MinimizeResult
from issuetriage.scrub.outcome import Oracle
from issuetriage.scrub.transforms import Edit, apply_edits


@dataclass
class _State:
    code: str
    oracle: Oracle
    pool: ThreadPoolExecutor
    needed: set[str] = field(default_factory=set)  # statements whose deletion failed alone
    failed: set[str] = field(default_factory=set)  # edit labels that failed
    passes: list[str] = field(default_factory=list)
    spent: dict[str, int] = field(default_factory=dict)  # oracle calls per pass
    budget: Budget = Budget()
    started: float = field(default_factory=time.monotonic)
    keep_inputs: bool = False  # leave the values the script passes to the package as they are

    def exhausted(self) -> bool:
        return (self.oracle.calls >= self.budget.oracle_calls
                or time.monotonic() - self.started >= self.budget.seconds)

    def check(self, candidate: str) -> bool:
        """The oracle's verdict; once the budget is spent every candidate counts as failing."""
        return not self.exhausted() and self.oracle(candidate)

    def screen(self, candidate: str) -> bool:
        """Whether the candidate fails as reported (the oracle's first half; an oracle without
        one screens with its whole verdict); the budget applies as to `check`."""
        first = getattr(self.oracle, "screen", self.oracle)
        return not self.exhausted() and first(candidate)

    def test_all(self, candidates: list[str]) -> list[bool]:
        """Screen candidates in parallel: a True here still needs `accept` (the whole verdict)."""
        return list(self.pool.map(self.screen, candidates))

    def accept(self, code: str, why: str) -> bool:
        """Keep `code` if the oracle's whole verdict holds (the only way the script changes)."""
        if code == self.code:
            return True
        if not self.check(code):
            return False
        self.code = code
        self.passes.append(why)
        return True


def minimize(code: str, oracle: Oracle, budget: Budget = Budget(), workers: int = 3,
             keep_inputs: bool = False) -> MinimizeResult | None:
    """The smallest script we find that still fails the same way, or None if nothing holds.

    `keep_inputs` leaves out the passes that replace the reporter's values (trivial arguments,
    zero or small sizes, a loop cut to its first item): without a fixing release to check against, `parse(['--verbose'])` →
    `parse([])` may still fail the same assertion while no longer showing the bug.
    """
    started = time.monotonic()
    normal = astedit.render(ast.parse(code))
    start = normal if oracle(normal) else (code if oracle(code) else None)
    if start is None:
        return None
    with ThreadPoolExecutor(max_workers=workers) as pool:
        state = _State(start, oracle, pool, budget=budget, started=started, keep_inputs=keep_inputs)
        seen, rounds = {state.code}, 0
        crashed: dict[str, str] = {}  # pass → the exception it raised (skipped from then on)
        while True:
            rounds += 1
            before = state.code
            _run(_ROUND, state, crashed)
            if state.code == before and not state.exhausted():
                _run(_LAST_RESORT, state, crashed)  # only at a fixpoint of the cheaper passes
            if state.exhausted():
                stopped = "the budget ran out"
                break
            if state.code == before or state.code in seen:
                stopped = "a fixpoint (a round changed nothing)" if state.code == before else \
                    "a fixpoint (a round came back to an earlier script)"
                break
            seen.add(state.code)
    took = time.monotonic() - started
    used = (f"{oracle.calls} of {budget.oracle_calls} oracle calls, {took:.0f} of {budget.seconds:.0f} s")
    if crashed:
        used += "; skipped after an internal error: " + ", ".join(f"{n} ({e})" for n, e in crashed.items())
    return MinimizeResult(state.code, astedit.count_lines(state.code), oracle.calls, rounds,
                          tuple(state.passes), tuple(state.spent.items()),
                          stopped=f"{stopped} after {rounds} round{'s' * (rounds != 1)} ({used})",
                          seconds=round(took, 1))


def _run(steps: tuple[Callable[[_State], None], ...], state: _State, crashed: dict[str, str]) -> None:
    """Each pass in turn, counting its oracle calls; a pass that raises is skipped from then on."""
    for step in steps:
        before_calls = state.oracle.calls
        name = getattr(step, "pass_name", step.__name__.strip("_"))
        if name in crashed:
            continue
        try:
            step(state)
        except Exception as error:  # a transform's own bug: what was kept was verified, go on without it
            crashed[name] = type(error).__name__
        state.spent[name] = state.spent.get(name, 0) + state.oracle.calls - before_calls


def _truncate(state: _State) -> None:
    """Statements after the failing one (in each body the traceback passes through) never ran."""
    failure = state.oracle.failure_of(state.code)
    if failure is None or not failure.script_lines:
        return
    tree = ast.parse(state.code)
    cuts: dict[int, int] = {}
    for line in failure.script_lines:
        for k, j in astedit.statement_at(tree, line):
            cuts[k] = min(cuts.get(k, j), j)
    candidate = _cut(state.code, cuts)
    if candidate == state.code:
        return
    if state.accept(candidate, "truncate after failure"):
        return
    singles = [_cut(state.code, {k: j}) for k, j in sorted(cuts.items(), reverse=True)]
    singles = [c for c in singles if c != state.code]
    for single, ok in zip(singles, state.test_all(singles)):
        if ok and state.accept(single, "truncate after failure"):
            return


def _hoist(state: _State) -> None:
    """The failing statement, or a call in it, alone after the imports: once earlier passes made
    its arguments self-contained, the classes, loops and setup around it are not needed at all."""
    failure = state.oracle.failure_of(state.code)
    if failure is None or not failure.script_lines:
        return
    tree = ast.parse(state.code)
    line = failure.script_lines[-1]
    simple = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not hasattr(n, "body")
              and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not simple:
        return
    stmt = min(simple, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    alone = [stmt] + [ast.Expr(call) for call in ast.walk(stmt) if isinstance(call, ast.Call)][:3]
    candidates = list(dict.fromkeys(astedit.render(ast.Module(imports + [s], type_ignores=[]))
                                    for s in alone))
    candidates = sorted((c for c in candidates if astedit.count_lines(c) < astedit.count_lines(state.code)),
                        key=len)  # the shortest that holds: a bare call reads better than `self.x = call()`
    for candidate, ok in zip(candidates, state.test_all(candidates)):
        if ok and state.accept(candidate, "hoist the failing call"):
            return


def _cut(code: str, cuts: dict[int, int]) -> str:
    tree = ast.parse(code)
    blocks = astedit.bodies(tree)
    for k in sorted(cuts, reverse=True):
        del blocks[k][cuts[k] + 1:]
    return astedit.render(tree)


def _prune(state: _State) -> None:
    candidate = astedit.prune(state.code)
    if candidate != state.code:
        state.accept(candidate, "drop unused imports and definitions")


def _slice(state: _State) -> None:
    """Keep only the top-level statements the failing statement needs by name."""
    failure = state.oracle.failure_of(state.code)
    if failure is None or not failure.script_lines:
        return
    tree = ast.parse(state.code)
    top = next((j for k, j in astedit.statement_at(tree, failure.script_lines[0]) if k == 0), None)
    if top is None:
        return
    keep = astedit.backward_slice(tree, top) | set(range(top + 1, len(tree.body)))
    drop = set(range(len(tree.body))) - keep
    if drop:
        state.accept(astedit.delete(state.code, 0, drop), "slice to what the failing statement needs")


def _delete(state: _State) -> None:
    """ddmin over each body in pre-order; chunks of one granularity are tested in parallel."""
    k = 0
    while k < len(astedit.bodies(ast.parse(state.code))):
        _reduce_body(state, k)
        k += 1


def _reduce_body(state: _State, k: int) -> None:
    tree = ast.parse(state.code)
    block = astedit.bodies(tree)[k]
    reads = _reads(tree)
    cand = [j for j in range(len(block)) if _key(block, j, reads) not in state.needed]
    likely = _on_failure_path(state, tree, block)
    if likely:  # statements the failing one needs by name are kept without testing them
        state.needed.update(_key(block, j, reads) for j in likely)
        cand = [j for j in cand if j not in likely]
    chunks_n = 1
    while cand:
        size = len(cand)
        chunks = [cand[size * i // chunks_n:size * (i + 1) // chunks_n] for i in range(chunks_n)]
        chunks = [c for c in chunks if c]
        results = state.test_all([astedit.delete(state.code, k, set(c)) for c in chunks])
        good = [set(c) for c, ok in zip(chunks, results) if ok]
        # all the chunks that screened well at once, else the first one the whole verdict keeps
        gone = next((g for g in ([set().union(*good)] if len(good) > 1 else []) + good
                     if state.accept(astedit.delete(state.code, k, g), "delete statements")), None)
        if gone is not None:
            cand = [j - sum(1 for g in gone if g < j) for j in cand if j not in gone]
            chunks_n = max(1, min(chunks_n, len(cand)))
            continue
        if chunks_n >= len(cand):
            tree = ast.parse(state.code)
            block, reads = astedit.bodies(tree)[k], _reads(tree)
            state.needed.update(_key(block, j, reads) for j in cand)
            return
        chunks_n = min(len(cand), chunks_n * 2)


def _on_failure_path(state: _State, tree: ast.Module, block: list[ast.stmt]) -> set[int]:
    """In a body the traceback passes through: the failing statement and, backwards, every
    statement that binds a name it (transitively) reads. Empty for other bodies."""
    failure = state.oracle.failure_of(state.code)
    lines = failure.script_lines if failure else ()
    seeds = [j for j, stmt in enumerate(block)
             if any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in lines)]
    if not seeds:
        return set()
    modules = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
               if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    keep = {seeds[-1]}
    needed = _uses(block[seeds[-1]])
    for j in range(seeds[-1] - 1, -1, -1):
        if isinstance(block[j], ast.Expr):  # `x.append(...)` changes x but may not matter: ddmin tries it
            continue
        bound = astedit.binds(block[j]) - (modules if not isinstance(block[j], (ast.Import, ast.ImportFrom)) else set())
        if bound & needed:
            keep.add(j)
            needed = (needed - _assigned(block[j])) | _uses(block[j])
    return keep


def _assigned(stmt: ast.stmt) -> set[str]:
    """Names a statement (re)binds outright: assignment and loop targets, not mutations."""
    found = set()
    for node in ast.walk(stmt):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.For, ast.AnnAssign)) else [])
        for target in targets:
            found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return found


def _uses(stmt: ast.stmt) -> set[str]:
    """Names read before the statement binds them itself (roughly: reads minus own bindings)."""
    return astedit.loads(stmt) - _assigned(stmt)


def _one_per_group(edits: list[Edit]) -> list[Edit]:
    seen: set[tuple] = set()
    kept = []
    for edit in edits:
        if edit.group and edit.group in seen:
            continue
        seen.add(edit.group)
        kept.append(edit)
    return kept


def _reads(tree: ast.AST) -> Counter[str]:
    """How often each name or attribute is read: a statement is retried when its readers change."""
    return Counter(n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
                   if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load))


def _key(block: list[ast.stmt], j: int, reads: Counter[str]) -> str:
    """A statement's identity across rounds: its text, its predecessor's (copies differ) and how
    often what it binds is read (a rewrite that removes a reader makes it worth retrying)."""
    before = ast.unparse(block[j - 1]) if j else ""
    stores = sorted(astedit.binds(block[j]) | {n.attr for n in ast.walk(block[j])
                                                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)})
    return f"{before}\n--\n{ast.unparse(block[j])}\n--\n{[(n, reads[n]) for n in stores]}"


# edit labels that replace the values a script tests: the sizes it uses, the data a loop walks
_CHANGES_INPUTS = ("simplify sizes", "flatten loop", "free name")


def _edits(name: str, make: Callable[..., list[Edit]], traced: bool = False,
           changes_inputs: bool = False) -> Callable[[_State], None]:
    """Test every new edit in parallel, merge the ones that hold, re-verify; repeat while it helps.

    `traced` edits also get the script lines of the current failure's traceback. Edits that
    replace the script's input values (`changes_inputs`, small sizes, a loop cut to its first
    item) are left out when the state keeps inputs.
    """
    def run(state: _State) -> None:
        if changes_inputs and state.keep_inputs:
            return
        while True:
            failure = state.oracle.failure_of(state.code)
            lines = failure.script_lines if failure else ()
            if traced and not lines:
                return
            made = make(state.code, lines) if traced else make(state.code)
            edits = [e for e in made if e.label not in state.failed
                     and not (state.keep_inputs and e.label.startswith(_CHANGES_INPUTS))]
            if not edits:
                return
            results = state.test_all([apply_edits(state.code, [e]) for e in edits])
            good = _one_per_group([e for e, ok in zip(edits, results) if ok])
            state.failed.update(e.label for e, ok in zip(edits, results) if not ok)
            # all that screened well at once, else one at a time until the whole verdict keeps one
            for applied in ([good] if len(good) > 1 else []) + [[e] for e in good]:
                try:
                    merged = apply_edits(state.code, applied)
                except (AttributeError, IndexError, TypeError):  # two edits reached the same statement
                    continue
                if merged == state.code:
                    return
                detail = "; ".join(e.label for e in applied) if name.startswith("simplify") else name
                if state.accept(merged, detail):
                    break
                if len(applied) == 1:
                    state.failed.add(applied[0].label)
            else:
                return
    run.pass_name = name  # type: ignore[attr-defined]
    return run


_ROUND: tuple[Callable[[_State], None], ...] = (
    _truncate, _hoist, _prune, _slice, _delete,
    _edits("flatten control flow", transforms.flatten_edits),
    _edits("inline calls", transforms.inline_edits),
    _edits("unfold config holders", holders.holder_edits),
    _edits("inline wrapper modules", modules.module_edits),
    _edits("propagate copies", rewrite.copy_edits),
    _edits("drop dead code", deadcode.dead_edits),
    _edits("simplify device, dtype, backend, sizes", rewrite.simplify_edits),
    _edits("unwrap calls", transforms.unwrap_edits, traced=True),
    _edits("zero sizes", rewrite.zero_edits, changes_inputs=True),
    _edits("trivial arguments at the failing call", lambda code, lines: transforms.literal_edits(code, lines[-1:]),
           traced=True, changes_inputs=True),
    _truncate, _prune,  # rewrites above can leave statements behind the failing one
)
# tried only when a round of the passes above changed nothing: each freed read costs a call, and
# most are found dead by the cheaper passes first
_LAST_RESORT: tuple[Callable[[_State], None], ...] = (
    _edits("free names", freeing.free_edits), _prune,
)
