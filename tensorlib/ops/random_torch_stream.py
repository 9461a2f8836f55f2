"""PyTorch's CPU random stream, opt in: ``TENSORLIB_RNG=pytorch`` (or ``set_stream("pytorch")``).

In this mode the CPU default generator and every ``Generator("cpu")`` made while it is on are
Mersenne-Twister generators with PyTorch 2.13's CPU semantics: ``manual_seed(s)`` followed by
the same calls draws PyTorch's numbers, so programs (and test thresholds) tuned on
``torch.manual_seed`` run unchanged. The state is PyTorch's 5056-byte ``CPUGeneratorImplState``
(``get_state`` returns the bytes ``torch.get_rng_state()`` would), cached Box-Muller normal
included. Other devices keep Philox.

Each draw here follows the path PyTorch's CPU kernel takes: which 32/64-bit words a value
uses, the order in which elements are visited (TensorIterator's: memory order of the output,
``iteration_order``), normal's two paths (contiguous and >= 16 elements: uniforms then Box-Muller
in blocks of 16, the last 16 redrawn; otherwise one double normal at a time with the cached
second sample), and the rounding steps (double -> float -> half). The fills are the backend's
``mt19937`` kernel (``tensorlib_cpu/mt19937_kernels.pyx``); the Generator object holds the state
(a numpy uint8 array) and passes it in.
"""
import os
import warnings

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C.device import canonical
from tensorlib._C.factory import empty as _empty
from tensorlib._C.tensor_impl import TensorImpl, contiguous_strides
from tensorlib.ops._composites import optional_kernel

STREAMS = ("philox", "pytorch")
STATE_BYTES = 5056                  # sizeof(CPUGeneratorImplState)
_RANDPERM_LIMIT = (1 << 32) // 20   # PyTorch's randperm switches algorithm at 2**32 / 20 - 1


def _stream_from_environment():
    value = os.environ.get("TENSORLIB_RNG", "philox").strip().lower() or "philox"
    if value not in STREAMS:
        warnings.warn(f"TENSORLIB_RNG={value!r} is not one of {STREAMS}; using 'philox'",
                      RuntimeWarning, stacklevel=2)
        return "philox"
    return value


_stream = _stream_from_environment()


def get_stream():
    """The random stream CPU generators made now follow: "philox" or "pytorch"."""
    return _stream


def set_stream_name(name):
    """Record the stream new CPU generators follow; returns the previous name (the caller,
    tensorlib.random.set_stream, also converts the existing default generator)."""
    global _stream
    if name not in STREAMS:
        raise ValueError(f"random stream must be one of {STREAMS}, not {name!r}")
    previous, _stream = _stream, name
    return previous


# ---- the state ------------------------------------------------------------------------------

def _kernel():
    kernel = optional_kernel(canonical("cpu"), "mt19937")
    if kernel is None:
        raise RuntimeError("TENSORLIB_RNG=pytorch needs the CPU backend's mt19937 kernel")
    return kernel


class MersenneState:
    """A CPU generator's Mersenne-Twister state in PyTorch's byte layout."""

    def __init__(self, seed):
        self.raw = np.zeros(STATE_BYTES, np.uint8)
        self.seed(seed)

    def seed(self, value):
        _kernel()("seed", self.raw, None, value)

    def initial_seed(self):
        return int(self.raw[:8].view(np.uint64)[0])

    def get_state(self):
        from tensorlib.ops.creation import tensor
        return tensor(self.raw.copy(), dtype=dt.uint8)

    def set_state(self, new_state):
        if not isinstance(new_state, TensorImpl) or new_state._dtype is not dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but "
                               f"found the input RNG state size to be {new_state.numel()}")
        raw = np.array(new_state.reshape(-1).tolist(), np.uint8)
        left = int(raw[8:12].view(np.int32)[0])
        seeded = int(raw[12:16].view(np.int32)[0])
        following = int(raw[16:24].view(np.uint64)[0]) & 0xFFFFFFFF
        if not (seeded and 0 < left <= 624 and following <= 624):
            raise RuntimeError("Invalid mt19937 state")
        self.raw[:] = _canonical(raw)

    def draw(self, kind, out, *args):
        """Run fill `kind` of the mt19937 kernel into the contiguous CPU tensor `out`."""
        _kernel()(kind, self.raw, out, *args)
        return out


def _canonical(raw):
    """The bytes PyTorch's get_state gives back after set_state(raw): the fields as its engine
    holds them (32-bit words, flags 0/1), unused and invalid fields and padding zero."""
    out = np.zeros(STATE_BYTES, np.uint8)
    out[:8] = raw[:8]                                                     # initial seed
    out[8:12] = raw[8:12]                                                 # left
    out[12:16].view(np.int32)[0] = 1                                      # seeded
    out[16:5016].view(np.uint64)[:] = raw[16:5016].view(np.uint64) & 0xFFFFFFFF   # next, words
    if raw[5040:5044].view(np.int32)[0]:                                  # cached double normal
        out[5024:5032] = raw[5024:5032]
        out[5040] = 1
    if raw[5052]:                                                         # cached float normal
        out[5048:5052] = raw[5048:5052]
        out[5052] = 1
    return out


# ---- element order --------------------------------------------------------------------------

def iteration_order(sizes, strides, tie_strides=None):
    """The dims of an output, outermost first, in the order PyTorch's TensorIterator visits
    them: sorted by stride (memory order), a tie (equal strides) broken by the second
    operand's strides (`tie_strides`, e.g. bernoulli's p) and then by size; a stride-0 dim
    expresses no preference."""
    ndim = len(sizes)
    operands = [strides] + ([tie_strides] if tie_strides is not None else [])

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if sizes[d0] > sizes[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))          # innermost first, as TensorIterator's perm_
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return tuple(reversed(perm))


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _visited(t, tie=None):
    """(order, buffer sizes): the dims of `t` in visiting order and the shape of a contiguous
    buffer holding its elements in that order."""
    if t._strides == contiguous_strides(t._sizes):       # row-major: TensorIterator's order
        return tuple(range(len(t._sizes))), t._sizes
    order = iteration_order(t._sizes, t._strides, tie._strides if tie is not None else None)
    return order, tuple(t._sizes[d] for d in order)


def _laid_back(buffer, order):
    """The buffer (elements in visiting order) viewed in the output's dim order."""
    return buffer.permute(_inverse(order)) if order != tuple(range(len(order))) else buffer


def empty_like(input, dtype=None, device=None, memory_format=None):
    """PyTorch's empty_like: by default (preserve_format) a dense, non-overlapping input's own
    strides -- a transposed input gives a transposed result, which the fills then visit in
    memory order."""
    from tensorlib.ops import creation, memory_format as mf
    if memory_format in (None, mf.preserve_format) and _dense(input._sizes, input._strides):
        return creation.empty_strided(input._sizes, input._strides,
                                      dtype=dtype or input._dtype, device=device or input._device)
    return creation.empty_like(input, dtype=dtype, device=device, memory_format=memory_format)


def _dense(sizes, strides):
    """Non-overlapping and dense: the elements fill a block of numel slots exactly."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(sizes, strides) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _cpu():
    return canonical("cpu")


def _compute_dtype(dtype):
    """The kernels' dtype: float64 for float64, float32 for float32/half/bfloat16."""
    return dt.float64 if dtype is dt.float64 else dt.float32


def _from_double(values, dtype):
    """PyTorch's static_cast<scalar_t>(double): half and bfloat16 go through float."""
    if dtype is dt.float64:
        return values
    values = values.to(dt.float32)
    return values if dtype is dt.float32 else values.to(dtype)


# ---- the fills (each returns the values to write into `self`, in self's shape) ------------

def uniform_values(self, state, low, high):
    """uniform_(low, high): PyTorch's uniform kernel in visiting order; a value that rounds to
    `high` in self's dtype becomes `low`."""
    from tensorlib.ops import pointwise as _p
    order, sizes = _visited(self)
    wide = _compute_dtype(self._dtype)
    values = state.draw("uniform", _empty(sizes, wide, _cpu()), float(low), float(high))
    if wide is not self._dtype:
        values = values.to(self._dtype)
        values = _p.where(_p.eq(values, float(high)), float(low), values)
    return _laid_back(values, order)


def normal_values(self, state, mean, std):
    """normal_(mean, std): the block path for contiguous tensors of >= 16 elements, else
    one double normal at a time (the cached sample used and refilled)."""
    n = self.numel()
    if n >= 16 and self.is_contiguous():
        wide = _compute_dtype(self._dtype)
        blockwise = self._dtype in (dt.float16, dt.bfloat16)      # PyTorch's reduced path
        values = state.draw("normal_fill", _empty(self._sizes, wide, _cpu()), mean, std,
                            blockwise)
        return values if wide is self._dtype else values.to(self._dtype)
    return _serial_double(self, state, "normal_serial", mean, std, False)


def _serial_double(self, state, kind, *args):
    order, sizes = _visited(self)
    values = state.draw(kind, _empty(sizes, dt.float64, _cpu()), *args)
    return _laid_back(_from_double(values, self._dtype), order)


def log_normal_values(self, state, mean, std):
    return _serial_double(self, state, "normal_serial", mean, std, True)


def exponential_values(self, state, lambd):
    return _serial_double(self, state, "exponential", lambd)


def cauchy_values(self, state, median, sigma):
    return _serial_double(self, state, "cauchy", median, sigma)


def geometric_values(self, state, p):
    """geometric_(p) on any dtype: integer dtypes take the (integral) double values."""
    if self._dtype.is_floating_point:
        return _serial_double(self, state, "geometric", p)
    order, sizes = _visited(self)
    values = state.draw("geometric", _empty(sizes, dt.float64, _cpu()), p)
    return _laid_back(values.to(self._dtype), order)


def _int_values(self, state, kind, *args):
    order, sizes = _visited(self)
    values = state.draw(kind, _empty(sizes, dt.int64, _cpu()), *args)
    if self._dtype in (dt.float16, dt.bfloat16):     # static_cast<Half>(int64): via float
        values = values.to(dt.float32)
    return _laid_back(values if self._dtype is dt.int64 else values.to(self._dtype), order)


def _through(dtype, value):
    """int64(static_cast<dtype>(value)): half and bfloat16 via float, as c10 converts."""
    x = float(np.float32(value)) if dtype is not dt.float64 else float(value)
    return int(np.array(x, np.float32).astype(dtype.np)) if dtype in (dt.float16, dt.bfloat16) \
        else int(x)


def _representable_bounds(dtype, low, high):
    """PyTorch's update_from/update_to: a floating dtype moves `low` up and `high` down to
    integers whose neighbours the dtype represents (random_(0, 1000) on bfloat16 draws from
    [0, 996))."""
    digits = {dt.float64: 53, dt.float32: 24, dt.float16: 11, dt.bfloat16: 8}[dtype]
    below = _through(dtype, low + 1)
    if below < low:
        low = below + (1 << (abs(low + 1).bit_length() - 1 - digits + 1))
    above = _through(dtype, high - 1)
    if above >= high:
        high = above - (1 << (abs(high - 1).bit_length() - 1 - digits + 1))
    return low, high


def int_values(self, state, low, high, bounded):
    """random_(low, high): word % (high - low) + low, a 64-bit word from a span of 2**28;
    random_(-2**63, None) on int64: whole 64-bit words; random_() (not `bounded`): below."""
    if not bounded:
        return _default_int_values(self, state)
    if (low, high) == (-(1 << 63), 1 << 63):
        return _int_values(self, state, "ints_full_range")
    if self._dtype.is_floating_point:
        low, high = _representable_bounds(self._dtype, low, high)
    return _int_values(self, state, "ints_from_to", (high - low) & ((1 << 64) - 1), low)


_MODULI = {"float64": ((1 << 53) + 1, True), "float32": ((1 << 24) + 1, False),
           "float16": ((1 << 11) + 1, False), "bfloat16": ((1 << 8) + 1, False),
           "int64": (1 << 63, True), "int32": (1 << 31, False), "int16": (1 << 15, False),
           "int8": (1 << 7, False), "uint8": (1 << 8, False), "bool": (2, False)}


def _default_int_values(self, state):
    """random_() without bounds: [0, 2**digits] for floats, [0, max] for integers."""
    if self._dtype.name not in _MODULI:
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for "
                                  f"'{self._dtype.scalar_name}'")
    modulus, wide = _MODULI[self._dtype.name]
    return _int_values(self, state, "ints_modulo", modulus, wide)


def bernoulli_values(self, state, p):
    """bernoulli_(p): p a number (53-bit uniform < p) or a tensor broadcast to self (float64 p:
    53-bit uniforms, other dtypes: 24-bit float uniforms compared in float)."""
    if isinstance(p, TensorImpl):
        probs = p.expand(self._sizes)
        order, sizes = _visited(self, probs)
        wide = dt.float64 if p._dtype is dt.float64 else dt.float32
        flat = probs.permute(order).contiguous().to(wide)
        kind, args = ("bernoulli_tensor", (flat,))
    else:
        order, sizes = _visited(self)
        kind, args = "bernoulli", (float(p),)
    mask = state.draw(kind, _empty(sizes, dt.bool_, _cpu()), *args)
    return _laid_back(mask.to(self._dtype), order)


def randperm_values(n, state):
    """randperm(n): PyTorch's forward Fisher-Yates on 32-bit words (n < 2**32 / 20)."""
    if n >= _RANDPERM_LIMIT:
        return None
    return state.draw("randperm", _empty((n,), dt.int64, _cpu()))


def multinomial(probs, num_samples, replacement, generator, state):
    """PyTorch's CPU multinomial on the rows of `probs` (2-D): without replacement, or for one
    sample, the num_samples largest p / Exp(1) (exponential_ in p's dtype, argmax or topk);
    with replacement its kernel (a float running sum, bisection on 53-bit uniforms)."""
    from tensorlib.ops import pointwise as _p
    if replacement and num_samples > 1:
        wide = dt.float64 if probs._dtype is dt.float64 else dt.float32
        rows = probs.to(wide).contiguous()
        out = _empty((rows._sizes[0], num_samples), dt.int64, _cpu())
        return state.draw("multinomial", out, rows)
    from tensorlib.ops.creation import empty_like
    from tensorlib.ops.random import exponential_
    from tensorlib.ops.reduction import argmax
    from tensorlib.ops.sorting import topk
    q = _p.div(probs, exponential_(empty_like(probs), 1.0, generator=generator))
    return argmax(q, -1, True) if num_samples == 1 else topk(q, num_samples, -1)[1]


def normal_tensors(mean, std, shape, ref, generator):
    """torch.normal with a tensor mean and/or std as PyTorch computes it: normal_(0, std) then
    + mean for a number std, else normal_() * std + mean (differentiable in mean and std);
    `ref` the tensor argument whose dtype and device the result takes."""
    from tensorlib.ops import pointwise as _p
    from tensorlib.ops.random import normal_
    scale = 1.0 if isinstance(std, TensorImpl) else std
    z = normal_(_empty(shape, ref._dtype, ref._device), 0.0, scale, generator=generator)
    out = _p.add(_p.mul(z, std) if isinstance(std, TensorImpl) else z, mean)
    return out if out._dtype is ref._dtype else out.to(ref._dtype)


def poisson_values(rate, state):
    """torch.poisson: PyTorch's sample_poisson for each rate, in rate's dtype (row-major: the
    result is a fresh contiguous tensor)."""
    rates = rate.contiguous().to(dt.float64)
    counts = state.draw("poisson", _empty(rate._sizes, dt.float64, _cpu()), rates)
    return _from_double(counts, rate._dtype)


def standard_gamma_values(alpha, state, dtype=None):
    """torch._standard_gamma (float32/float64 alpha): PyTorch's sample_gamma for each alpha,
    a float32 alpha with its float steps; dtype=float64 gives _sample_dirichlet's draws
    (alpha taken as double)."""
    dtype = dtype or alpha._dtype
    alphas = alpha.contiguous().to(dt.float64)
    draws = state.draw("standard_gamma", _empty(alpha._sizes, dt.float64, _cpu()), alphas,
                       dtype is dt.float32)
    return draws if dtype is dt.float64 else draws.to(dtype)


def binomial_values(count, prob, state):
    """torch.binomial (float32/float64, count and prob of one shape): PyTorch's
    sample_binomial for each pair, in row-major order of the fresh result."""
    single = count._dtype is dt.float32
    counts, probs = (t.contiguous().to(dt.float64) for t in (count, prob))
    draws = state.draw("binomial", _empty(count._sizes, dt.float64, _cpu()), counts, probs,
                       single)
    return draws if count._dtype is dt.float64 else draws.to(count._dtype)


def philox_seeded_from(state, device):
    """A Philox generator seeded with the next 64 bits of the Mersenne stream (for the draws
    this mode does not make stream-equal, e.g. randperm of 2**32 / 20 or more)."""
    from tensorlib.ops.random import Generator
    g = Generator(device)
    g._mt = None
    word = state.draw("ints_full_range", _empty((1,), dt.int64, _cpu()))
    return g.manual_seed(word.item())
