"""func.stack_module_state: stacked parameters and buffers of an ensemble, as PyTorch's."""
import pytest

import tensorlib
from tensorlib import nn
from tensorlib.func import functional_call, stack_module_state


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("scale", tensorlib.rand(2))

    def forward(self, x):
        return self.fc(x) * self.scale


def test_stacks_parameters_and_buffers(device):
    models = [_Net().to(device) for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert set(params) == {"fc.weight", "fc.bias"} and set(buffers) == {"scale"}
    assert params["fc.weight"].shape == (4, 2, 3) and buffers["scale"].shape == (4, 2)
    assert params["fc.weight"].is_leaf and params["fc.weight"].requires_grad
    assert not buffers["scale"].requires_grad
    for i, m in enumerate(models):
        assert params["fc.bias"][i].tolist() == m.fc.bias.tolist()
    x = tensorlib.randn(5, 3, device=device)
    one = {k: v[1] for k, v in params.items()}
    one.update({k: v[1] for k, v in buffers.items()})
    out = functional_call(models[0], one, (x,))
    assert tensorlib.allclose(out, models[1](x))


def test_stacked_parameters_match_torch():
    torch = pytest.importorskip("torch")
    ours = stack_module_state([nn.Linear(2, 2) for _ in range(3)])
    theirs = torch.func.stack_module_state([torch.nn.Linear(2, 2) for _ in range(3)])
    assert {k: tuple(v.shape) for k, v in ours[0].items()} == \
        {k: tuple(v.shape) for k, v in theirs[0].items()}


def test_refuses_mixed_models():
    with pytest.raises(RuntimeError, match="at least one"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([nn.Linear(2, 2), nn.Conv1d(2, 2, 1)])
    a, b = nn.Linear(2, 2), nn.Linear(2, 2).eval()
    with pytest.raises(RuntimeError, match="training/eval"):
        stack_module_state([a, b])
    b.train()
    b.weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="requires_grad"):
        stack_module_state([a, b])
