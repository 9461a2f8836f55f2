"""out= on tensorlib.special.*: every function that takes it in PyTorch, against torch for
out dtypes that are cast into (wider, narrower) and refused (integer)."""
import numpy as np
import pytest

import tensorlib
from tests.ops._out_parity import check_out_call, torch_or_skip

_RNG = np.random.default_rng(0)
_X = (_RNG.random(5) * 0.8 + 0.1).astype(np.float32)
_Y = (_RNG.random(5) * 0.8 + 0.1).astype(np.float32)
_ARGS = {"polygamma": (1, _X), "multigammaln": (_X + 2, 2), "logsumexp": (_X, 0),
         **{n: (_X, _Y) for n in ("xlogy", "xlog1py", "zeta", "gammainc", "gammaincc")}}
_NAMES = [n for n in tensorlib.special.__all__ if n not in ("softmax", "log_softmax")]


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("name", _NAMES)
def test_special_out_matches_torch(device, name, out_dtype):
    torch = torch_or_skip()
    # torch's mvlgamma names the input's dtype where it means out's: only the class is compared
    check_out_call(torch, name, "special", device, _ARGS.get(name, (_X,)), out_dtype,
                   same_message=name != "multigammaln")


def test_special_out_keeps_shape_and_refuses_grad(device):
    x = tensorlib.tensor(_X, device=device)
    out = tensorlib.empty(5, dtype=tensorlib.float64, device=device)
    assert tensorlib.special.ndtr(x, out=out) is out
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tensorlib.special.ndtr(x.requires_grad_(), out=out)


def test_softmax_takes_no_out(device):
    with pytest.raises(TypeError):
        tensorlib.special.softmax(tensorlib.ones(2, device=device), 0,
                                  out=tensorlib.empty(2, device=device))
