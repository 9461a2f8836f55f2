"""nn.utils.skip_init: the module is built on the requested device without running its
initializers (nn.init is a no-op only inside), with torch's errors."""
import pytest

import tensorlib as tl
from tensorlib.nn import init

torch = pytest.importorskip("torch")


def test_skip_init_builds_without_initializing(device, monkeypatch):
    calls = []
    original = tl.Tensor.uniform_

    def counting(self, *args, **kwargs):
        calls.append(tuple(self.shape))
        return original(self, *args, **kwargs)
    monkeypatch.setattr(tl.Tensor, "uniform_", counting)
    m = tl.nn.utils.skip_init(tl.nn.Linear, 5, 3, device=device)
    t = torch.nn.utils.skip_init(torch.nn.Linear, 5, 3)
    assert m.weight.shape == t.weight.shape and m.bias.shape == t.bias.shape
    assert calls == [] and m.weight.device.type == device and m.weight.requires_grad
    assert isinstance(m.weight, tl.nn.Parameter)
    w = tl.empty(2, 2)
    init.ones_(w)                                        # initializers work again outside
    assert float(w.sum()) == 4.0
    tl.nn.Linear(5, 3, device=device)
    assert calls == [(3, 5), (3,)]                       # a plain Linear does initialize
    m2 = tl.nn.utils.skip_init(tl.nn.Conv2d, in_channels=3, out_channels=4, kernel_size=3)
    assert m2.weight.shape == (4, 3, 3, 3) and m2.weight.device.type == "cpu"


def test_initializers_are_skipped_inside():
    w = tl.zeros(3, 3)
    with init.skipped():
        init.ones_(w)
        init.kaiming_uniform_(w)
        init.orthogonal_(w)
    assert float(w.abs().sum()) == 0.0


def test_errors_as_torch():
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int)
        with pytest.raises(RuntimeError, match="must support a 'device' arg"):
            lib.nn.utils.skip_init(lib.nn.ReLU)
