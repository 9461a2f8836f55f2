"""torch.return_types (the named tuples ops return) and torch.random (seeding, states,
fork_rng), and that a program run as `torch` imports them and torch.version."""
import pytest

import tensorlib
from tensorlib import return_types

from tests.torch_compat.test_runner import run_program


def test_ops_return_the_named_types():
    x = tensorlib.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, 4.0]])
    cases = {"max": x.max(0), "min": x.min(1), "sort": x.sort(), "topk": x.topk(2),
             "kthvalue": x.kthvalue(1), "median": x.median(1), "mode": x.mode(1),
             "cummax": x.cummax(1), "cummin": x.cummin(1), "aminmax": x.aminmax(),
             "frexp": x.frexp(), "slogdet": tensorlib.slogdet(x[:, :2]),
             "qr": tensorlib.linalg.qr(x), "svd": tensorlib.svd(x),
             "linalg_svd": tensorlib.linalg.svd(x), "linalg_eigh": tensorlib.linalg.eigh(x[:, :2])}
    for name, result in cases.items():
        assert isinstance(result, getattr(return_types, name)), name
        assert getattr(return_types, name + "_out", result.__class__) is result.__class__
    assert not isinstance(x.max(0), return_types.min)
    values, indices = x.max(0)
    assert x.max(0).values is not None and indices.tolist() == [0, 1, 1]


def test_names_match_torch():
    torch = pytest.importorskip("torch")
    for name in return_types.__all__:
        assert hasattr(torch.return_types, name), name
        if name != "all_return_types":
            ours, theirs = getattr(return_types, name), getattr(torch.return_types, name)
            assert len(ours._fields) == theirs.n_fields, name


def test_random_seeds_and_states():
    tensorlib.random.manual_seed(11)
    assert tensorlib.random.initial_seed() == 11
    state = tensorlib.random.get_rng_state()
    first = tensorlib.rand(4)
    tensorlib.random.set_rng_state(state)
    assert tensorlib.equal(tensorlib.rand(4), first)
    s = tensorlib.random.seed()
    assert tensorlib.random.initial_seed() == s


def test_fork_rng_restores_the_stream():
    tensorlib.manual_seed(3)
    with tensorlib.random.fork_rng():
        inside = tensorlib.rand(3)
        tensorlib.rand(100)
    after = tensorlib.rand(3)
    assert tensorlib.equal(inside, after)
    with tensorlib.random.fork_rng(enabled=False):
        tensorlib.rand(1)
    assert not tensorlib.equal(tensorlib.rand(3), after)


def test_programs_import_the_submodules(tmp_path):
    out = run_program(tmp_path, """
        import torch
        import torch.random, torch.return_types, torch.version
        import torch.signal.windows
        from torch.random import fork_rng
        x = torch.tensor([1.0, 5.0, 2.0])
        print(isinstance(x.max(0), torch.return_types.max), torch.version.cuda,
              torch.version.__version__ == torch.__version__,
              tuple(torch.signal.windows.hann(5).shape))
    """)
    assert out.split() == ["True", "None", "True", "(5,)"]
