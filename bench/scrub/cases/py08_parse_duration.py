"""Reproduce: parse_duration rejects durations written with a space, as the config file does."""
import os
import sys
import configparser
import logging
import textwrap
from typing import Dict, List

import minilib

logging.basicConfig(level=logging.WARNING)
logger = logging.getLogger(__name__)

CONFIG_TEXT = textwrap.dedent("""
    [server]
    host = localhost
    port = 8080
    read_timeout = 30s
    write_timeout = 45s

    [jobs]
    cleanup_every = 5m
    report_every = 1h
    retry_delay = 1 day

    [cache]
    ttl = 10m
    size = 1024
""")

DURATION_KEYS = {"read_timeout", "write_timeout", "cleanup_every", "report_every", "retry_delay", "ttl"}


class Settings:
    def __init__(self, parser: configparser.ConfigParser):
        self.parser = parser
        self.durations: Dict[str, float] = {}
        self.plain: Dict[str, str] = {}

    def load(self):
        for section in self.parser.sections():
            for key, value in self.parser.items(section):
                if key in DURATION_KEYS:
                    self.durations[f"{section}.{key}"] = minilib.parse_duration(value)
                else:
                    self.plain[f"{section}.{key}"] = value
        return self

    def summary(self) -> List[str]:
        lines = []
        for key in sorted(self.durations):
            lines.append(f"{key} = {self.durations[key]:.3f}s")
        for key in sorted(self.plain):
            lines.append(f"{key} = {self.plain[key]}")
        return lines


def read_config(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read_string(text)
    return parser


def apply_env_overrides(parser: configparser.ConfigParser) -> None:
    for key, value in os.environ.items():
        if key.startswith("APP_") and "__" in key:
            section, option = key[4:].lower().split("__", 1)
            if parser.has_section(section):
                parser.set(section, option, value)


def check_port(parser: configparser.ConfigParser) -> int:
    port = parser.getint("server", "port")
    if not 0 < port < 65536:
        raise ValueError("bad port")
    return port


def main() -> int:
    environment_report()
    parser = read_config(CONFIG_TEXT)
    apply_env_overrides(parser)
    port = check_port(parser)
    logger.info("port %d", port)
    settings = Settings(parser).load()
    for line in settings.summary():
        print(line)
    return 0



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
    sys.exit(main())
