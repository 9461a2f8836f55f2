"""biject_to / transform_to against torch's registries: for each constraint, the transform
maps the same unconstrained values to the same constrained ones (inside the support) and
back; LowerCholeskyTransform and PositiveDefiniteTransform; registering a new constraint;
the error for one without a transform."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.distributions as tld

torch = pytest.importorskip("torch")
td = torch.distributions
RNG = np.random.default_rng(13)


def _constraints(lib):
    c = lib.distributions.constraints
    return {"real": c.real, "positive": c.positive, "nonnegative": c.nonnegative,
            "greater_than": c.greater_than(1.5), "greater_than_eq": c.greater_than_eq(-2.0),
            "less_than": c.less_than(3.0), "unit_interval": c.unit_interval,
            "interval": c.interval(-1.0, 4.0), "half_open": c.half_open_interval(0.0, 2.0),
            "simplex": c.simplex, "real_vector": c.real_vector,
            "independent_positive": c.independent(c.positive, 1),
            "lower_cholesky": c.lower_cholesky, "positive_definite": c.positive_definite}


CASES = sorted(_constraints(tl))


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", CASES)
def test_matches_torch(registry, name):
    ours_c, theirs_c = _constraints(tl)[name], _constraints(torch)[name]
    try:
        ref = getattr(td, registry)(theirs_c)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            getattr(tld, registry)(ours_c)
        return
    ours = getattr(tld, registry)(ours_c)
    assert type(ours).__name__ == type(ref).__name__
    x = RNG.standard_normal((2, 3, 3))
    y, ty = ours(tl.tensor(x)), ref(torch.tensor(x))
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
    assert bool(ours_c.check(y).all())
    if registry == "biject_to" or name not in ("simplex", "positive_definite"):
        np.testing.assert_allclose(ours.inv(y).numpy(), ref.inv(ty).numpy(), rtol=1e-8,
                                   atol=1e-10)


def test_unregistered_constraint_and_registration():
    class Odd(tld.constraints.Constraint):
        def check(self, value):
            return value % 2 == 1
    with pytest.raises(NotImplementedError, match="Cannot transform Odd constraints"):
        tld.biject_to(Odd())
    registry = tld.constraint_registry.ConstraintRegistry()
    registry.register(Odd, lambda c: tld.ExpTransform())
    assert isinstance(registry(Odd()), tld.ExpTransform)
    with pytest.raises(TypeError, match="Expected constraint"):
        registry.register(int, lambda c: None)


def test_positive_definite_round_trip():
    x = tl.tensor(RNG.standard_normal((4, 3, 3)))
    t = tld.PositiveDefiniteTransform()
    y = t(x)
    assert bool(tld.constraints.positive_definite.check(y).all())
    np.testing.assert_allclose(t(t.inv(y)).numpy(), y.numpy(), rtol=1e-10)
    assert t == tld.PositiveDefiniteTransform() and t != tld.LowerCholeskyTransform()
