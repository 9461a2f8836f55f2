"""The model zoo compiled and traced in the tests: an MLP, the LeNet CNN, a Transformer
encoder layer and an LSTM classifier, each with an input maker."""
import tensorlib as tl
import tensorlib.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(),
                                 nn.Linear(16, 5))

    def forward(self, x):
        return self.net(x)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 4 * 4, 32), nn.ReLU(),
                                        nn.Linear(32, 5))

    def forward(self, x):
        return self.classifier(self.features(x))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                                dropout=0.0, batch_first=True)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, batch_first=True)
        self.head = nn.Linear(12, 5)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


ZOO = {
    "mlp": (MLP, lambda g: tl.randn(16, 20, generator=g)),
    "lenet": (LeNet, lambda g: tl.randn(4, 1, 28, 28, generator=g)),
    "encoder": (Encoder, lambda g: tl.randn(4, 6, 16, generator=g)),
    "lstm": (LSTMClassifier, lambda g: tl.randn(4, 7, 8, generator=g)),
}


def make(name, device, seed=0):
    """(model, input, targets) on device, the same for every call with this seed."""
    cls, inputs = ZOO[name]
    tl.manual_seed(seed)
    model = cls().to(device)
    g = tl.Generator().manual_seed(seed + 1)
    x = inputs(g).to(device)
    y = tl.randint(0, 5, (x.shape[0],), generator=g).to(device)
    return model, x, y
