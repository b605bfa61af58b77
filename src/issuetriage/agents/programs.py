"""The programs a Bash command line may run: read-only ones, each with the arguments it may take.

Everything not named here is refused: interpreters and shells (`python3 -c`, `perl -e`, awk,
`make -f -`), wrappers that run another program (`env`, `xargs`, `find -exec`, `coproc`), the
builtins that evaluate their arguments (`[ -v`, `printf -v`, `hash -p`), anything that writes a
file or opens a connection, and any program given by a path (a copy of gh under another name).
Listed programs may not use the options that would run a program or write a file (`sort -o`,
`git -c`, sed's `e`), and no word may name a place that holds credentials. gh is read in
`gh_commands`, which knows its reads and the writes the guard checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from issuetriage.agents.shell import Command, Unsafe

Spec = dict[str, tuple[str, bool]]  # flag → (name, takes a value)


def options(flags: str = "", valued: str = "", long: Iterable[str] = (), long_valued: Iterable[str] = ()) -> Spec:
    """A table of the options a program may be given, short and long (any other one is refused)."""
    return {**{f"-{c}": (c, False) for c in flags}, **{f"-{c}": (c, True) for c in valued},
            **{name: (name, False) for name in long}, **{name: (name, True) for name in long_valued}}


def pflag(args: list[str], spec: dict[str, tuple[str, bool]], what: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Flags and positional arguments as spf13/pflag (gh's flag parser) reads them: `--f=v`,
    `--f v` (the next word whatever it is), `-fv`, `-f=v`, `-f v`, clustered booleans, `--`.
    GNU getopt_long reads a program's options the same way for what matters here (it also takes
    an unambiguous prefix of a long option: not being in `spec`, such a prefix is refused)."""
    flags: list[tuple[str, str]] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            positional += args[i:]
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name not in spec:
                raise Unsafe(f"{what}: unknown flag {name}")
            key, takes = spec[name]
            if takes and not eq:
                if i >= len(args):
                    raise Unsafe(f"{what}: {name} needs a value")
                value, i = args[i], i + 1
            elif not takes and eq:
                raise Unsafe(f"{what}: {name} takes no value")
            flags.append((key, value))
        elif word.startswith("-") and word != "-":
            j = 1
            while j < len(word):
                short = "-" + word[j]
                if short not in spec:
                    raise Unsafe(f"{what}: unknown flag {short}")
                key, takes = spec[short]
                if not takes:
                    flags.append((key, ""))
                    j += 1
                    continue
                value = word[j + 1:]
                value = value[1:] if value.startswith("=") else value
                if not value:
                    if i >= len(args):
                        raise Unsafe(f"{what}: {short} needs a value")
                    value, i = args[i], i + 1
                flags.append((key, value))
                break
        else:
            positional.append(word)
    return flags, positional


def operands(name: str, args: Sequence[str], spec: Spec, most: int | None = None) -> list[str]:
    """The operands of `args`; Unsafe for an option not in `spec`, or more than `most` operands."""
    found = pflag(list(args), spec, name)[1]
    if most is not None and len(found) > most:
        raise Unsafe(f"{name} with {len(found)} operands may write a file")
    return found


ANY = None  # none of the program's options runs a program or writes a file
SORT = options("bdfghiMnRrsuVz", "kStT", {
    "--ignore-leading-blanks", "--dictionary-order", "--ignore-case", "--general-numeric-sort",
    "--ignore-nonprinting", "--month-sort", "--human-numeric-sort", "--numeric-sort", "--random-sort",
    "--reverse", "--version-sort", "--stable", "--unique", "--zero-terminated"},
    {"--key", "--field-separator", "--buffer-size", "--sort", "--parallel"})
UNIQ = options("cdDiuz", "fsw", {"--count", "--repeated", "--unique", "--ignore-case", "--zero-terminated",
                                 "--all-repeated"}, {"--skip-fields", "--skip-chars", "--check-chars"})
JQ = options("rjcnsaSCMeRh", "", {
    "--raw-output", "--join-output", "--compact-output", "--null-input", "--slurp", "--ascii-output",
    "--sort-keys", "--color-output", "--monochrome-output", "--exit-status", "--raw-input", "--tab",
    "--seq", "--stream", "--unbuffered", "--args", "--jsonargs", "--help"}, {"--indent"})
SED = options("nEsuz", "", {"--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered",
                            "--null-data", "--posix"})
CD = options("LP")


def _jq(args: Sequence[str]) -> None:
    plain: list[str] = []
    i = 0
    while i < len(args):  # `--arg NAME VALUE` takes two words, which getopt cannot say
        if args[i] in {"--arg", "--argjson"}:
            i += 3
            continue
        plain.append(args[i])
        i += 1
    given = operands("jq", plain, JQ)
    if given:
        jq_filter_ok(given[0])


def jq_filter_ok(program: str) -> None:
    """A jq (or gh's gojq) filter may not read the environment (`env`, `$ENV`: the token) or
    load modules the hook cannot read."""
    word = ""
    for char in program + " ":
        if char.isalnum() or char == "_":
            word += char
            continue
        if word in {"env", "ENV", "import", "include", "input_filename"}:
            raise Unsafe(f"jq filters may not use {word!r} (it reads the environment or a module)")
        word = ""


def _sed(args: Sequence[str]) -> None:
    """Only printing lines by number: `sed -n '10,20p' FILE` (scripts can run commands: `e`)."""
    given = operands("sed", args, SED)
    script = given[0] if given else ""
    for part in script.split(";"):
        address = part.strip().removesuffix("p")
        ends = address.split(",")
        if not part.strip().endswith("p") or len(ends) > 2 or not all(
                end == "$" or (end and all(c in "0123456789" for c in end)) for end in ends):
            raise Unsafe("sed may only print lines by number (`sed -n '10,20p' FILE`)")


FIND_VALUED = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-type", "-xtype",
               "-maxdepth", "-mindepth", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
               "-newer", "-size", "-regex", "-iregex", "-regextype", "-user", "-group", "-perm",
               "-links", "-inum", "-samefile", "-printf"}
FIND_FLAGS = {"-print", "-print0", "-prune", "-empty", "-not", "!", "-a", "-o", "-and", "-or", "(",
              ")", "-depth", "-follow", "-readable", "-writable", "-executable", "-xdev", "-mount",
              "-quit", "-true", "-false", "-ls", "-nouser", "-nogroup", "-daystart", "-noleaf", "-H",
              "-L", "-P"}


def _find(args: Sequence[str]) -> None:
    """find's tests and `-print`; never `-exec`, `-ok`, `-delete` or `-fprint` (a file)."""
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word in FIND_VALUED:
            i += 1
        elif word.startswith("-") and word not in FIND_FLAGS:
            raise Unsafe(f"find {word}: not a test the hook knows to be read-only")


GIT_READS = {"status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "describe",
             "shortlog", "grep"}
GIT_GLOBAL = {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"}
# options of those commands that run a program or write a file; git takes any unambiguous
# prefix of a long option, so a prefix of one of these is refused too
GIT_DENIED = ("--output", "--ext-diff", "--textconv", "--show-signature", "--open-files-in-pager")


def _git(args: Sequence[str]) -> None:
    """git's read commands, with no global option that changes its configuration (`-c`, `-C`,
    `--git-dir`...) and none of the options that run a program or write a file."""
    i = 0
    while i < len(args) and args[i] in GIT_GLOBAL:
        i += 1
    if i == len(args) or args[i] not in GIT_READS:
        shown = args[i] if i < len(args) else ""
        raise Unsafe(f"git {shown}: only git {', '.join(sorted(GIT_READS))} (no -c, -C or aliases)")
    for word in args[i + 1:]:
        name = word.partition("=")[0]
        if word.startswith("-O") or (name.startswith("--") and len(name) > 3
                                     and any(denied.startswith(name) for denied in GIT_DENIED)):
            raise Unsafe(f"git {word}: runs a program or writes a file")


def _printf(args: Sequence[str]) -> None:
    if args and args[0].startswith("-") and args[0] != "--":
        raise Unsafe("printf -v assigns a variable (and evaluates array subscripts)")


RULES: dict[str, Callable[[Sequence[str]], object] | None] = {
    **dict.fromkeys(["cat", "tac", "head", "tail", "wc", "cut", "tr", "nl", "paste", "comm", "column",
                     "ls", "grep", "egrep", "fgrep", "diff", "cmp", "stat", "du", "df", "basename",
                     "dirname", "realpath", "readlink", "pwd", "echo", "true", "false", "which"], ANY),
    "sort": lambda args: operands("sort", args, SORT), "uniq": lambda args: operands("uniq", args, UNIQ, 1),
    "cd": lambda args: operands("cd", args, CD, 1), "jq": _jq, "sed": _sed, "find": _find, "git": _git,
    "printf": _printf,
}
SECRET_PARTS = {".git", ".config", ".ssh", ".gnupg", ".aws", ".docker", ".kube", ".netrc",
                ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".env", "hosts.yml", "environ",
                "proc", "secrets"}
SEPARATORS = "/=:@,"


def no_secrets(words: Sequence[str]) -> None:
    """No word may name a place that holds credentials (gh's hosts file, the checkout's git
    config with its token, /proc/*/environ...) or a device other than /dev/null."""
    for word in words:
        parts = [word]
        for sep in SEPARATORS:
            parts = [p for part in parts for p in part.split(sep)]
        hit = next((p for p in parts if p in SECRET_PARTS), None)
        if hit is None and "dev" in parts and word not in {"/dev/null", "/dev/stdin"}:
            hit = "dev"
        if hit is not None:
            raise Unsafe(f"{word!r} may hold credentials or be a device ({hit})")


def check(command: Command) -> None:
    """Unsafe unless `command` is a listed program given only the arguments it may take."""
    name, args = command.name, command.words[1:]
    if name not in RULES:
        raise Unsafe(f"{name!r} is not a read-only program the hook knows "
                     f"(allowed: gh's reads and checked writes, {', '.join(sorted(RULES))})")
    no_secrets(command.words + command.inputs)
    rule = RULES[name]
    if rule is not None:
        rule(args)
