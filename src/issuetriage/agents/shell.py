"""What a Bash command line runs, proven from two independent readings that must agree.

The hook allows a line only when it is nothing but simple commands with literal words, joined by
`|`, `&&`, `||`, `;` or newlines, with no redirection but to `/dev/null`, between descriptors or
from a file. `commands` reads the line twice: once with a real shell grammar (tree-sitter-bash),
once with a tokenizer that follows bash's own quoting rules for that small subset and refuses
everything else. Any syntax outside the subset in either reading (an expansion, a substitution, a
glob, a heredoc, an assignment, a compound command...) or any disagreement between the two (a
heredoc delimiter one closes and the other does not, a line continuation inside a word) is
Unsafe. Which programs may then run, with which arguments, is `programs`' business.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_LENGTH = 100_000  # a command line longer than this is refused unread


class Unsafe(Exception):
    """The hook will not let the call through: it cannot prove it safe (with the reason)."""


@dataclass(frozen=True)
class Command:
    """One simple command: its literal words, and its redirections (`2>/dev/null`, `<file`)."""

    words: tuple[str, ...]
    redirects: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.words[0]

    @property
    def inputs(self) -> tuple[str, ...]:
        """The files it reads through `<FILE`."""
        bodies = (r.lstrip(DIGITS) for r in self.redirects)
        return tuple(body[1:] for body in bodies if body[:1] == "<" and body[1:2] not in {"&", "<"})


def commands(text: str) -> tuple[Command, ...]:
    """Every command `text` runs, in order; Unsafe unless both readings agree on all of it."""
    if len(text) > MAX_LENGTH:
        raise Unsafe("the command line is too long to check")
    words, redirects = _from_tree(text)
    found = _from_tokens(text)
    if words != [c.words for c in found] or redirects != [r for c in found for r in c.redirects]:
        raise Unsafe("the shell grammar and bash's quoting rules read this line differently")
    if not found:
        raise Unsafe("no command to run")
    for redirect in redirects:
        _check_redirect(redirect)
    return found


# --- the first reading: tree-sitter-bash ---

@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


STRUCTURE = {"program", "list", "pipeline", "redirected_statement", "comment"}
SEPARATORS = {"&&", "||", "|", ";"}
WORDS = {"word", "number", "string", "raw_string", "concatenation"}


def _from_tree(text: str) -> tuple[list[tuple[str, ...]], list[str]]:
    """Each command's words and every redirection, in source order (tree-sitter hangs some
    redirections on a pipeline or a list rather than on their command)."""
    tree = _parser().parse(text.encode("utf-8", "surrogatepass"))
    if tree.root_node.has_error:
        raise Unsafe("cannot parse the shell command")
    found: list[tuple[int, tuple[str, ...]]] = []
    redirects: list[tuple[int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "command":
            found.append((node.start_byte, _command(node, redirects)))
        elif node.type == "file_redirect":
            redirects.append((node.start_byte, _redirect(node)))
        elif node.type in STRUCTURE or (not node.is_named and node.type in SEPARATORS):
            stack.extend(node.children)
        else:
            raise Unsafe(f"shell syntax the hook does not allow ({node.type})")
    return [words for _, words in sorted(found)], [r for _, r in sorted(redirects)]


def _command(node: Any, redirects: list[tuple[int, str]]) -> tuple[str, ...]:
    words: list[str] = []
    for child in node.named_children:
        if child.type == "command_name" and len(child.named_children) == 1:
            words.append(_word(child.named_children[0]))
        elif child.type in WORDS:
            words.append(_word(child))
        elif child.type == "file_redirect":
            redirects.append((child.start_byte, _redirect(child)))
        else:
            raise Unsafe(f"shell syntax the hook does not allow ({child.type})")
    if not words:
        raise Unsafe("a redirection without a command")
    return tuple(words)


def _redirect(node: Any) -> str:
    parts = []
    for child in node.children:
        if child.type == "file_descriptor" or not child.is_named:
            parts.append(_text(child))
        elif child.type in WORDS:
            parts.append(_word(child))
        else:
            raise Unsafe(f"shell syntax the hook does not allow ({child.type})")
    return "".join(parts)


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "surrogatepass"))


def _word(node: Any) -> str:
    """The literal string a word node stands for; Unsafe when the shell would compute it."""
    kind, text = node.type, _text(node)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        if any(child.type not in {'"', "string_content"} for child in node.children):
            raise Unsafe("an expansion inside double quotes")
        return _unescape(text[1:-1], DQ_ESCAPES)
    if kind == "concatenation":
        return "".join(_word(child) for child in node.children)
    if kind in {"word", "number"}:
        if _has_special(text):
            raise Unsafe("a word the shell expands (glob, brace, tilde or variable)")
        return _unescape(text, None)
    raise Unsafe(f"shell syntax the hook does not allow ({kind})")


def _has_special(text: str) -> bool:
    """Unescaped characters in an unquoted word that make the shell rewrite it."""
    escaped = False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in UNQUOTED_SPECIAL or (char == "~" and (i == 0 or text[i - 1] in "=:")):
            return True
    return False


def _unescape(text: str, escapable: str | None) -> str:
    """Backslash removal as bash does it: every character unquoted (`escapable` None), only
    `$`, backquote, `"`, backslash and newline inside double quotes; `\\<newline>` disappears."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and (escapable is None or text[i + 1] in escapable):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


# --- the second reading: bash's token rules for the allowed subset ---

DQ_ESCAPES = '$`"\\\n'
UNQUOTED_SPECIAL = set("$`*?[{}()")
OPERATOR_START = set("|&;<>()")
BLANK = " \t"
DIGITS = "0123456789"
EOF = "\0"


@dataclass
class _Reader:
    text: str
    at: int = 0

    def peek(self, ahead: int = 0) -> str:
        """The character `ahead` of the cursor, EOF past the end (the line holds no NUL)."""
        i = self.at + ahead
        return self.text[i] if i < len(self.text) else EOF


def _from_tokens(text: str) -> tuple[Command, ...]:
    for char in text:
        if (ord(char) < 32 and char not in "\t\n") or ord(char) == 127:
            raise Unsafe("control characters in the command line")
    r = _Reader(text)
    found: list[Command] = []
    words: list[str] = []
    redirects: list[str] = []
    pending = False  # after `|`, `&&`, `||` a command must follow (newlines may come first)
    while True:
        char = r.peek()
        if char in BLANK:
            r.at += 1
        elif char == "\\" and r.peek(1) == "\n":
            r.at += 2
        elif char == "#":
            while r.peek() not in (EOF, "\n"):
                r.at += 1
        elif char in (EOF, "\n", ";", "|", "&") and not (char == "&" and r.peek(1) == ">"):
            operator = _separator(r)
            if words:
                found.append(Command(tuple(words), tuple(redirects)))
                words, redirects = [], []
                pending = operator in {"|", "&&", "||"}
            elif redirects:
                raise Unsafe("a redirection without a command")
            elif operator not in {"\n", EOF} or (pending and operator == EOF):
                raise Unsafe(f"{operator.replace(EOF, 'end of line')} where a command should be")
            if operator == EOF:
                return tuple(found)
        elif char in "<>&" or (char in DIGITS and _fd_redirect(r)):
            redirects.append(_read_redirect(r))
        elif char in "()":
            raise Unsafe("subshells, functions and process substitutions are not allowed")
        else:
            words.append(_read_word(r))


def _separator(r: _Reader) -> str:
    char, after = r.peek(), r.peek(1)
    if char in (EOF, "\n"):
        r.at += 1
        return char
    if char == "|":
        if after == "&":
            raise Unsafe("|& is not allowed")
        r.at += 2 if after == "|" else 1
        return "||" if after == "|" else "|"
    if char == "&":
        if after != "&":
            raise Unsafe("background jobs (&) are not allowed")
        r.at += 2
        return "&&"
    if after in ";&":
        raise Unsafe("case syntax is not allowed")
    r.at += 1
    return ";"


def _fd_redirect(r: _Reader) -> bool:
    i = r.at
    while i < len(r.text) and r.text[i] in DIGITS:
        i += 1
    return i < len(r.text) and r.text[i] in "<>" and (r.at == 0 or r.text[r.at - 1] in BLANK + "\n;|&")


REDIRECT_OPERATORS = ("&>>", ">>", ">&", ">|", "<&", "&>", "<<", "<>", ">", "<")


def _read_redirect(r: _Reader) -> str:
    start = r.at
    while r.peek() in DIGITS:
        r.at += 1
    fd = r.text[start:r.at]
    operator = next((op for op in REDIRECT_OPERATORS if r.text.startswith(op, r.at)), None)
    if operator is None or operator in {"<<", "<>"} or r.text.startswith("<<<", r.at) \
            or r.text.startswith("<(", r.at) or r.text.startswith(">(", r.at):
        raise Unsafe("heredocs, here-strings and process substitutions are not allowed")
    r.at += len(operator)
    while r.peek() in BLANK:
        r.at += 1
    if r.peek() in (EOF, "\n") or r.peek() in OPERATOR_START:
        raise Unsafe("a redirection without a target")
    return fd + operator + _read_word(r)


def _read_word(r: _Reader) -> str:
    out: list[str] = []
    start = r.at
    while True:
        char = r.peek()
        if char in (EOF, "\n") or char in BLANK or char in OPERATOR_START:
            if r.at == start:
                raise Unsafe(f"unexpected {char!r}")
            return "".join(out)
        if char == "\\":
            nxt = r.peek(1)
            if nxt == EOF:
                raise Unsafe("a backslash at the end of the line")
            if nxt != "\n":
                out.append(nxt)
            r.at += 2
        elif char == "'":
            end = r.text.find("'", r.at + 1)
            if end < 0:
                raise Unsafe("an unterminated quote")
            out.append(r.text[r.at + 1:end])
            r.at = end + 1
        elif char == '"':
            out.append(_read_double_quoted(r))
        elif char in UNQUOTED_SPECIAL or (char == "~" and (r.at == start or r.text[r.at - 1] in "=:")):
            raise Unsafe(f"a word the shell expands ({char!r}: glob, brace, tilde, variable or substitution)")
        else:
            out.append(char)
            r.at += 1


def _read_double_quoted(r: _Reader) -> str:
    out: list[str] = []
    r.at += 1
    while True:
        char = r.peek()
        if char == EOF:
            raise Unsafe("an unterminated quote")
        if char == '"':
            r.at += 1
            return "".join(out)
        if char in "$`":
            raise Unsafe("an expansion inside double quotes")
        if char == "\\" and r.peek(1) in DQ_ESCAPES:
            if r.peek(1) != "\n":
                out.append(r.peek(1))
            r.at += 2
            continue
        out.append(char)
        r.at += 1


def _check_redirect(redirect: str) -> None:
    """Only `>/dev/null` (any descriptor, `&>`), `N>&M` and `N>&-` for the standard streams, and
    `<FILE` are allowed."""
    body = redirect.lstrip("0123456789")
    operator = next(op for op in REDIRECT_OPERATORS if body.startswith(op))
    target = body[len(operator):]
    if operator in {">", ">>", ">|", "&>", "&>>"} and target == "/dev/null":
        return
    if operator in {">&", "<&"} and target in {"0", "1", "2", "-"}:
        return
    if operator == "<" and not target.startswith("/dev/"):
        return
    raise Unsafe(f"the redirection {redirect!r} writes a file or opens a device")
