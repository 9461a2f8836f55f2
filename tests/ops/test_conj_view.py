"""conj() as torch has it, observed: conj of a real tensor is the tensor itself; of a complex
one a result with is_conj() True whose in-place writes reach the input conjugated (as
through torch's lazy view); resolve_conj/conj_physical/conj_physical_/resolve_neg/is_neg;
autograd through a write into a conj() result; views of it writing back. The documented
differences (values are taken when conj() runs; views through functions, or of a non-dense
input, are plain) are pinned too."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

DATA = np.arange(6).reshape(2, 3) + 1j * np.arange(6).reshape(2, 3)[::-1]


def _np(t):
    return t.detach().resolve_conj().numpy()


def test_conj_of_real_is_self_and_flags_match_torch():
    r = tl.arange(3.0)
    assert r.conj() is r and tl.conj(r) is r and not r.is_conj()
    for lib in (tl, torch):
        x = lib.tensor(DATA)
        y = x.conj()
        assert (y.is_conj(), x.is_conj(), y.resolve_conj().is_conj(),
                y.conj_physical().is_conj(), y.conj().is_conj(), y.is_neg(),
                lib.is_conj(y)) == (True, False, False, False, False, False, True)
    ours, theirs = tl.tensor(DATA).conj(), torch.tensor(DATA).conj()
    np.testing.assert_array_equal(_np(ours), _np(theirs))
    np.testing.assert_array_equal(_np(ours.conj()), DATA)
    assert ours.resolve_neg() is ours


WRITES = {
    "setitem": lambda y: y.__setitem__((0, 1), 7 + 2j),
    "mul_": lambda y: y.mul_(2 - 1j),
    "iadd": lambda y: y.__iadd__(1j),
    "copy_": lambda y: y.copy_(y * 3),
    "fill_": lambda y: y.fill_(1 + 1j),
    "zero_": lambda y: y.zero_(),
    "exp_": lambda y: y.exp_(),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writing_into_a_conj_result_writes_the_conjugate_into_its_input(name):
    results = []
    for lib in (tl, torch):
        x = lib.tensor(DATA)
        y = x.conj()
        WRITES[name](y)
        results.append((_np(x), _np(y)))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_write_through_mH_and_a_view_input():
    results = []
    for lib in (tl, torch):
        x = lib.tensor(DATA)
        x.mH[2, 0] = 5j                              # the conjugate transpose of x
        x[:, 1:].conj().mul_(2)                      # into a view of x
        results.append(_np(x))
    np.testing.assert_allclose(results[0], results[1], atol=1e-12)


def test_gradient_through_a_write_into_a_conj_result_matches_torch():
    grads = []
    for lib in (tl, torch):
        a = lib.tensor(DATA, requires_grad=True)
        b = a * (1 + 0.5j)
        c = b.conj()
        c.mul_(2j).add_(1)                          # b becomes conj(2j conj(b) + 1)
        (lib.view_as_real(b) ** 2).sum().backward()
        grads.append(_np(a.grad))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_views_of_a_conj_result_write_back_like_torch_views():
    results = []
    for lib in (tl, torch):
        x = lib.tensor(DATA)
        y = x.conj()
        y[0].fill_(0)                                # through __getitem__
        y.T[2].mul_(2)                               # a property's view
        y.view(-1)[5] = 7j
        y.detach()[1, 0] = 1 + 1j
        t = lib.tensor(DATA).t()                     # a dense, transposed input
        t.conj()[0].fill_(5)
        results.append((_np(x), _np(t), y[0].is_conj(), y.T.is_conj(), y.real.is_conj()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_conj_physical_inplace_and_the_documented_differences():
    for lib in (tl, torch):
        x = lib.tensor(DATA)
        assert x.conj_physical_() is x and not x.is_conj()
        np.testing.assert_array_equal(_np(x), DATA.conj())
    x = tl.tensor(DATA)
    y = x.conj()
    x.zero_()                          # torch's view would now read zeros; tensorlib's
    np.testing.assert_array_equal(_np(y), DATA.conj())           # holds the values of then
    tl.transpose(y, 0, 1).fill_(0)     # a view taken through a function is plain
    strided = tl.tensor(DATA)[:, ::2]  # not dense: its conjugate is contiguous
    strided.conj()[0].fill_(0)         # so a view of that stays local
    assert np.all(_np(x) == 0) and np.all(_np(strided) == DATA[:, ::2])
