"""The per-sample loop for ops without a batch rule: each sample's slice of the batched
arguments is passed to the op, and the results are stacked. Correct for any op, one call
per sample; `counts` records which ops took it (see `vmap_fallbacks` in tests)."""
import collections
import logging

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.func._batching._batched import (BatchedTensor, batch_size, make, random_guard,
                                               zeros_sample)
from tensorlib.func._tree import tree_flatten, tree_unflatten
from tensorlib.ops import random as _random

counts = collections.Counter()      # op name -> calls that took the loop
_log = logging.getLogger("tensorlib.func.vmap")


def _is_inplace(name):
    return name is not None and (name == "__setitem__" or
                                 (name.endswith("_") and not name.startswith("__")))


def _sample(x, level, i):
    if type(x) is BatchedTensor and x._bt_level == level:
        return zeros_sample(x) if i is None else x._bt_value.select(x._bt_bdim, i)
    return x


def per_sample(func, name, level, args, kwargs):
    counts[name] += 1
    _log.debug("vmap: no batch rule for %s; looping over the batch", name)
    size = batch_size(level)
    leaves, spec = tree_flatten((args, kwargs))
    if _is_inplace(name) and args and not (type(args[0]) is BatchedTensor and
                                           args[0]._bt_level == level):
        raise RuntimeError(f"vmap: {name}(self, *extra_args) is not possible because there "
                           f"exists a Tensor `other` in extra_args that has more elements "
                           f"than `self`. This happened due to `other` being vmapped over "
                           f"but `self` not being vmapped over in a vmap. Please try to use "
                           f"out-of-place operators instead of {name}.")
    guard = _SameRandomness(random_guard(level))
    previous = _random.set_vmap_random_hook(guard)
    try:
        results = []
        for i in range(size) if size else [None]:
            guard.next_element()
            a, k = tree_unflatten([_sample(x, level, i) for x in leaves], spec)
            results.append(func(*a, **k))
    finally:
        _random.set_vmap_random_hook(previous)
    if _is_inplace(name):
        return args[0]
    return _combine(results, level, size)


def _combine(results, level, size):
    first, spec = tree_flatten(results[0])
    per = [tree_flatten(r)[0] for r in results]
    out = []
    for k, item in enumerate(first):
        column = [p[k] for p in per]
        if isinstance(item, TensorImpl):
            stacked = tensorlib.stack(column)
            out.append(make(stacked if size else stacked[:0], 0, level))
        elif all(c == item for c in column):
            out.append(item)
        else:
            raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in "
                               "some data-dependent control flow. We don't support that yet, "
                               "please shout over at "
                               "https://github.com/pytorch/functorch/issues/257 .")
    return tree_unflatten(out, spec)


class _SameRandomness:
    """Under randomness='same', every sample of a looped op draws what the first drew."""

    def __init__(self, level_guard):
        self.outer = _random.vmap_random_hook()
        self.same = level_guard is not None and level_guard.randomness == "same"
        self.start, self.rewound = {}, set()

    def __call__(self, generator):
        if self.outer is not None:
            self.outer(generator)
        if self.same and generator not in self.rewound:
            self.rewound.add(generator)
            state = self.start.setdefault(generator, (generator._seed, generator._offset))
            generator._seed, generator._offset = state

    def next_element(self):
        self.rewound = set()
