"""Reproduce: tokenize() fails on a command line with an apostrophe inside a word."""
import os
import sys
import shlex
import string
import logging
import unicodedata

from minilib import tokenize

LOG = logging.getLogger("tok")
VERBOSE = os.environ.get("VERBOSE") == "1"

SAMPLES = [
    "run --name alpha --size 3",
    "copy 'my file.txt' backup/",
    'echo "hello world" > out.txt',
    "grep -r pattern src",
    "say don't stop",
    "list --all",
]


def normalize(text):
    text = unicodedata.normalize("NFC", text)
    return text.replace("\t", " ").strip()


def strip_comments(text):
    if "#" in text:
        text = text.split("#", 1)[0]
    return text


def looks_printable(text):
    return all(ch in string.printable for ch in text)


class Command:
    def __init__(self, raw):
        self.raw = raw
        self.clean = strip_comments(normalize(raw))
        self.tokens = None

    def parse(self):
        self.tokens = tokenize(self.clean)
        return self.tokens

    def name(self):
        return self.tokens[0] if self.tokens else None

    def arguments(self):
        return self.tokens[1:] if self.tokens else []


class Shell:
    def __init__(self):
        self.history = []
        self.errors = 0

    def feed(self, line):
        command = Command(line)
        if not looks_printable(command.clean):
            self.errors += 1
            return None
        command.parse()
        self.history.append(command)
        return command

    def compare_with_shlex(self, command):
        try:
            reference = shlex.split(command.clean)
        except ValueError:
            reference = None
        return reference == command.tokens


def report(shell):
    for command in shell.history:
        same = shell.compare_with_shlex(command)
        if VERBOSE:
            print(command.name(), command.arguments(), "same" if same else "differs")
    print(len(shell.history), "commands parsed,", shell.errors, "errors")


def main():
    environment_report()
    shell = Shell()
    for line in SAMPLES:
        LOG.debug("feeding %r", line)
        shell.feed(line)
    report(shell)



def environment_report():
    import platform
    details = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "machine": platform.machine(),
    }
    for key, value in sorted(details.items()):
        print(f"{key:>16}: {value}")
    flags = []
    if sys.flags.optimize:
        flags.append("optimize")
    if sys.flags.dev_mode:
        flags.append("dev")
    print("flags:", ", ".join(flags) or "none")
    return details


if __name__ == "__main__":
    main()
    sys.exit(0)
