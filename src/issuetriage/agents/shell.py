"""What a Bash command line would run, read with a real shell grammar (tree-sitter-bash).

The hook's question is not "is this a gh write?" but "could this reach GitHub in a way we have
not checked?". `simple_commands` lists every command the line runs (inside pipelines, lists,
substitutions, functions and heredocs) with its words, each either a literal string or None when
the shell computes it at run time. `reaches_github` then refuses, fail closed, anything that could
write to GitHub behind our back: computed command names, gh behind a wrapper or a shell, inline
interpreter code that names GitHub or can start processes or open connections, HTTP clients
aimed at GitHub with anything but a plain read, raw sockets. What is left is either no GitHub
call at all or plain gh commands, which `gh_commands` parses the way gh does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_DEPTH = 4  # `bash -c "bash -c '...'"`: deeper nesting than this is refused
Word = str | None  # None: computed by the shell at run time (expansion, substitution, glob)


class Unsafe(Exception):
    """The command may reach GitHub in a way the hook cannot check (with the reason)."""


@dataclass(frozen=True)
class SimpleCommand:
    """One command the line runs: its words, where its stdin comes from, whether it writes a file."""

    words: tuple[Word, ...]
    stdin: str | None = None  # the heredoc or here-string text, when there is one
    piped: bool = False  # stdin comes from an earlier command of a pipeline
    writes_file: bool = False  # `>`/`>>` redirection of its output
    assigns: bool = False  # `VAR=value cmd`: the environment is changed for it

    @property
    def name(self) -> str | None:
        """The program's base name (`/usr/bin/gh` → `gh`), None when computed."""
        first = self.words[0] if self.words else None
        return first.rsplit("/", 1)[-1] if first else None


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(text: str) -> tuple[Any, bytes]:
    """The syntax tree of `text`; Unsafe when the shell grammar cannot read all of it."""
    source = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        raise Unsafe("cannot parse the shell command")
    return tree.root_node, source


_GLOB = re.compile(r"[*?\[]|\{[^{}]*(,|\.\.)[^{}]*\}|^~|[=:]~")
_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')


def word_value(node: Any) -> Word:
    """The literal string a word node stands for, or None when the shell computes it."""
    kind, text = node.type, node.text.decode("utf-8", "surrogatepass")
    if kind in {"word", "number"}:
        if _GLOB.search(re.sub(r"\\.", "", text)):
            return None  # globs, braces, tilde: the shell rewrites the word
        return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""))
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        if any(child.type != "string_content" for child in node.named_children):
            return None
        return _DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text[1:-1])
    if kind == "concatenation":
        parts = [word_value(child) for child in node.children]
        return None if any(p is None for p in parts) else "".join(parts)  # type: ignore[arg-type]
    return None


CONFIG_FILES = re.compile(r"curlrc|wgetrc|CURL_HOME|WGETRC|\.config/gh|GH_CONFIG_DIR|gh/(config|hosts)\.yml")


def simple_commands(text: str) -> list[SimpleCommand]:
    """Every command `text` runs, in source order."""
    if CONFIG_FILES.search(text):
        raise Unsafe("the command touches gh's or an HTTP client's configuration")
    root, _ = parse(text)
    return list(_walk(root, piped=False))


def _walk(node: Any, piped: bool) -> Iterator[SimpleCommand]:
    if node.type == "command":
        yield _command(node, node.parent, piped)
    children = node.named_children
    for i, child in enumerate(children):
        in_pipe = piped if node.type != "pipeline" else (piped if i == 0 else True)
        yield from _walk(child, in_pipe)


def _command(node: Any, parent: Any, piped: bool) -> SimpleCommand:
    words: list[Word] = []
    name = node.child_by_field_name("name")
    if name is not None:
        words.append(word_value(name.named_children[0]) if name.named_children else None)
    for child in node.children_by_field_name("argument"):
        words.append(word_value(child))
    assigns = any(child.type == "variable_assignment" for child in node.named_children)
    redirects = list(node.children_by_field_name("redirect"))
    if parent is not None and parent.type == "redirected_statement":
        redirects += parent.children_by_field_name("redirect")
    stdin, writes = None, False
    for redirect in redirects:
        text = redirect.text.decode("utf-8", "surrogatepass")
        if "/dev/tcp/" in text or "/dev/udp/" in text:
            raise Unsafe("bash network redirections (/dev/tcp) are not allowed")
        if redirect.type == "heredoc_redirect":
            body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
            stdin = body.text.decode("utf-8", "surrogatepass") if body is not None else ""
        elif redirect.type == "herestring_redirect":
            stdin = redirect.text.decode("utf-8", "surrogatepass")[3:]
        elif redirect.type == "file_redirect":
            op = redirect.text.decode("utf-8", "surrogatepass").lstrip("0123456789&")
            writes = writes or op.startswith(">") and not op.startswith(">&")
            if op.startswith("<") and not op.startswith("<&"):
                stdin = None
                piped = True  # stdin from a file the hook cannot read
    return SimpleCommand(tuple(words), stdin, piped, writes, assigns)


SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "rbash", "csh", "tcsh"}
SOURCING = {"eval", "source", "."}
WRAPPERS = {"env", "command", "builtin", "exec", "nice", "nohup", "time", "timeout", "stdbuf",
            "setsid", "sudo", "doas", "su", "runuser", "xargs", "parallel", "watch", "flock",
            "ionice", "taskset", "strace", "ltrace", "unbuffer", "chronic", "script", "chroot",
            "busybox", "find", "fakeroot", "faketime", "unshare", "nsenter", "expect", "tmux",
            "screen", "ssh", "npx", "uvx", "pipx", "systemd-run", "entr", "firejail", "sg"}
INTERPRETER = re.compile(r"(python|pypy|ipython)[\d.]*|node(js)?|deno|bun|perl|ruby|irb|php|lua(jit)?"
                         r"|Rscript|julia|tclsh|wish|pwsh|powershell|osascript|[gmn]?awk|sed|jshell")
INLINE_FLAGS = {"-c", "-e", "-E", "-r", "--eval", "--exec", "-p", "--print", "--command"}
HTTP_CLIENTS = {"curl", "wget", "http", "https", "xh", "xhs", "httpie", "aria2c", "lwp-request",
                "lynx", "links", "w3m"}
RAW_SOCKETS = {"nc", "ncat", "netcat", "socat", "openssl", "telnet", "gnutls-cli"}
GITHUB_HOST = re.compile(r"(?i)(?<![a-z0-9-])(?:[a-z0-9-]+\.)*(?:github\.com|githubusercontent\.com"
                         r"|githubapp\.com)(?![a-z0-9-])")
IP_URL = re.compile(r"(?i)\b(?:https?|ftp)://(?:[^/@]*@)?(?:\[|\d+(?:\.|/|:|$))")
GH_MENTION = re.compile(r"(?<![\w.-])gh\s+[a-z]")
# Inline code that names GitHub, or can start a process, open a connection or build code at run time.
RISKY_CODE = re.compile(
    r"(?i)github|(?<![\w.-])gh(?![\w.-])|GH_TOKEN|GH_REPO|subprocess|os\.(system|popen|exec|spawn|fork)"
    r"|popen|spawn|child_process|\bexec|\beval|system\s*\(|\bpty\b|socket|urllib|http|requests|httpx"
    r"|aiohttp|fetch\s*\(|\bnet\b|curl|wget|base64|b64|codecs|decode|unhexlify|fromCharCode|\\x[0-9a-f]"
    r"|\\u[0-9a-f]|chr\s*\(|__import__|importlib|import\s*\(|getattr|globals|__builtins__|compile"
    r"|marshal|pickle|ctypes|\bqx|`|\bopen\s*\(\s*[^)]*\||require|IO::|LWP|/dev/tcp")
HEADERS_OK = {"accept", "authorization", "x-github-api-version", "user-agent", "if-none-match",
              "if-modified-since"}


def reaches_github(commands: list[SimpleCommand], depth: int = 0) -> list[SimpleCommand]:
    """The plain gh commands among `commands`; Unsafe for anything else that may reach GitHub."""
    found: list[SimpleCommand] = []
    for cmd in commands:
        if not cmd.words:
            continue
        name = cmd.name
        if name is None:
            raise Unsafe("the command name is computed at run time")
        if name == "gh":
            found.append(cmd)
        elif name in WRAPPERS:
            _wrapped(cmd, depth)
        elif name in SHELLS or name in SOURCING:
            found += _shell(cmd, depth)
        elif INTERPRETER.fullmatch(name):
            _interpreter(cmd)
        elif name in HTTP_CLIENTS:
            http_read_only(cmd)
        elif name in RAW_SOCKETS:
            if any(w is None or GITHUB_HOST.search(w) or IP_URL.search(w) for w in cmd.words[1:]):
                raise Unsafe(f"{name} may open a connection to GitHub")
        elif name == "alias" and any(w is None or "=" in w for w in cmd.words[1:]):
            raise Unsafe("aliases hide the command they run")
        else:
            _mentions(cmd, depth)
    return found


def _sensitive(word: Word) -> bool:
    if word is None:
        return True
    base = word.rsplit("/", 1)[-1]
    return word != "." and (base == "gh" or base in SHELLS or base in SOURCING or base in HTTP_CLIENTS
            or base in RAW_SOCKETS or base in WRAPPERS or bool(INTERPRETER.fullmatch(base))
            or bool(GH_MENTION.search(word)))


def _wrapped(cmd: SimpleCommand, depth: int) -> None:
    """`env gh …`, `xargs gh …`, `su -c 'gh …'`: the wrapped command is hidden from us."""
    _embedded(cmd, depth, strict=True)
    for word in cmd.words[1:]:
        if word is not None and "=" in word and not word.startswith("-"):
            if word.split("=", 1)[0].startswith(("GH_", "GITHUB_")):
                raise Unsafe(f"{cmd.name} changes gh's environment ({word.split('=', 1)[0]})")
            continue
        if _sensitive(word):
            raise Unsafe(f"run one plain gh command per call (not behind {cmd.name})")


def _shell(cmd: SimpleCommand, depth: int) -> list[SimpleCommand]:
    """`bash -c 'script'` and `eval 'script'` are read as the script; files and pipes are refused."""
    if depth >= MAX_DEPTH:
        raise Unsafe("shell commands nested too deeply")
    args = cmd.words[1:]
    if cmd.name in SOURCING - {"eval"}:
        raise Unsafe(f"{cmd.name} runs a script the hook cannot read")
    if cmd.name == "eval":
        scripts: list[Word] = [None if any(a is None for a in args) else " ".join(args)]  # type: ignore[arg-type]
    elif any(a is not None and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a) for a in args):
        # with -c the first operand is the script; every operand is read, as option values
        # (`-o pipefail`) cannot be told from it without bash's own option table
        scripts = [a for a in args if a is None or not a.startswith(("-", "+"))]
    elif any(a is None or not a.startswith(("-", "+")) for a in args):
        raise Unsafe(f"{cmd.name} runs a script the hook cannot read")
    elif cmd.stdin is None:
        raise Unsafe(f"{cmd.name} reads commands from a pipe or file")
    else:
        scripts = [cmd.stdin]
    for script in scripts:
        if script is None:
            raise Unsafe(f"the script given to {cmd.name} is computed at run time")
        if reaches_github(simple_commands(script), depth + 1):
            raise Unsafe(f"run one plain gh command per call (not inside {cmd.name})")
    return []


def _inline(args: tuple[Word, ...], flags: set[str]) -> list[Word]:
    """The code given with each inline flag (`-c CODE`, `-le CODE`); None where computed."""
    codes: list[Word] = []
    for i, word in enumerate(args):
        if word is None or not word.startswith("-"):
            continue
        if word in flags or (not word.startswith("--")
                             and any(f[1:] in word[1:] for f in flags if len(f) == 2)):
            codes.append(args[i + 1] if i + 1 < len(args) else None)
    return codes


def _interpreter(cmd: SimpleCommand) -> None:
    """Inline code (`python -c`, `node -e`, a heredoc) must not name GitHub or reach the network."""
    name, args = cmd.name or "", cmd.words[1:]
    codes = _inline(args, INLINE_FLAGS)
    operands = [a for a in args if a is None or not a.startswith("-")]
    if not codes and ("awk" in name or name == "sed"):
        if operands and operands[0] is None:
            raise Unsafe(f"the program given to {name} is computed at run time")
        codes = [" ".join(a for a in operands if a is not None)]
    if not codes:
        if operands and operands[0] != "-":
            return  # a program file: not read by the hook (see docs/hooks.md)
        if cmd.stdin is None:
            if cmd.piped:
                raise Unsafe(f"{name} reads its program from a pipe or file")
            return  # interactive: nothing to run
        codes = [cmd.stdin]
    for code in codes:
        if code is None:
            raise Unsafe(f"the code given to {name} is computed at run time")
        hit = RISKY_CODE.search(code)
        if hit:
            raise Unsafe(f"inline {name} code may reach GitHub ({hit.group(0)!r})")


def _targets_github(cmd: SimpleCommand) -> bool:
    return any(w is None or GITHUB_HOST.search(w) or IP_URL.search(w)
               or w.lower().lstrip("-") in {"resolve", "connect-to", "config", "k", "unix-socket"}
               or w.lower().startswith("host:") for w in cmd.words[1:])


CURL_BOOL = set("sSLfiIvg#N")
CURL_VALUE = {"-H": "header", "--header": "header", "-o": "", "--output": "", "-w": "",
              "--write-out": "", "-m": "", "--max-time": "", "--connect-timeout": "", "--retry": "",
              "-A": "", "--user-agent": "", "--url": "url", "-u": "", "--user": "", "-r": "",
              "--range": ""}
CURL_LONG_BOOL = {"--silent", "--show-error", "--location", "--fail", "--fail-with-body", "--include",
                  "--head", "--verbose", "--compressed", "--globoff", "--no-buffer", "-q", "--disable"}
WGET_BOOL = {"-q", "--quiet", "-S", "--server-response", "-nv", "--no-verbose", "-v", "--verbose",
             "--no-config"}
WGET_VALUE = {"-O": "", "--output-document": "", "-o": "", "--output-file": "", "--header": "header",
              "-T": "", "--timeout": "", "-t": "", "--tries": "", "-U": "", "--user-agent": ""}


def http_read_only(cmd: SimpleCommand) -> None:
    """An HTTP client aimed at GitHub (or at an address we cannot see) may only do a plain GET."""
    if not _targets_github(cmd):
        return
    name, args = cmd.name, list(cmd.words[1:])
    if name == "curl":  # ~/.curlrc may say `request = POST`: only -q as the first word skips it
        if args[:1] not in (["-q"], ["--disable"]):
            raise Unsafe("curl to GitHub must start with -q (so no ~/.curlrc applies)")
        _flags_read_only(name, args, CURL_VALUE, CURL_LONG_BOOL, CURL_BOOL)
    elif name == "wget":
        if "--no-config" not in args:
            raise Unsafe("wget to GitHub needs --no-config (so no ~/.wgetrc applies)")
        _flags_read_only(name, args, WGET_VALUE, WGET_BOOL, set())
    elif name in {"http", "https", "xh", "xhs", "httpie"}:
        items = [a for a in args if a is not None and not a.startswith("-")]
        if any(a is None or (a.startswith("-") and a not in {"-b", "--body", "-h", "--headers"})
               for a in args):
            raise Unsafe(f"{name} to GitHub with flags: only plain GET reads are allowed")
        if items and items[0].isupper() and items.pop(0) != "GET":
            raise Unsafe(f"{name} to GitHub: only GET is allowed")
        for item in items[1:]:
            header, sep, _ = item.partition(":")
            if not sep or "=" in header or header.lower() not in HEADERS_OK:
                raise Unsafe(f"{name} request item {item!r} would send a body or a method")
    else:
        raise Unsafe(f"{name} to GitHub is not allowed; use gh")


def _flags_read_only(name: str, args: list[Word], value_flags: dict[str, str],
                     bool_flags: set[str], short_bool: set[str]) -> None:
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word is None:
            raise Unsafe(f"{name} to GitHub with arguments computed at run time")
        flag, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        if flag in value_flags:
            value = attached if eq else (args[i] if i < len(args) else None)
            i += 0 if eq else 1
            if value is None:
                raise Unsafe(f"{name} {flag} needs a literal value")
            if value_flags[flag] == "header" and value.split(":", 1)[0].strip().lower() not in HEADERS_OK:
                raise Unsafe(f"{name} header {value.split(':', 1)[0]!r} is not allowed to GitHub")
        elif word in bool_flags or (word.startswith("-") and not word.startswith("--") and len(word) > 1
                                    and set(word[1:]) <= short_bool):
            continue
        elif word.startswith("-") and word != "-":
            raise Unsafe(f"{name} {flag} to GitHub: only plain GET reads are allowed")


def _embedded(cmd: SimpleCommand, depth: int, strict: bool) -> None:
    """Arguments that are command lines (`su -c 'g''h …'`, `git -c alias.x='!gh …'`, `trap`) are
    read as scripts; one that runs gh is refused. `strict`: one the grammar cannot read is too."""
    if depth >= MAX_DEPTH:
        raise Unsafe("shell commands nested too deeply")
    for word in cmd.words[1:]:
        if word is None or not (any(c.isspace() for c in word) or "!" in word):
            continue
        for script in {word, word.split("!", 1)[-1], word.split("=", 1)[-1]}:
            try:
                inner = reaches_github(simple_commands(script), depth + 1)
            except Unsafe:
                if strict:
                    raise
                continue
            if inner:
                raise Unsafe(f"run one plain gh command per call (not inside {cmd.name})")


def _mentions(cmd: SimpleCommand, depth: int) -> None:
    """A program we do not know may run its arguments (`git -c alias.x=!gh …`, `make`): a word
    that is a gh command line or names GitHub's API hosts is refused there."""
    if cmd.name not in DATA_ONLY:
        _embedded(cmd, depth, strict=cmd.name in {"trap"})
    texts = [w for w in cmd.words[1:] if w is not None] + ([cmd.stdin] if cmd.stdin else [])
    for text in texts:
        if GH_MENTION.search(text) or re.search(r"(?i)(api|uploads)\.github\.com", text):
            if cmd.name in DATA_ONLY and not cmd.writes_file:
                continue
            raise Unsafe(f"{cmd.name} is given a gh command or a GitHub API address the hook cannot follow")


DATA_ONLY = {"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "jq", "yq", "head", "tail",
             "wc", "sort", "uniq", "cut", "tr", "less", "more", "test", "[", "true", "false", "ls"}
