"""A library on the interpreter's sys.path through a .pth file or an editable finder is visible
in the sandbox, read-only; what is not on sys.path stays invisible."""

import subprocess
import sys

import pytest
from scrub_helpers import needs_sandbox

from issuetriage.scrub.model import Interpreter
from issuetriage.scrub.sandbox import library_folders, run_script

FINDER = '''import importlib.util, sys
MAPPING = {{"edlib": {edlib!r}}}


class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name in MAPPING:
            return importlib.util.spec_from_file_location(
                name, MAPPING[name] + "/__init__.py", submodule_search_locations=[MAPPING[name]])
        return None


def install():
    sys.meta_path.append(_Finder)
'''


@pytest.fixture
def dev_venv(tmp_path):
    """A venv with `devlib` added by a .pth line and `edlib` by a setuptools-style editable finder."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "devlib.py").write_text("ANSWER = 41\n")
    (site / "dev.pth").write_text(f"{checkout}\n")
    edlib = tmp_path / "edsrc" / "edlib"
    edlib.mkdir(parents=True)
    (edlib / "__init__.py").write_text("ANSWER = 1\n")
    (site / "__editable___edlib_1_0_finder.py").write_text(FINDER.format(edlib=str(edlib)))
    (site / "__editable__.edlib-1.0.pth").write_text("import __editable___edlib_1_0_finder; __editable___edlib_1_0_finder.install()\n")
    (tmp_path / "secret.txt").write_text("not for the repro")
    return Interpreter("dev", venv / "bin" / "python"), tmp_path


def test_the_bind_list_holds_pth_targets_and_editable_sources_only(dev_venv):
    interp, root = dev_venv
    folders = library_folders(interp.python)
    assert str(root / "checkout") in folders and str(root / "edsrc" / "edlib") in folders
    assert str(root) not in folders and "/" not in folders


@needs_sandbox
def test_pth_and_editable_libraries_import_in_the_sandbox_and_nothing_else_is_there(dev_venv):
    interp, root = dev_venv
    code = ("import devlib, edlib\nprint(devlib.ANSWER + edlib.ANSWER)\n"
            f"import os\nprint(os.path.exists({str(root / 'secret.txt')!r}))\n"
            f"open({str(root / 'checkout' / 'planted.py')!r}, 'w')\n")
    result = run_script(code, interp)
    assert result.stdout.split() == ["42", "False"], result.stderr[-500:]
    assert "Read-only file system" in result.stderr or "PermissionError" in result.stderr
    assert not (root / "checkout" / "planted.py").exists()
