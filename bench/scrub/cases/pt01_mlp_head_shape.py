"""Reproduce: classifier head fails after changing the hidden size (CPU, torch 2.x)."""
import os
import sys
import math
import time
import random
import argparse
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logging.basicConfig(level=logging.WARNING)
logger = logging.getLogger("repro")


def seed_everything(seed=0):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def get_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


class Config:
    def __init__(self, in_features=32, hidden=64, classes=5, dropout=0.1, lr=1e-3, epochs=2, batch=16):
        self.in_features = in_features
        self.hidden = hidden
        self.classes = classes
        self.dropout = dropout
        self.lr = lr
        self.epochs = epochs
        self.batch = batch


class ResidualBlock(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.norm(x)
        h = F.gelu(self.fc1(h))
        h = self.drop(self.fc2(h))
        return x + h


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.inp = nn.Linear(cfg.in_features, cfg.hidden)
        self.blocks = nn.ModuleList([ResidualBlock(cfg.hidden, cfg.dropout) for _ in range(2)])

    def forward(self, x):
        x = self.inp(x)
        for block in self.blocks:
            x = block(x)
        return x


class Classifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = Encoder(cfg)
        # head sized from an older config: 128 hidden units
        self.head = nn.Linear(128, cfg.classes)

    def forward(self, x):
        features = self.encoder(x)
        return self.head(features)


def make_loader(cfg, n=64):
    x = torch.randn(n, cfg.in_features)
    y = torch.randint(0, cfg.classes, (n,))
    return DataLoader(TensorDataset(x, y), batch_size=cfg.batch, shuffle=True)


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total = 0.0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        if step % 10 == 0:
            logger.info("step %d loss %.4f", step, loss.item())
    return total / max(1, len(loader))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args([])
    seed_everything(0)
    device = get_device()
    cfg = Config(epochs=args.epochs)
    model = Classifier(cfg).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    loader = make_loader(cfg)
    print("torch", torch.__version__, "device", device)
    start = time.time()
    for epoch in range(cfg.epochs):
        loss = train_one_epoch(model, loader, optimizer, device)
        print(f"epoch {epoch} loss {loss:.4f} ({time.time() - start:.1f}s)")


if __name__ == "__main__":
    main()
