"""Distribution.__init__ ends with super().__init__(), as PyTorch's: a class deriving from a
Distribution and nn.Module (GPyTorch's Prior, with no __init__ of its own) becomes a
Module through it."""
import tensorlib as tl
from tensorlib.distributions import Distribution, Normal


class _ModuleDistribution(Distribution, tl.nn.Module):
    arg_constraints = {}


class _ModuleNormal(Normal, tl.nn.Module):
    pass


def test_a_distribution_that_is_a_module_gets_modules_state():
    prior = _ModuleDistribution()
    assert list(prior.named_modules()) == [("", prior)]
    holder = tl.nn.Module()
    holder.prior = prior
    assert [name for name, _ in holder.named_modules()] == ["", "prior"]


def test_a_parametrised_distribution_module_keeps_its_parameters():
    prior = _ModuleNormal(tl.tensor([0.0, 1.0]), tl.tensor(2.0))
    assert prior.batch_shape == (2,) and prior.scale.tolist() == [2.0, 2.0]
    prior.register_buffer("offset", tl.tensor(1.0))
    assert dict(prior.named_buffers())["offset"].item() == 1.0
