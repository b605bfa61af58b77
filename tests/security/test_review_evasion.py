"""The safety review sees through the usual disguises (it is advisory: the sandbox is the
boundary), and stays quiet on temp-file writes and distributed launches."""

import pytest

from issuetriage.scrub.safety import review

EVASIONS = {
    "rebinding modules": [
        ("subprocess", "import subprocess\nrunner = subprocess\nrunner.run(['id'])"),
        ("subprocess", "import os\nsh = os.system\nsh('id')"),
        ("subprocess", "import os\nm, n = os, 1\nm.system('id')"),
        ("subprocess", "import os\ndef go(mod=os):\n    mod.system('id')\ngo()"),
        ("dynamic_code", "run = exec\nrun('print(1)')"),
    ],
    "__dict__ lookups": [
        ("subprocess", "import os\nos.__dict__['system']('id')"),
        ("subprocess", "import os\nos.__dict__.get('system')('id')"),
        ("dynamic_code", "import os\nname = 'system'\nos.__dict__[name]('id')"),
    ],
    "operator.attrgetter": [
        ("subprocess", "import operator, os\noperator.attrgetter('system')(os)('id')"),
        ("subprocess", "import operator, os\noperator.methodcaller('system', 'id')(os)"),
        ("dynamic_code", "import operator, os\nwhich = 'sys' + 'tem'\noperator.attrgetter(which)(os)('id')"),
    ],
    "network through urllib.parse (which itself is allowed)": [
        ("network", "import urllib.parse as up\nup.urlsplit('x')\nimport importlib\nup.__loader__"),
        ("network", "import urllib.parse\nu = urllib\nu.request.urlopen('http://h')"),
        ("network", "import urllib.parse as up\nup.__dict__['sys'].modules['socket']"),
        ("network", "import operator, urllib.parse\noperator.attrgetter('request')(urllib)"),
    ],
    "network modules reached without importing them": [
        ("network", "import sys\ns = sys.modules['socket'].socket()"),
        ("network", "import sys\nsys.modules['http.client'].HTTPConnection('h').request('GET', '/')"),
    ],
    "star imports": [
        ("dynamic_code", "from os import *\nsystem('id')"),
        ("dynamic_code", "from subprocess import *\nrun(['id'])"),
    ],
    "strings assembled at run time": [
        ("dynamic_code", "import os\nos.__getattribute__('sys' + 'tem')('id')"),
        ("dynamic_code", "import os\nobject.__getattribute__(os, ''.join(['sys', 'tem']))('id')"),
        ("dynamic_code", "import sys\nsys.modules['o' + 's'].system('id')"),
    ],
    "exec of decoded bytes": [
        ("dynamic_code", "import binascii\nrun = exec\nrun(binascii.a2b_hex('7072696e74283129'))"),
        ("obfuscation", "import base64\ncode = base64.urlsafe_b64decode('cHJpbnQoMSk=')"),
        ("dynamic_code", "import binascii\nprint.__self__.exec(binascii.a2b_hex('7072696e74283129'))"),
    ],
    "io.FileIO": [
        ("file_write", "import io\nio.FileIO('/etc/cron.d/x', 'w').write(b'* * * * * root id')"),
        ("file_write", "import codecs\ncodecs.open('/root/.bashrc', 'a').write('id')"),
        ("file_write", "from pathlib import Path\nPath('/etc/profile.d/x.sh').open('w').write('id')"),
    ],
    "metaclasses": [
        ("subprocess", "import os\nclass Run(type):\n    __call__ = os.system\nclass Cmd(metaclass=Run):\n"
                       "    pass\nCmd('id')"),
        ("subprocess", "import subprocess\nclass Shell(metaclass=subprocess.getoutput):\n    pass"),
        ("subprocess", "import os\nlist(map(os.system, ['id']))"),
    ],
    "sys.modules[...]": [
        ("subprocess", "import sys\nsys.modules['subprocess'].run(['id'])"),
        ("subprocess", "import sys\nsys.modules.get('os').system('id')"),
        ("dynamic_code", "import sys\nsys.modules['json'] = type(sys)('json')"),
    ],
}
CASES = [(family, rule, code) for family, cases in EVASIONS.items() for rule, code in cases]

BENIGN = {
    "temp files": [
        "import tempfile\nwith tempfile.NamedTemporaryFile('w', suffix='.py') as f:\n    f.write('x = 1')",
        "open('/tmp/repro_out.txt', 'w').write('scratch')",
        "import torch\ntorch.save({'w': 1}, '/tmp/ckpt.pt')",
        "import os, tempfile\nwith tempfile.TemporaryDirectory() as d:\n"
        "    open(os.path.join(d, 'a.txt'), 'w').write('x')",
        "import tempfile\nfrom pathlib import Path\nd = tempfile.mkdtemp()\n(Path(d) / 'a.txt').write_text('x')",
        "import tempfile\nd = tempfile.mkdtemp()\nopen(f'{d}/b.txt', 'w').write('x')",
    ],
    "distributed launches": [
        "import subprocess, sys\nsubprocess.run(['torchrun', '--nproc-per-node=2', 'train.py'], "
        "stdout=subprocess.PIPE, check=True)",
        "import subprocess, sys\nsubprocess.check_call([sys.executable, '-m', 'torch.distributed.run', "
        "'--nproc-per-node=2', 'train.py'])",
        "import torch.multiprocessing as mp\ndef work(rank):\n    pass\nif __name__ == '__main__':\n"
        "    mp.spawn(work, nprocs=2, join=True)",
        "import torch.multiprocessing as mp\nspawn = mp.spawn\ndef work(rank):\n    pass\nspawn(work, nprocs=2)",
    ],
    "ordinary code": [
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval()\nprint(model.__dict__.keys())",
        "import operator\nrows = [(1, 'b'), (0, 'a')]\nprint(sorted(rows, key=operator.itemgetter(0)))",
        "import sys\nprint('torch' in sys.modules)",
    ],
}
QUIET = [(family, code) for family, cases in BENIGN.items() for code in cases]


@pytest.mark.parametrize(("family", "rule", "code"), CASES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(CASES)])
def test_the_review_sees_through_an_evasion(family, rule, code):
    assert rule in {finding.rule for finding in review(code)}, (family, review(code))


@pytest.mark.parametrize(("family", "code"), QUIET, ids=[f"{f}-{i}" for i, (f, _) in enumerate(QUIET)])
def test_ordinary_code_stays_quiet(family, code):
    assert review(code) == []
