"""Small models train end to end on every available device: a LeNet-style CNN and a 2-layer
Transformer encoder, with the same seed giving the same loss on every device."""
import pytest

import tensorlib as tl
from tensorlib import nn


def _blob_images(n, device):
    """28x28 images with a bright 6x6 blob in one of four quadrants; the label is the
    quadrant (a task a CNN learns in a few steps)."""
    tl.manual_seed(1)
    labels = tl.randint(0, 4, (n,))
    images = tl.randn(n, 1, 28, 28) * 0.3
    for i, q in enumerate(labels.tolist()):
        r, c = (q // 2) * 14 + 4, (q % 2) * 14 + 4
        images[i, 0, r:r + 6, c:c + 6] += 2.0
    return images.to(device), labels.to(device)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 4 * 4, 32), nn.ReLU(),
                                        nn.Linear(32, 4))

    def forward(self, x):
        return self.classifier(self.features(x))


def _train_lenet(device, steps=15):
    x, y = _blob_images(32, device)
    tl.manual_seed(0)
    model = LeNet().to(device)
    opt = tl.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_lenet_loss_falls(device):
    losses = _train_lenet(device)
    assert losses[-1] < 0.5 * losses[0], losses


def test_lenet_same_loss_on_every_device(device):
    if device == "cpu":
        pytest.skip("the reference run")
    reference = _train_lenet("cpu", steps=5)
    ours = _train_lenet(device, steps=5)
    for a, b in zip(reference, ours):
        assert abs(a - b) <= 1e-3 * max(1.0, abs(a)), (reference, ours)


def test_transformer_encoder_loss_falls(device):
    """Predict, at every position, the token at the mirrored position (needs attention)."""
    tl.manual_seed(0)
    vocab, seq, d = 8, 6, 32
    tokens = tl.randint(0, vocab, (32, seq)).to(device)
    target = tokens.flip(1)
    embed = nn.Embedding(vocab, d).to(device)
    position = nn.Parameter(tl.randn(1, seq, d, device=device) * 0.1)
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(d, 4, dim_feedforward=64, dropout=0.0, batch_first=True),
        num_layers=2).to(device)
    head = nn.Linear(d, vocab).to(device)
    params = [*embed.parameters(), position, *encoder.parameters(), *head.parameters()]
    opt = tl.optim.Adam(params, lr=3e-3)
    losses = []
    for _ in range(40):
        opt.zero_grad()
        logits = head(encoder(embed(tokens) + position))
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.6 * losses[0], losses
