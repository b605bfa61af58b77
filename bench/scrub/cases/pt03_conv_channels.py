"""Reproduce: CNN fails on RGBA images from the dataset (expects 3 channels)."""
import os
import sys
import time
import random
import logging
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

logging.basicConfig(level=logging.ERROR)
LOG = logging.getLogger("cnn")


@dataclass
class HParams:
    image_size: int = 32
    channels: int = 3
    classes: int = 10
    batch_size: int = 4
    lr: float = 0.01
    use_alpha: bool = True


class SyntheticImages(Dataset):
    def __init__(self, n, hp):
        self.n = n
        self.hp = hp
        self.channels = 4 if hp.use_alpha else 3

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        image = torch.rand(self.channels, self.hp.image_size, self.hp.image_size, generator=g)
        label = index % self.hp.classes
        return image, label


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SmallCNN(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.stem = ConvBlock(hp.channels, 16)
        self.block1 = ConvBlock(16, 32)
        self.block2 = ConvBlock(32, 64)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, hp.classes)

    def forward(self, x):
        x = self.stem(x)
        x = F.max_pool2d(self.block1(x), 2)
        x = F.max_pool2d(self.block2(x), 2)
        x = self.pool(x).flatten(1)
        return self.fc(x)


def accuracy(logits, labels):
    return (logits.argmax(dim=1) == labels).float().mean().item()


def train(model, loader, hp, steps=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=hp.lr, momentum=0.9)
    model.train()
    for step, (images, labels) in enumerate(loader):
        if step >= steps:
            break
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        LOG.info("step %d loss %.3f acc %.3f", step, loss.item(), accuracy(logits, labels))


def main():
    torch.manual_seed(0)
    random.seed(0)
    hp = HParams()
    data = SyntheticImages(32, hp)
    loader = DataLoader(data, batch_size=hp.batch_size, shuffle=False)
    model = SmallCNN(hp)
    print("parameters", sum(p.numel() for p in model.parameters()))
    start = time.time()
    train(model, loader, hp)
    print("done in", round(time.time() - start, 2), "s")


if __name__ == "__main__":
    main()
