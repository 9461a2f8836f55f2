"""The compiled workloads of `tensorlib-bench` (`--only compiled`): each runs the same code
through `tensorlib.compile` and, beside it, `torch.compile`, so "vs torch" is against
torch.compile; the eager rows of the same work (`chain`, `softmax`, `layer_norm`, and the
`*_train` model rows) give the ratio against eager. Warm-up calls compile (they are not
timed); the first call's time is the cold compile.

Workloads: the elementwise chain (x*2+1).relu().exp() on 4M floats, softmax and layer_norm
over 4096x1024, the MLP and CNN training steps with the model and its loss compiled as one
function (so its backward is one compiled program too) and the optimizer step compiled, and
the LSTMCell sequence with its forward compiled."""
import numpy as np

from tensorlib._bench.models import LSTMSequence, _cnn, _mlp
from tensorlib._bench.registry import register_suite

__all__ = ["workloads"]


def _chain(lib, x):
    return (x * 2 + 1).relu().exp()


def _softmax(lib, x):
    return lib.nn.functional.softmax(x, -1)


def _layer_norm(lib, x, w, b):
    return lib.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


# The eager and compiled rows of one function read the same input tensors: a 16 MB
# layer_norm ran 2.5x slower on one freshly made input than on another (on the Xeon, both
# rows alike: where the allocator placed the buffer), which read as "compiled slower than
# eager" when each row made its own.
_SHARED_INPUTS = {}


class FunctionWorkload:
    """fn(lib, *inputs) on float32 inputs, eagerly (`compiled=False`) or compiled."""

    kind, libraries, unit = "op", ("tensorlib", "torch"), "GB/s"

    def __init__(self, name, description, fn, shapes, compiled):
        self.family = name
        self.name = name + ("_compiled" if compiled else "")
        self.mode = "compiled" if compiled else "eager"
        self.description = description + (" (compiled)" if compiled else " (eager)")
        self.fn, self.shapes, self.compiled = fn, shapes, compiled
        self.nbytes = 2 * 4 * int(np.prod(shapes[0]))      # read the input, write the result

    def matches(self, name):
        # the eager rows join their family and kind; compiled rows come only when named or
        # with --only compiled (torch.compile takes many seconds to warm up)
        if self.compiled:
            return name in (self.name, self.mode)
        return name in (self.name, self.family, self.kind)

    def throughput(self, seconds):
        return self.nbytes / seconds / 1e9

    def prepare(self, library, module, device):
        key = (self.family, library, str(device))
        inputs = _SHARED_INPUTS.get(key)
        if inputs is None:
            module.manual_seed(0)
            inputs = _SHARED_INPUTS[key] = [module.randn(*s).to(device) for s in self.shapes]

        def fn(*args):
            return self.fn(module, *args)
        run = module.compile(fn) if self.compiled else fn

        def step():
            return run(*inputs)

        def check():
            got = step().detach().cpu().numpy()
            want = fn(*inputs).detach().cpu().numpy()
            return None if np.allclose(got, want, rtol=1e-4, atol=1e-5) else \
                "compiled result differs from eager"
        return step, check


class CompiledTrainStep:
    """A model's training step with the model and its loss (one compiled function) and the
    optimizer step compiled; torch.compile gets the same two functions."""

    kind, mode, libraries, unit = "model", "compiled", ("tensorlib", "torch"), None

    def __init__(self, family, description, build, quick):
        self.family, self.name = family, f"{family}_train_compiled"
        self.description = description
        self._build, self.quick = build, quick

    def matches(self, name):
        return name in (self.name, self.mode)

    def throughput(self, seconds):
        return None

    def prepare(self, library, module, device):
        module.manual_seed(0)
        model, x, y, loss_fn, make_optimizer = self._build(module, self.quick)
        model, x, y = model.to(device), x.to(device), y.to(device)
        model.train()
        optimizer = make_optimizer(model.parameters())
        loss_of = module.compile(lambda inputs, targets: loss_fn(model(inputs), targets))
        update = module.compile(optimizer.step)

        def step():
            optimizer.zero_grad()
            loss = loss_of(x, y)
            loss.backward()
            update()
            return loss

        def check():
            value = step().detach().cpu().numpy()
            return None if np.isfinite(value).all() else "non-finite loss"
        return step, check


class CompiledLSTMSequence(LSTMSequence):
    """Issue 16's LSTMCell sequence with its forward (100 steps of two cells and a head)
    compiled: a program of small kernels, where replay removes the per-op Python."""

    mode = "compiled"

    def __init__(self, quick):
        super().__init__(quick)
        self.name = "lstm_seq_compiled"
        self.description += " (forward compiled)"

    def matches(self, name):
        return name in (self.name, self.mode)

    def _wrap(self, module, sequence):
        return module.compile(sequence)

    def prepare(self, library, module, device):
        step, check = super().prepare(library, module, device)
        for _ in range(3):      # compile, and learn the replay (two matching recordings)
            step()
        return step, check


@register_suite
def workloads(quick=False):
    n = (1 << 18) if quick else (4 << 20)
    rows = 512 if quick else 4096
    specs = [("chain", f"(x*2+1).relu().exp(), {n} floats", _chain, [(n,)]),
             ("softmax", f"softmax over the last dim, {rows}x1024", _softmax, [(rows, 1024)]),
             ("layer_norm", f"layer_norm over the last dim, {rows}x1024", _layer_norm,
              [(rows, 1024), (1024,), (1024,)])]
    out = []
    for name, what, fn, shapes in specs:
        out.append(FunctionWorkload(name, what, fn, shapes, False))
        out.append(FunctionWorkload(name, what, fn, shapes, True))
    out.append(CompiledTrainStep("mlp", "MLP 784-512-256-10 train step, SGD momentum, "
                                        "model+loss and step compiled", _mlp, quick))
    out.append(CompiledTrainStep("cnn", "CNN 2x(conv-relu-pool) train step, Adam, "
                                        "model+loss and step compiled", _cnn, quick))
    out.append(CompiledLSTMSequence(quick))
    return out
