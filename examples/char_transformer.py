"""Train a character-level Transformer language model on Genesis and Exodus (King James
Version, public domain, shipped in examples/data/), then sample text from it.

    pip install ".[examples]" && python examples/char_transformer.py [--epochs 2] [--device cpu]

A decoder-only model: token and position embeddings, an nn.TransformerEncoder whose
self-attention is made causal by the square subsequent mask, and a linear head over the
characters. Plain PyTorch code apart from `import tensorlib as torch`.
"""
import math
import os
import time

import numpy as np

import tensorlib as torch
from tensorlib import nn
from tensorlib.utils.data import DataLoader, Dataset

from common import best_device, parser, require

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "kjv_genesis_exodus.txt")


class CharWindows(Dataset):
    """Non-overlapping windows of `block` characters; the target is the window shifted by one."""

    def __init__(self, codes, block):
        self.codes, self.block = codes, block

    def __len__(self):
        return (len(self.codes) - 1) // self.block

    def __getitem__(self, i):
        start = i * self.block
        chunk = self.codes[start:start + self.block + 1]
        return torch.from_numpy(chunk[:-1]), torch.from_numpy(chunk[1:])


class CharTransformer(nn.Module):
    def __init__(self, vocab, block, d_model=64, heads=4, layers=2, dropout=0.0):
        super().__init__()
        self.block = block
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           dropout=dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx):
        seq = idx.shape[1]
        positions = torch.arange(seq, device=idx.device)
        x = self.tokens(idx) + self.positions(positions)
        mask = nn.Transformer.generate_square_subsequent_mask(seq, device=idx.device)
        return self.head(self.norm(self.encoder(x, mask=mask, is_causal=True)))


def evaluate(model, loader, device, max_batches=20):
    model.eval()
    total, seen = 0.0, 0
    with torch.no_grad():
        for step, (x, y) in enumerate(loader):
            if step >= max_batches:
                break
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total += nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 y.reshape(-1)).item()
            seen += 1
    return total / max(seen, 1)


def sample(model, start, chars, length, device, temperature=0.8):
    """Extend `start` by `length` characters drawn one at a time from the model."""
    model.eval()
    index = {c: i for i, c in enumerate(chars)}
    idx = torch.tensor([[index[c] for c in start]], dtype=torch.int64).to(device)
    with torch.no_grad():
        for _ in range(length):
            logits = model(idx[:, -model.block:])[:, -1, :] / temperature
            nxt = torch.multinomial(nn.functional.softmax(logits, dim=-1), 1)
            idx = torch.cat([idx, nxt], dim=1)
    return "".join(chars[i] for i in idx[0].cpu().numpy())


def main(argv=None):
    p = parser(__doc__.splitlines()[0], epochs=2)
    p.add_argument("--block", type=int, default=64, help="context length in characters")
    p.add_argument("--sample-length", type=int, default=300, help="characters to sample")
    args = p.parse_args(argv)
    tqdm = require("tqdm", "char_transformer.py").tqdm
    device = args.device or best_device()
    torch.manual_seed(args.seed)

    with open(TEXT, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    codes = np.fromiter((lookup[c] for c in text), dtype=np.int64, count=len(text))
    split = int(0.9 * len(codes))
    train = DataLoader(CharWindows(codes[:split], args.block), batch_size=32, shuffle=True,
                       drop_last=True, generator=torch.Generator().manual_seed(args.seed))
    val = DataLoader(CharWindows(codes[split:], args.block), batch_size=32)
    model = CharTransformer(len(chars), args.block).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
    steps = len(train) if args.max_batches is None else min(args.max_batches, len(train))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * steps)
    print(f"text: {len(text)} characters, {len(chars)} distinct; device {device}; "
          f"{sum(p.numel() for p in model.parameters())} parameters")

    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        bar = tqdm(train, total=steps, desc=f"epoch {epoch}/{args.epochs}", leave=False)
        for step, (x, y) in enumerate(bar):
            if step >= steps:
                break
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
            bar.set_postfix(loss=f"{loss.item():.3f}")
        bar.close()
        val_loss = evaluate(model, val, device, max_batches=min(20, args.max_batches or 20))
        tqdm.write(f"epoch {epoch}: train loss {total / steps:.3f}, validation loss "
                   f"{val_loss:.3f} ({val_loss / math.log(2):.2f} bits per character)")
    elapsed = time.perf_counter() - start

    print("sample:")
    print(sample(model, "And God said", chars, args.sample_length, device))
    print(f"trained {args.epochs} epochs in {elapsed:.1f} s on {device}; "
          f"validation loss {val_loss:.3f}")


if __name__ == "__main__":
    main()
