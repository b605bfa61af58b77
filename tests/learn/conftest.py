"""A small labelled corpus we write ourselves: four topics with distinct vocabulary."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from issuetriage.judges.learned.corpus import Corpus, load_corpus
from issuetriage.judges.learned.train import TrainConfig
from issuetriage.policy import Policy

# topic → (labels maintainers applied, title words, body sentences)
TOPICS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "compile": (["oncall: pt2", "module: inductor", "triaged"],
                ["torch.compile fails on", "inductor codegen error for", "compiled model crashes with"],
                ["Calling torch.compile(model) with the inductor backend raises "
                 "torch._inductor.exc.InductorError during lowering.",
                 "The generated triton kernel for the fused op does not compile."]),
    "distributed": (["oncall: distributed"],
                    ["all_reduce hangs with", "init_process_group times out on", "DDP desync for"],
                    ["Running torchrun with two ranks, dist.all_reduce on the process group never "
                     "returns and the NCCL watchdog fires.",
                     "torch.distributed.init_process_group(backend='nccl') blocks forever."]),
    "cuda": (["module: cuda", "triaged", "high priority"],
             ["CUDA out of memory in", "cudaErrorIllegalAddress from", "wrong result on cuda for"],
             ["On an NVIDIA GPU the cuda kernel launch returns cudaErrorIllegalAddress; the cuBLAS "
              "handle is invalid afterwards.",
              "torch.cuda.synchronize() reports an illegal memory access in the CUDA stream."]),
    "autograd": (["module: autograd"],
                 ["backward gives wrong gradient for", "grad is None after", "autograd.Function fails for"],
                 ["loss.backward() leaves x.grad as None although requires_grad=True; the autograd "
                  "graph seems detached.",
                  "torch.autograd.grad returns a gradient with the wrong sign for this custom "
                  "autograd.Function."]),
}
OPS = ["conv2d", "matmul", "layer_norm", "softmax", "embedding", "scatter_add", "cumsum", "topk"]


def corpus_records(per_topic: int = 14, seed: int = 3) -> list[dict]:
    """Deterministic synthetic issues; `labels` are the final labels maintainers applied."""
    rng = random.Random(seed)
    records, number = [], 100
    for _topic, (labels, titles, bodies) in TOPICS.items():
        for _ in range(per_topic):
            op = rng.choice(OPS)
            body = " ".join(rng.sample(bodies, len(bodies))) + f"\n\nThe op is `torch.{op}`."
            records.append({"number": number, "title": f"{rng.choice(titles)} {op}", "body": body,
                            "labels": list(labels), "state": rng.choice(["open", "closed"]),
                            "author": f"user{number % 7}", "created": "2025-01-02",
                            "repo": "pytorch/pytorch", "url": f"https://example.invalid/{number}"})
            number += 1
    rng.shuffle(records)
    return records


def write_jsonl(path: Path, records: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def corpus_path(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", corpus_records())


@pytest.fixture()
def corpus(corpus_path: Path, policy: Policy) -> Corpus:
    return load_corpus(corpus_path, policy)


# Small data: fewer inner folds, and every label may set its own threshold.
SMALL = TrainConfig(inner_folds=3, own_threshold_min=5, min_hits=2)
