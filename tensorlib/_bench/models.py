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


def _mlp_qdynamic(lib, quick):
    """The MLP with its Linear layers dynamically quantized to int8 (each library's
    quantize_dynamic), for inference."""
    model, *rest = _mlp(lib, quick)
    quantized = lib.ao.quantization.quantize_dynamic(model, {lib.nn.Linear}, dtype=lib.qint8)
    return (quantized, *rest)


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


class LSTMSequence:
    """Issue 16's recurrent workload (PyTorch's time-sequence-prediction example): LSTMCell x2
    + Linear stepped over a sequence in float64, forward and backward: small GEMMs and
    per-op overhead."""

    kind, mode, libraries, unit = "model", "eager", ("tensorlib", "torch"), None
    family = "lstm"

    def __init__(self, quick):
        self.steps, self.batch, self.hidden = (10, 8, 16) if quick else (100, 97, 51)
        self.name = "lstm_seq_fwd_bwd"
        self.description = (f"LSTMCell x2 + Linear, {self.steps} steps, batch {self.batch}, "
                            f"hidden {self.hidden}, float64: forward+backward")

    def matches(self, name):
        return name in (self.name, self.family, self.kind)

    def throughput(self, seconds):
        return None

    def _wrap(self, module, sequence):
        return sequence                 # eager; the compiled row compiles it

    def prepare(self, library, module, device):
        module.manual_seed(0)
        nn, h = module.nn, self.hidden
        cells = [nn.LSTMCell(1, h), nn.LSTMCell(h, h)]
        head = nn.Linear(h, 1)
        for m in (*cells, head):
            m.to(device).double()
        t = np.arange(self.steps + 1) / 20.0 + np.arange(self.batch)[:, None] / 7.0
        wave = module.from_numpy(np.sin(t)).to(device)
        x, y = wave[:, :-1], wave[:, 1:]
        params = [p for m in (*cells, head) for p in m.parameters()]

        def sequence(x):
            state = [(module.zeros(self.batch, h, dtype=module.float64, device=device),) * 2
                     for _ in cells]
            outputs = []
            for i in range(self.steps):
                inp = x[:, i:i + 1]
                for c, cell in enumerate(cells):
                    state[c] = cell(inp, state[c])
                    inp = state[c][0]
                outputs.append(head(inp))
            return module.cat(outputs, dim=1)
        run = self._wrap(module, sequence)

        def step():
            for p in params:
                p.grad = None
            loss = nn.functional.mse_loss(run(x), y)
            loss.backward()
            return loss

        def check():
            value = float(step().item())
            return None if math.isfinite(value) else "non-finite loss"
        return step, check


class Conv2dWorkload:
    """One conv2d layer (3x3, padding 1, bias), forward or forward+backward."""

    kind, mode, libraries, unit = "model", "eager", ("tensorlib", "torch"), None
    family = "conv2d"

    def __init__(self, cin, cout, size, batch, backward):
        self.cin, self.cout, self.size, self.batch, self.backward = (cin, cout, size, batch,
                                                                     backward)
        self.name = f"conv2d_{cin}to{cout}_{size}x{size}_{'fwd_bwd' if backward else 'fwd'}"
        self.description = (f"conv2d {cin}->{cout} 3x3 pad 1 on {batch}x{cin}x{size}x{size} "
                            f"float32: " + ("forward+backward" if backward else "forward"))

    def matches(self, name):
        return name in (self.name, self.family, self.kind)

    def throughput(self, seconds):
        return None

    def prepare(self, library, module, device):
        module.manual_seed(0)
        conv = module.nn.Conv2d(self.cin, self.cout, 3, padding=1).to(device)
        x = module.randn(self.batch, self.cin, self.size, self.size).to(device)
        if self.backward:
            x.requires_grad_()

            def step():
                x.grad = None
                conv.zero_grad()
                out = conv(x)
                out.sum().backward()
                return x.grad
        else:
            def step():
                with module.no_grad():
                    return conv(x)

        def check():
            values = step().detach().cpu().numpy()
            return None if np.isfinite(values).all() else "non-finite output"
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
    quantized = ModelWorkload("mlp_fwd_qint8", "mlp", "MLP 784-512-256-10, batch {}: inference "
                              "forward, Linear layers dynamically quantized to int8".format(
                                  32 if quick else 128), _mlp_qdynamic, False, quick)
    quantized.devices = ("cpu",)          # quantized inference is CPU-only, as in PyTorch
    out.append(quantized)
    out.append(AutogradChain())
    out.append(LSTMSequence(quick))
    batch = 2 if quick else 32
    for cin, cout, size in ((3, 32, 32), (32, 64, 16)):
        for backward in (False, True):
            out.append(Conv2dWorkload(cin, cout, size // (4 if quick else 1), batch, backward))
    return out


if __name__ == "__main__":
    # `python -m tensorlib._bench.models [tensorlib-bench options]`: this suite's rows only
    import sys
    from tensorlib._bench.cli import main
    names = ",".join(w.name for w in workloads(quick="--quick" in sys.argv))
    sys.exit(main(["--only", names] + sys.argv[1:]))
