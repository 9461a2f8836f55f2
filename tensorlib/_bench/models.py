"""The model workloads: the same code run with tensorlib and with PyTorch (each in its own
process, see cli.py): an MLP, a small CNN and a Transformer encoder layer, each as an
inference forward and as a training step (forward, backward, optimizer step), and the
autograd overhead of a chain of tiny ops.

In one process PyTorch's spinning OpenMP threads took the cores tensorlib's BLAS needed (an
MLP step went from 3.2 to 12 ms), hence one process per library."""
import math

import numpy as np

from tensorlib._bench.registry import register_suite

__all__ = ["ModelWorkload", "workloads"]


def _mlp(lib, quick):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    batch = 32 if quick else 128
    return (model, lib.randn(batch, 784), lib.randint(0, 10, (batch,)),
            nn.functional.cross_entropy,
            lambda params: lib.optim.SGD(params, lr=0.01, momentum=0.9))


def _cnn(lib, quick):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 5 * 5, 10))
    batch = 4 if quick else 64
    return (model, lib.randn(batch, 1, 28, 28), lib.randint(0, 10, (batch,)),
            nn.functional.cross_entropy, lambda params: lib.optim.Adam(params, lr=1e-3))


def _transformer(lib, quick):
    d, heads, ff, seq, batch = (64, 4, 256, 16, 4) if quick else (256, 4, 1024, 64, 16)
    model = lib.nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, dropout=0.0,
                                           batch_first=True)
    return (model, lib.randn(batch, seq, d), lib.randn(batch, seq, d),
            lib.nn.functional.mse_loss, lambda params: lib.optim.Adam(params, lr=1e-4))


class ModelWorkload:
    """A model's inference forward (`train=False`, under no_grad in eval mode) or training
    step (zero_grad, loss, backward, optimizer step)."""

    kind, mode, libraries, unit = "model", "eager", ("tensorlib", "torch"), None

    def __init__(self, name, family, description, build, train, quick):
        self.name, self.family, self.description = name, family, description
        self._build, self.train, self.quick = build, train, quick

    def matches(self, name):
        return name in (self.name, self.family, self.kind)

    def throughput(self, seconds):
        return None

    def prepare(self, library, module, device):
        module.manual_seed(0)
        model, x, y, loss_fn, make_optimizer = self._build(module, self.quick)
        model, x, y = model.to(device), x.to(device), y.to(device)
        if self.train:
            model.train()
            optimizer = make_optimizer(model.parameters())

            def step():
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                return loss
        else:
            model.eval()

            def step():
                with module.no_grad():
                    return model(x)

        def check():
            out = step()
            values = out.detach().cpu().numpy()
            return None if np.isfinite(values).all() else "non-finite output"
        return step, check


class AutogradChain:
    """Per-op cost of recording and running backward through 100 ops on 4 elements."""

    name = family = "autograd_chain"
    kind, mode, libraries, unit = "autograd", "eager", ("tensorlib", "torch"), None
    description = "100 tiny ops (4 elements) forward+backward, time per op"
    per_step = 100         # ops per step: the figure is time per op

    def matches(self, name):
        return name in (self.name, self.kind)

    def throughput(self, seconds):
        return None

    def prepare(self, library, module, device):
        x = module.ones(4).to(device).requires_grad_()
        w = module.full((4,), 0.5).to(device).requires_grad_()

        def step():
            x.grad = w.grad = None
            y = x
            for _ in range(self.per_step // 4):
                y = y * 1.01 + 0.1
                y = y * w - 0.05
            y.sum().backward()
            return x.grad

        def check():
            got = step().cpu().numpy()
            return None if all(math.isfinite(v) for v in got) else "non-finite gradient"
        return step, check


@register_suite
def workloads(quick=False):
    """The model workloads; `quick` keeps the names with smaller batches (and a smaller
    Transformer layer)."""
    specs = [("mlp", "MLP 784-512-256-10, batch {}".format(32 if quick else 128), _mlp,
              "SGD momentum"),
             ("cnn", "CNN 2x(conv-relu-pool) 1x28x28, batch {}".format(4 if quick else 64),
              _cnn, "Adam"),
             ("transformer", "Transformer encoder layer " + (
                 "d=64 h=4 seq=16 batch=4" if quick else "d=256 h=4 seq=64 batch=16"),
              _transformer, "Adam")]
    out = []
    for family, what, build, optimizer in specs:
        for train in (False, True):
            w = ModelWorkload(f"{family}_{'train' if train else 'fwd'}", family,
                              f"{what}: " + (f"train step, {optimizer}" if train
                                             else "inference forward"), build, train, quick)
            out.append(w)
    out.append(AutogradChain())
    return out
