"""Randomness for samplers, random_split and worker seeds.

Every random choice here is made by tensorlib's ops (randperm, randint, multinomial) with a
fresh tensorlib.Generator seeded from one 62-bit draw of the caller's generator, so a seeded
generator gives the same order every run. `generator` may be:

- None: tensorlib's default generator when `tensorlib.randint` exists (so `tensorlib.manual_seed`
  makes shuffling reproducible, as in PyTorch), else Python's `random` module;
- a `tensorlib.Generator` (anything `tensorlib.randint(..., generator=g)` accepts);
- a `numpy.random.Generator` or `numpy.random.RandomState` (recognised by their type's module,
  so numpy is never imported here), or a `random.Random`.

Drawing advances the generator, so successive epochs differ and stay reproducible.
"""
import random as _pyrandom

SEED_BOUND = 2 ** 62


def _numpy_kind(generator):
    """'Generator' or 'RandomState' for numpy's random generators, else None."""
    cls = type(generator)
    if cls.__module__.split(".")[0] == "numpy":
        return cls.__name__
    return None


def draw_seed(generator=None):
    """A non-negative int below 2**62 drawn from `generator` (see the module docstring)."""
    kind = _numpy_kind(generator)
    if kind == "Generator":
        return int(generator.integers(0, SEED_BOUND))
    if kind == "RandomState":
        return int(generator.randint(0, 2 ** 31 - 1)) << 31 | int(generator.randint(0, 2 ** 31 - 1))
    if isinstance(generator, _pyrandom.Random):
        return generator.getrandbits(62)
    import tensorlib
    randint = getattr(tensorlib, "randint", None)
    if generator is None:
        if randint is None:
            return _pyrandom.getrandbits(62)
        return int(randint(0, SEED_BOUND, (), dtype=tensorlib.int64).item())
    if randint is None:
        raise TypeError(f"generator must be a numpy Generator/RandomState or random.Random in "
                        f"this build (no tensorlib.randint), got {type(generator).__name__}")
    return int(randint(0, SEED_BOUND, (), dtype=tensorlib.int64, generator=generator).item())


def rng(generator=None):
    """A fresh tensorlib.Generator seeded from `generator` (one draw)."""
    import tensorlib
    g = tensorlib.Generator()
    g.manual_seed(draw_seed(generator))
    return g


def permutation(n, generator=None):
    """A random permutation of range(n), as an int64 tensor. In pytorch stream mode a
    tensorlib generator (default: the CPU one) draws it directly, as PyTorch's random_split
    does, so the split equals PyTorch's."""
    import tensorlib
    from tensorlib.ops.random import Generator, follows_pytorch_stream
    if (generator is None or isinstance(generator, Generator)) and follows_pytorch_stream(
            "cpu", generator):
        return tensorlib.randperm(n, generator=generator)
    return tensorlib.randperm(n, generator=rng(generator))
