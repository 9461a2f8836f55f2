"""vmap: map a function over a dimension of its inputs.

NOTE [ vmap batches ]
The mapped inputs enter the function as BatchedTensors of a new level (`_batching/`); each
op the function runs reaches BatchedTensor.__torch_function__ and runs once on the whole
batch through its batch rule, or, without one, loops over the samples for that op only.
The outputs' batch dims move to out_dims (an output not batched is expanded). Transforms
inside differentiate the physical tensors (`_batching/_autograd.py`). `chunk_size` runs the
batch in chunks of that many and concatenates. A batch of size 0 runs on the empty
physical tensors.

randomness: 'error' raises on any random op inside, 'different' draws per element (random
ops on batched tensors draw for the whole batch, random factories with no batched argument
are drawn per element by `_batching/_random.py`'s mode), 'same' rewinds each generator to
where it stood when the (chunk's) run began, so unbatched draws are shared and looped ops
draw the same numbers per sample."""
import contextlib
import functools

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.func._batching import make, pop_level, push_level
from tensorlib.func._batching._batched import at_level
from tensorlib.func._batching._random import DifferentRandomness
from tensorlib.func._tree import broadcast_prefix, tree_flatten, tree_unflatten
from tensorlib.ops import random as _random

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _name(func):
    return getattr(func, "__name__", repr(func))


def _is_dim(x):
    return x is None or (isinstance(x, int) and not isinstance(x, bool))


def _check_dims_type(dims, arg_name, func, structure):
    leaves, _ = tree_flatten(dims)
    if not all(_is_dim(d) for d in leaves):
        raise ValueError(f"vmap({_name(func)}, {arg_name}={dims}, ...): expected `{arg_name}` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of {structure}, got: {type(dims)}.")


def _flat_in_dims(func, in_dims, args):
    if not (isinstance(in_dims, tuple) or (isinstance(in_dims, int) and
                                          not isinstance(in_dims, bool))):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected "
                         f"`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    _check_dims_type(in_dims, "in_dims", func, "inputs")
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is "
                         f"not compatible with the structure of `inputs`. in_dims has "
                         f"structure {in_dims} but inputs has {len(args)} elements.")
    dims = broadcast_prefix(in_dims, args, _is_dim)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is "
                         f"not compatible with the structure of `inputs`.")
    return dims


def _batch_size(func, in_dims, leaves, dims):
    """The mapped dims made non-negative, and the common batch size."""
    sizes, norm = [], []
    for x, d in zip(leaves, dims):
        if d is None:
            norm.append(None)
            continue
        if not isinstance(x, TensorImpl):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={d} for an input but the input is of type {type(x)}. "
                             f"We cannot vmap over non-Tensor arguments, please use None as "
                             f"the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={d} for some input, but that input is a Tensor of "
                             f"dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        norm.append(d % n)
        sizes.append(x.shape[d % n])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got all "
                         f"in_dims=None or no Tensor inputs; at least one Tensor input must "
                         f"be mapped over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return norm, sizes[0]


class _RandomGuard:
    """Installed in the generator's draw path while the loop runs (see the NOTE above)."""

    def __init__(self, randomness, outer):
        self.randomness = randomness
        self.outer = outer
        self.start = {}               # generator -> (seed, offset) before the first element
        self.rewound = set()          # generators already rewound for the current element

    def __call__(self, generator):
        if self.outer is not None:
            self.outer(generator)
        if self.randomness == "error":
            raise RuntimeError("vmap: called random operation while in randomness error "
                               "mode. Please either use the 'same' or 'different' "
                               "randomness flags on vmap or perform the randomness "
                               "operation out of vmap")
        if self.randomness == "same" and generator not in self.rewound:
            self.rewound.add(generator)
            state = self.start.setdefault(generator, (generator._seed, generator._offset))
            generator._seed, generator._offset = state

    def next_element(self):
        self.rewound = set()


def _unbatch_outputs(func, out_dims, output, level, size):
    """The function's outputs with the batch of `level` moved to out_dims (an output not
    batched there is expanded to the batch, as PyTorch does)."""
    leaves, spec = tree_flatten(output)
    for r in leaves:
        if not isinstance(r, TensorImpl):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(r)}. Did you mean to set out_dims= to "
                             f"None for output?")
    if not (_is_dim(out_dims) or isinstance(out_dims, tuple)):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be "
                         f"an int, None or a python collection of ints representing where in "
                         f"the outputs the vmapped dimension should appear.")
    _check_dims_type(out_dims, "out_dims", func, "outputs")
    dims = broadcast_prefix(out_dims, output, _is_dim)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         f"is not compatible with the structure of `outputs`.")
    out = []
    for x, d in zip(leaves, dims):
        value, bdim = at_level(x, level)
        if d is None:
            if bdim is not None:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 f"BatchedTensor when out_dim is None")
            out.append(x)
            continue
        n = x.dim() + 1
        if not -n <= d < n:
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): Dimension out "
                             f"of range (expected to be in range of [{-n}, {n - 1}], but got "
                             f"{d})")
        if bdim is None:
            shape = list(x.shape)
            shape.insert(d % n, size)
            out.append(x.unsqueeze(d % n).expand(shape))
        else:
            out.append(value.movedim(bdim, d % n))
    return tree_unflatten(out, spec), dims


def _run(func, kwargs, leaves, dims, spec, size, guard, out_dims):
    """func once on the whole (chunk of the) batch, its inputs batched at a new level."""
    level = push_level(size, guard)
    previous = _random.set_vmap_random_hook(guard)
    mode = DifferentRandomness(level, size) if guard.randomness == "different" else None
    try:
        guard.next_element()
        batched = [x if d is None else make(x, d, level) for x, d in zip(leaves, dims)]
        with mode if mode is not None else contextlib.nullcontext():
            output = func(*tree_unflatten(batched, spec), **kwargs)
        return _unbatch_outputs(func, out_dims, output, level, size)
    finally:
        _random.set_vmap_random_hook(previous)
        pop_level(level)


def _chunks(leaves, dims, size, chunk_size):
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        yield [x if d is None else x.narrow(d, start, n) for x, d in zip(leaves, dims)], n


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension `in_dims` of its inputs, its outputs stacked along
    `out_dims` (see the NOTE at the top of this module: batch rules per op)."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        dims = _flat_in_dims(func, in_dims, args)
        leaves, spec = tree_flatten(args)
        dims, batch = _batch_size(func, in_dims, leaves, dims)
        guard = _RandomGuard(randomness, _random.vmap_random_hook())
        if chunk_size is None or chunk_size >= batch:
            return _run(func, kwargs, leaves, dims, spec, batch, guard, out_dims)[0]
        parts = [_run(func, kwargs, chunk, dims, spec, n, guard, out_dims)
                 for chunk, n in _chunks(leaves, dims, batch, chunk_size)]
        flat = [tree_flatten(p[0]) for p in parts]
        out = [flat[0][0][k] if d is None else tensorlib.cat([f[0][k] for f in flat], d)
               for k, d in enumerate(parts[0][1])]
        return tree_unflatten(out, flat[0][1])

    return wrapped
