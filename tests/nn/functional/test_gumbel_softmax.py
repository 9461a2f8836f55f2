"""F.gumbel_softmax: soft samples on the simplex, hard samples one-hot with the soft sample's
gradient (straight-through), and argmax frequencies that follow softmax(logits) (the
Gumbel-max trick)."""
import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional


def test_soft_samples_lie_on_the_simplex(device):
    logits = tl.randn(6, 5, device=device)
    y = F.gumbel_softmax(logits, tau=0.7, dim=-1)
    assert (y >= 0).all().item()
    np.testing.assert_allclose(y.sum(-1).cpu().numpy(), np.ones(6), rtol=1e-5)


def test_hard_is_the_one_hot_of_the_soft_sample_with_its_gradient(device):
    logits = tl.randn(4, 7, device=device, requires_grad=True)
    weights = tl.randn(4, 7, device=device)
    tl.manual_seed(11)
    soft = F.gumbel_softmax(logits, tau=0.5, dim=1)
    (grad_soft,) = tl.autograd.grad((soft * weights).sum(), logits)
    tl.manual_seed(11)                          # the same noise
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True, dim=1)
    (grad_hard,) = tl.autograd.grad((hard * weights).sum(), logits)
    assert hard.sum(1).tolist() == [1.0] * 4
    assert hard.argmax(1).tolist() == soft.argmax(1).tolist()
    np.testing.assert_allclose(grad_hard.cpu().numpy(), grad_soft.cpu().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_argmax_frequencies_follow_the_softmax():
    logits = tl.tensor([0.5, -1.0, 1.5, 0.0])
    samples = F.gumbel_softmax(logits.expand(40000, 4), tau=1.0, hard=True)
    freq = samples.mean(0).numpy()
    np.testing.assert_allclose(freq, logits.softmax(0).numpy(), atol=0.01)


def test_same_signature_as_torch():
    torch = pytest.importorskip("torch")
    import inspect
    ours = inspect.signature(F.gumbel_softmax).parameters
    theirs = inspect.signature(torch.nn.functional.gumbel_softmax).parameters
    assert list(ours) == list(theirs)
    assert [p.default for p in ours.values()][1:] == [p.default for p in theirs.values()][1:]
