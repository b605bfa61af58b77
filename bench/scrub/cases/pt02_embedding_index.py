"""Reproduce: tiny language model fails with an index error once the tokenizer adds special tokens."""
import sys
import math
import random
import string
import logging
from collections import Counter

import torch
import torch.nn as nn

log = logging.getLogger(__name__)
torch.manual_seed(0)
random.seed(0)

CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a stitch in time saves nine",
    "all that glitters is not gold",
    "to be or not to be that is the question",
]


class Tokenizer:
    def __init__(self, texts, extra_special=("<bos>", "<eos>", "<pad>")):
        counts = Counter(word for text in texts for word in text.split())
        self.vocab = {word: i for i, (word, _) in enumerate(counts.most_common())}
        self.base_size = len(self.vocab)
        for token in extra_special:
            self.vocab[token] = len(self.vocab)

    def encode(self, text):
        ids = [self.vocab["<bos>"]]
        ids += [self.vocab.get(word, 0) for word in text.split()]
        ids.append(self.vocab["<eos>"])
        return ids

    def pad(self, batch):
        longest = max(len(ids) for ids in batch)
        return [ids + [self.vocab["<pad>"]] * (longest - len(ids)) for ids in batch]


class PositionalEncoding(nn.Module):
    def __init__(self, dim, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        pe = torch.zeros(max_len, dim)
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim=32, heads=4, layers=1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.pos = PositionalEncoding(dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, ids):
        h = self.pos(self.embed(ids))
        h = self.encoder(h)
        return self.out(h)


def batches(tokenizer, texts, size=2):
    shuffled = texts[:]
    random.shuffle(shuffled)
    for start in range(0, len(shuffled), size):
        chunk = shuffled[start:start + size]
        yield torch.tensor(tokenizer.pad([tokenizer.encode(t) for t in chunk]))


def perplexity(loss):
    return math.exp(min(loss, 20))


def main():
    tokenizer = Tokenizer(CORPUS)
    # the model is sized from the base vocabulary, before special tokens were added
    model = TinyLM(tokenizer.base_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    print("vocab", len(tokenizer.vocab), "letters", len(string.ascii_lowercase))
    for epoch in range(2):
        for ids in batches(tokenizer, CORPUS):
            logits = model(ids[:, :-1])
            loss = loss_fn(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("epoch", epoch, "ppl", round(perplexity(loss.item()), 2))


if __name__ == "__main__":
    main()
    sys.exit(0)
