"""Which store a `--store` / ISSUETRIAGE_STORE value means, and bad ones refused in one line
(exit 2), never with a password in the message. None of these needs a server."""

import re
import subprocess
import sys

import pytest

from builders import run_cli
from issuetriage.errors import StoreError
from issuetriage.store.sqlite import Store


@pytest.mark.parametrize("url,reason", [
    ("postgresql://app:s3cret@127.0.0.1:1/triage", "cannot connect (connection failed: .* Connection refused"),
    ("postgresql://app:s3cret@127.0.0.1:notaport/triage", "cannot connect (.*port"),
    ("postgresql://app:s3cret@[::1/triage", "cannot connect (.*IPv6"),
    ("postgresql://127.0.0.1/triage?sslmode=sometimes&password=s3cret", "cannot connect (.*sslmode"),
    ("mysql://app:s3cret@127.0.0.1/triage", "not a store; give a SQLite file or a postgresql:// URL"),
])
def test_an_unreachable_or_malformed_store_url_is_one_line_and_exit_2(capsys, monkeypatch, url, reason):
    for args in (("audit", "--store", url), ("run",)):
        monkeypatch.setenv("ISSUETRIAGE_STORE", url)
        code, out, err = run_cli(capsys, *args)
        assert code == 2 and out == ""
        [line] = err.splitlines()
        assert line.startswith("error: ") and "s3cret" not in line
        assert re.search(reason.replace("(", r"\("), line), line


def test_the_password_never_reaches_the_stores_name():
    with pytest.raises(StoreError) as failure:
        Store("postgresql://app:s3cret@127.0.0.1:1/triage")
    assert str(failure.value).startswith("postgresql://app@127.0.0.1:1/triage: cannot connect")


def test_a_postgresql_url_survives_the_option_parser(capsys):
    """A Path would fold `postgresql://host` into `postgresql:/host`: the URL reaches the store whole."""
    code, _, err = run_cli(capsys, "audit", "--store", "postgresql://127.0.0.1:1/triage")
    assert code == 2 and "error: postgresql://127.0.0.1:1/triage: cannot connect" in err


def test_the_postgresql_driver_is_loaded_only_for_a_postgresql_store(tmp_path):
    script = ("import sys; from issuetriage.store.sqlite import Store; from issuetriage.cli import app; "
              f"Store({str(tmp_path / 's.db')!r}).close(); print('psycopg' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
