"""Operands for the differential fuzzer: one description (shape, dtype, layout, seed) built
into the same values in tensorlib and in torch, and Python numbers for operand slots."""
import numpy as np
from hypothesis import strategies as st

DTYPES = ("bool", "uint8", "int8", "int64", "float16", "bfloat16", "float32", "float64")
LAYOUTS = ("contiguous", "transposed", "stepped", "expanded", "offset")


def shapes(max_dims=3):
    """0-d to max_dims dims, sizes 0..3 (so 0-size tensors come up often)."""
    return st.lists(st.integers(0, 3), min_size=0, max_size=max_dims).map(tuple)


def broadcast_partner(shape):
    """A shape that broadcasts with `shape`: some trailing dims kept, some set to 1."""
    return st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)).flatmap(
        lambda keep: st.integers(0, len(shape)).map(
            lambda drop: tuple(s if k else 1 for s, k in zip(shape, keep))[drop:]))


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "uint8":
        return rng.integers(0, 12, shape).astype(np.uint8)
    if dtype in ("int8", "int64"):
        return rng.integers(-6, 7, shape).astype(np.int64)
    values = np.round(rng.standard_normal(shape) * 3, 2)
    if values.size:                       # exact zeros and integers come up in real data
        flat = values.reshape(-1)
        flat[rng.integers(0, flat.size)] = float(rng.integers(-2, 3))
    return values


def build(module, spec):
    """The tensor `spec` describes, in `module` (tensorlib or torch)."""
    shape, dtype, layout, seed = spec
    dt = getattr(module, dtype)
    if layout == "transposed" and len(shape) >= 2:
        base = module.tensor(_values(shape[::-1], dtype, seed)).to(dt)
        return base.permute(*range(len(shape) - 1, -1, -1))
    if layout == "stepped" and len(shape) >= 1:
        wide = shape[:-1] + (2 * shape[-1],)
        return module.tensor(_values(wide, dtype, seed)).to(dt)[..., ::2]
    if layout == "expanded" and len(shape) >= 1 and shape[0] != 1:
        one = (1,) + shape[1:]
        return module.tensor(_values(one, dtype, seed)).to(dt).expand(*shape)
    if layout == "offset":
        n = int(np.prod(shape, dtype=np.int64))
        flat = module.tensor(_values((n + 1,), dtype, seed)).to(dt)
        return flat[1:].reshape(shape)
    return module.tensor(_values(shape, dtype, seed)).to(dt)


def tensor_specs(shape=None, dtypes=DTYPES):
    shape_st = shapes() if shape is None else st.just(shape)
    return st.tuples(shape_st, st.sampled_from(dtypes), st.sampled_from(LAYOUTS),
                     st.integers(0, 2**16))


def numbers():
    """Python numbers for an operand slot: bool, small ints (incl. 0), floats (incl. 0.5)."""
    return st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 0.5, -1.5, 2.0]))


class Operand:
    """A tensor in an argument recipe: `spec` (shape, dtype, layout, seed) built by `build`,
    or explicit `values` (index tensors, masks) in dtype `dtype`."""

    def __init__(self, spec=None, values=None, dtype=None, requires_grad=False, shape=None):
        """`shape`: the shape of `values` when nested lists cannot say it (a 0-size dim)."""
        self.spec, self.values, self.dtype, self.requires_grad = spec, values, dtype, requires_grad
        self.shape = shape

    def make(self, module):
        if self.spec is not None:
            t = build(module, self.spec)
        else:
            t = module.tensor(self.values, dtype=getattr(module, self.dtype))
            if self.shape is not None:
                t = t.reshape(self.shape)
        return t.requires_grad_() if self.requires_grad else t

    def __repr__(self):
        what = self.spec if self.spec is not None else \
            f"{self.values}:{self.dtype}" + (f":{self.shape}" if self.shape else "")
        return f"T{what}" + ("+grad" if self.requires_grad else "")


class Dtype:
    """A dtype in an argument recipe, by name (the same in both libraries)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def materialize(module, recipe):
    """The recipe with every Operand and Dtype built in `module`."""
    if isinstance(recipe, Operand):
        return recipe.make(module)
    if isinstance(recipe, Dtype):
        return getattr(module, recipe.name)
    if isinstance(recipe, (tuple, list)):
        return type(recipe)(materialize(module, r) for r in recipe)
    if isinstance(recipe, dict):
        return {k: materialize(module, v) for k, v in recipe.items()}
    return recipe


def random_values(shape, low, high, seed):
    """Integer values in [low, high] as nested lists (index tensors)."""
    return np.random.default_rng(seed).integers(low, high + 1, shape).tolist()
