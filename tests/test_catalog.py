"""The shipped PyTorch label catalog: complete, our own words, and signals that fire as meant."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest

from issuetriage.evidence.matcher import Matcher
from issuetriage.evidence.signals import extract_signals, normalize_keyword
from issuetriage.models import Issue
from issuetriage.policy import load_profile

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "pytorch-triage"
POLICY = load_profile("pytorch")
LABELS = POLICY.labels


def _reference_descriptions() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(REFERENCE.glob("*labels.json")):
        for label in json.loads(path.read_text(encoding="utf-8"))["labels"]:
            if label.get("description"):
                found.setdefault(label["name"], label["description"])
    return found


def _squash(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_catalog_loads_with_every_label_described() -> None:
    assert len(LABELS) >= 290
    assert {"bot-triaged", "bot-triage-blocked", "triaged", "triage review", "release triage"} <= set(LABELS)
    undescribed = [name for name, spec in LABELS.items() if len(spec.description.split()) < 3]
    assert undescribed == []


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference skill files not present")
def test_descriptions_are_ours_not_the_reference_text() -> None:
    reference = _reference_descriptions()
    assert reference, "the reference catalogs should have descriptions"
    for name, theirs in reference.items():
        ours = LABELS[name].description if name in LABELS else ""
        assert _squash(ours) != _squash(theirs), name
        ratio = difflib.SequenceMatcher(None, _squash(ours), _squash(theirs)).ratio()
        assert ratio < 0.75, f"{name}: description too close to the reference ({ratio:.2f})"


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference skill files not present")
def test_catalog_covers_every_reference_label() -> None:
    assert set(_reference_descriptions()) <= set(LABELS)
    names = {label["name"] for path in REFERENCE.glob("*labels.json")
             for label in json.loads(path.read_text(encoding="utf-8"))["labels"]}
    assert names <= set(LABELS)


def test_every_keyword_normalizes_and_none_repeats_within_a_label() -> None:
    for name, spec in LABELS.items():
        norms = [normalize_keyword(kw) for kw in (*spec.keywords, *spec.title_keywords)]
        assert all(norms), f"{name}: a keyword has no word characters"
        assert len(norms) == len(set(norms)), f"{name}: two keywords match the same words"


def test_process_labels_have_no_signals() -> None:
    for name in POLICY.meta.process_labels:
        if name in LABELS:
            spec = LABELS[name]
            assert not (spec.keywords or spec.patterns or spec.title_keywords), name


def test_labels_the_profile_refers_to_exist() -> None:
    wanted = {q.label for q in POLICY.queues.redirect} | set(POLICY.rules.commonly_missed)
    assert POLICY.queues.pt2 is not None
    wanted |= {POLICY.queues.pt2.label, POLICY.queues.pt2.cpu_label, POLICY.queues.pt2.fallback_module}
    assert wanted <= set(LABELS)
    assert {"module: crash", "module: windows", "module: docs", "has workaround"} <= wanted


@pytest.mark.parametrize("name", [
    "module: nn", "module: rnn", "module: cuda", "module: cudnn", "module: mps", "oncall: mobile",
    "module: onnx", "oncall: export", "module: binaries", "module: build", "module: sdpa",
    "module: flex attention", "module: dataloader", "module: data", "module: determinism",
    "module: numerical-reproducibility", "oncall: pt2", "module: dynamo", "module: inductor",
])
def test_confusable_labels_say_when_and_when_not(name: str) -> None:
    assert LABELS[name].when and LABELS[name].when_not


MATCHER = Matcher({name: (spec.keywords, spec.patterns) for name, spec in LABELS.items()})


def _hits(title: str, body: str) -> set[str]:
    issue = Issue(repo="pytorch/pytorch", number=1, title=title, body=body)
    return set(MATCHER.hits(extract_signals(issue)))


@pytest.mark.parametrize(("title", "body", "expected", "not_expected"), [
    ("GRU ignores batch_first when given a PackedSequence",
     "I build `torch.nn.utils.rnn.pack_padded_sequence(x, lengths)` and feed it to nn.GRU.",
     {"module: rnn"}, {"module: nn"}),
    ("Wrong cumsum values on the mps device",
     "On my MacBook, `x.to('mps').cumsum(0)` differs from CPU; torch.backends.mps is available.",
     {"module: mps"}, {"oncall: mobile"}),
    ("torch.onnx.export fails for opset_version 18",
     "Exporting my model to ONNX with torch.onnx.export raises an error about an unsupported op.",
     {"module: onnx"}, {"oncall: export"}),
    ("torch.export.export loses a buffer",
     "After torch.export.export the ExportedProgram has no buffer named `running_stat`.",
     {"oncall: export"}, {"module: onnx"}),
    ("Nightly wheel for cu128 missing",
     "`pip install torch --index-url https://example.invalid/whl` says no matching distribution found.",
     {"module: binaries"}, {"module: build"}),
    ("Build from source fails with CMake Error",
     "Running `python setup.py develop` with USE_CUDA=0 stops at a CMake Error in caffe2.",
     {"module: build"}, {"module: binaries"}),
    ("Flash attention path chosen for a float32 input",
     "F.scaled_dot_product_attention under sdpa_kernel(SDPBackend.FLASH_ATTENTION) gives garbage.",
     {"module: sdpa"}, {"module: flex attention"}),
    ("Capturing a CUDA graph around an optimizer step fails",
     "torch.cuda.graph capture raises cudaErrorStreamCaptureUnsupported.",
     {"module: cuda graphs"}, set()),
    ("Process dies in backward",
     "The run ends with `Segmentation fault (core dumped)` after a few steps.",
     {"module: crash"}, set()),
])
def test_example_issues_hit_the_expected_labels(title: str, body: str, expected: set[str],
                                                not_expected: set[str]) -> None:
    hits = _hits(title, body)
    assert expected <= hits
    assert not (not_expected & hits)


ENVIRONMENT_REPORT = """Collecting environment information...
PyTorch version: 2.9.0+cu128
Is debug build: False
CUDA used to build PyTorch: 12.8
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Clang version: Could not collect
CMake version: version 3.30.2
Libc version: glibc-2.35

Python version: 3.12.7 | packaged by Anaconda, Inc. | (main, Oct  4 2024, 13:27:36) [GCC 11.2.0] (64-bit runtime)
Python platform: Linux-6.5.0-35-generic-x86_64-with-glibc2.35
Is CUDA available: True
CUDA runtime version: 12.8.61
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration: GPU 0: NVIDIA H100 80GB HBM3
Nvidia driver version: 570.86.10
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.9.7.0
HIP runtime version: N/A
MIOpen runtime version: N/A
Is XNNPACK available: True

CPU:
Architecture:                         x86_64
CPU op-mode(s):                       32-bit, 64-bit
Byte Order:                           Little Endian
Model name:                           Intel(R) Xeon(R) Platinum 8480+
Flags:                                fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc avx avx2 avx512f avx512bw amx_bf16 amx_tile amx_int8 arch_perfmon
NUMA node(s):                         2
Vulnerability Spectre v2:             Mitigation; Enhanced IBRS
Vulnerability Mds:                    Not affected

Versions of relevant libraries:
[pip3] mypy-extensions==1.0.0
[pip3] numpy==2.1.2
[pip3] nvidia-cublas-cu12==12.8.3.14
[pip3] nvidia-cuda-cupti-cu12==12.8.57
[pip3] nvidia-cuda-nvrtc-cu12==12.8.61
[pip3] nvidia-cuda-runtime-cu12==12.8.57
[pip3] nvidia-cudnn-cu12==9.7.1.26
[pip3] nvidia-cufft-cu12==11.3.3.41
[pip3] nvidia-curand-cu12==10.3.9.55
[pip3] nvidia-cusolver-cu12==11.7.2.55
[pip3] nvidia-cusparse-cu12==12.5.7.53
[pip3] nvidia-cusparselt-cu12==0.6.3
[pip3] nvidia-nccl-cu12==2.26.2
[pip3] nvidia-nvjitlink-cu12==12.8.61
[pip3] nvidia-nvtx-cu12==12.8.55
[pip3] onnx==1.17.0
[pip3] onnxruntime==1.20.1
[pip3] optree==0.13.0
[pip3] pytorch-triton==3.3.0
[pip3] torch==2.9.0
[pip3] torchaudio==2.9.0
[pip3] torchvision==0.24.0
[pip3] triton==3.3.0
[pip3] sympy==1.13.3
[conda] blas                      1.0                         mkl
[conda] mkl                       2023.1.0         h213fc3f_46344
[conda] mkl-service               2.4.0           py312h5eee18b_1
[conda] mkl_fft                   1.3.11          py312h5eee18b_0
[conda] intel-openmp              2023.1.0         hdb19cb5_46306
[conda] libjpeg-turbo             2.0.0                h9bf148f_0    pytorch
[conda] pytorch-cuda              12.8                 h7e8d8b3_6    pytorch
[conda] tbb                       2021.8.0             hdb19cb5_0
"""


def test_an_environment_report_alone_never_gives_a_label_two_pieces_of_evidence() -> None:
    issue = Issue(repo="pytorch/pytorch", number=1, title="Unexpected value", body=ENVIRONMENT_REPORT)
    hits = MATCHER.hits(extract_signals(issue))
    doubled = {label: [h.evidence for h in found] for label, found in hits.items()
               if len({normalize_keyword(h.evidence) for h in found}) > 1}
    assert doubled == {}


def test_incidental_repro_code_labels_nothing() -> None:
    body = """A plain script:

```python
import torch
x = torch.randn(4, 3).view(-1)
m = torch.nn.Linear(12, 2)
print(m(x).reshape(2, 1).numpy(), x.requires_grad)
```
"""
    noisy = {"module: tensor creation", "module: random", "module: viewing and reshaping",
             "module: nn", "module: numpy", "module: autograd"}
    assert not (noisy & _hits("Unexpected value", body))
