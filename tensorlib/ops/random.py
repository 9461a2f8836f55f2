"""Random numbers from a counter-based generator (Philox4x32-10).

A :class:`Generator` is just ``(seed, offset)``: ``offset`` counts the 32-bit words of the
Philox stream already used. Every draw reserves the words it needs and asks the backend's
``random_uniform(out, seed, offset)`` or ``random_normal(out, seed, offset)`` primitive, on
the tensor's own device, to write numbers ``j = 0 .. n-1`` of the stream into ``out`` in
row-major order (the stream is specified in ``tensorlib_cpu/philox.py``). No host RNG is
involved, so -- unlike PyTorch -- **one seed gives the same numbers on every backend**:
``manual_seed(s); rand(5, device=d)`` is the same for every ``d`` (uniforms and everything
built on them bit for bit, normals to rounding), and equals ``philox.uniform(s, 0, 5)``.

A draw of ``n`` numbers takes ``k * n`` words (``k`` = 2 for 64-bit dtypes, else 1) and
moves the offset past them rounded up to a multiple of 4, so two draws never share a word
(nor a Box-Muller pair).

Derived draws:

* ``randint``/``random_``: ``low + floor(u * (high - low))`` with ``u`` a float64 uniform.
  Exact -- every integer reachable, bias below ``(high - low) / 2**53`` -- for ranges up to
  2**53; wider ranges (e.g. ``random_()`` on int64) only reach some integers.
* ``randperm``: the argsort (``sort`` primitive) of float64 uniforms.
* ``bernoulli``: ``u < p``. ``exponential_``: ``-log(1 - u) / lambd``.
* ``multinomial`` (``ops/random_multinomial.py``): with replacement by inverse CDF
  (``cumsum`` primitive and comparisons); without replacement by the exponential race.

With ``TENSORLIB_RNG=pytorch`` (or ``tensorlib.random.set_stream("pytorch")``) CPU generators
instead follow PyTorch's CPU stream (Mersenne Twister): ``ops/random_torch_stream.py``.

There is one default generator per device type (``default_generator`` is the CPU one);
``manual_seed``/``seed`` reset all of them. Draws are not differentiable (their outputs are
leaves), except ``normal(mean, std)`` with tensor arguments: it is ``mean + std * randn``
written in differentiable ops, so gradients flow to mean and std as in PyTorch.
"""
import functools
import math
import operator
import os
import threading

import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C import grad_mode as _grad_mode
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.device import canonical
from tensorlib._default_device import factory_device
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty as _empty
from tensorlib._C.tensor_impl import TensorImpl, numel
from tensorlib.ops import pointwise as _p
from tensorlib.ops import random_torch_stream as _ts
from tensorlib.ops._args import sizes_arg, sizes_or_keyword
from tensorlib.ops._unsigned import refuse_unsigned

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm", "normal",
           "bernoulli", "rand_like", "randn_like", "randint_like"]

DEFAULT_SEED = 67280421310721       # PyTorch's default seed
_U64 = (1 << 64) - 1
_EXACT_SPAN = 1 << 53               # randint is exact up to this range width


# ---- the generator --------------------------------------------------------------------------

def _seed_arg(seed):
    """A seed as an unsigned 64-bit int; negatives wrap like PyTorch's."""
    try:
        s = operator.index(seed)
    except TypeError:
        raise RuntimeError(f"manual_seed expected a long, but got "
                           f"{type(seed).__name__}") from None
    if not -(1 << 63) <= s <= _U64:
        raise ValueError("Overflow when unpacking long long")
    return s & _U64


def words_per_number(dtype):
    """32-bit Philox words per number of `dtype` (philox.words_per_number)."""
    return 2 if dtype.itemsize == 8 else 1


_PENDING = object()                  # a Mersenne state still to make (the backend loads lazily)


class Generator:
    """A counter-based Philox generator: state (seed, offset), offset in 32-bit words; or, made
    on the CPU in pytorch stream mode, PyTorch's Mersenne-Twister generator (`_mt`)."""

    __module__ = "tensorlib"

    def __init__(self, device="cpu"):
        self._device_spec = device
        self._canonical = None            # bound on first use: the backend loads lazily
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._lock = threading.Lock()
        self._mt = _PENDING if _ts.get_stream() == "pytorch" else None

    @property
    def _device(self):
        if self._canonical is None:
            self._canonical = canonical(self._device_spec)
        return self._canonical

    @property
    def device(self):
        return self._device

    def _mersenne(self):
        """The PyTorch-stream state of a CPU generator made in pytorch mode, else None."""
        if self._mt is _PENDING:
            self._mt = _ts.MersenneState(self._seed) if self._device.type == "cpu" else None
        return self._mt

    def _use_stream(self, name):
        """Follow `name`'s stream from now on, restarted at the current initial seed."""
        seed_ = self.initial_seed()
        self._mt = _PENDING if name == "pytorch" else None
        self.manual_seed(seed_)

    def manual_seed(self, seed):
        """Restart the stream at `seed`, offset 0. Returns self."""
        s = _seed_arg(seed)
        with self._lock:
            self._seed, self._offset = s, 0
            if self._mt is not None and self._mt is not _PENDING:
                self._mt.seed(s)
        return self

    def seed(self):
        """Seed from the OS's entropy; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        mt = self._mersenne()
        return self._seed if mt is None else mt.initial_seed()

    def get_state(self):
        """A 16-byte uint8 CPU tensor: seed then offset, both little-endian uint64 (PyTorch's
        5056 bytes for a Mersenne-Twister generator)."""
        mt = self._mersenne()
        if mt is not None:
            return mt.get_state()
        from tensorlib.ops.creation import tensor
        raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        return tensor(list(raw), dtype=dt.uint8)

    def set_state(self, new_state):
        """Restore a state from get_state(). Returns self."""
        mt = self._mersenne()
        if mt is not None:
            with self._lock:
                mt.set_state(new_state)
            return self
        if not isinstance(new_state, TensorImpl) or new_state._dtype is not dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != 16:
            raise RuntimeError(f"RNG state is wrong size: expected 16 bytes, got "
                               f"{new_state.numel()}")
        raw = bytes(new_state.reshape(-1).tolist())
        with self._lock:
            self._seed = int.from_bytes(raw[:8], "little")
            self._offset = int.from_bytes(raw[8:], "little")
        return self

    def _reserve(self, words):
        """(seed, offset) for a request of `words` words; the offset moves past them, rounded
        up to a multiple of 4."""
        with self._lock:
            seed, offset = self._seed, self._offset
            self._offset = (offset + -(-words // 4) * 4) & _U64
        return seed, offset

    def __repr__(self):
        return f"<tensorlib.Generator device={self._device}>"


_defaults = {}                       # device type -> its default Generator
_global_seed = DEFAULT_SEED          # what a default generator created later starts from


def _default(device_type):
    g = _defaults.get(device_type)
    if g is None:
        g = _defaults[device_type] = Generator(device_type).manual_seed(_global_seed)
    return g


default_generator = _default("cpu")


def manual_seed(seed):
    """Seed every device type's default generator; returns the CPU one."""
    global _global_seed
    _global_seed = _seed_arg(int(seed))
    for g in _defaults.values():
        g.manual_seed(_global_seed)
    return default_generator


def seed():
    """Seed every default generator from the OS's entropy; returns the seed."""
    s = default_generator.seed()
    manual_seed(s)
    return s


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


# ---- the primitive draws --------------------------------------------------------------------

def _generator(generator, device):
    if generator is None:
        return _default(device.type)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a tensorlib.Generator, not "
                        f"{type(generator).__name__}")
    if generator._device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator._device.type}'")
    return generator


_vmap_hook = None                    # set by tensorlib.func.vmap: sees each generator drawn from


def vmap_random_hook():
    return _vmap_hook


def set_vmap_random_hook(hook):
    """Install hook(generator), called before every draw (vmap's randomness flag); returns
    the previous hook."""
    global _vmap_hook
    previous, _vmap_hook = _vmap_hook, hook
    return previous


def _mersenne(generator, device):
    """The PyTorch-stream state to draw from (pytorch mode on the CPU), else None."""
    g = _generator(generator, device)
    mt = g._mersenne()
    if mt is not None and _vmap_hook is not None:
        _vmap_hook(g)
    return mt


def follows_pytorch_stream(device, generator=None):
    """True when draws on `device` (from `generator`, default: the device's) follow PyTorch's
    CPU stream, so a composite op should make PyTorch's calls in PyTorch's order."""
    g = generator if generator is not None else _defaults.get(getattr(device, "type", None))
    if g is not None and getattr(g, "_mt", _PENDING) is None:
        return False                        # a Philox generator: the common case, decided fast
    return _generator(generator, canonical(device))._mersenne() is not None


def _fill(kind, out, generator):
    """Write the next numbers of the stream into the floating tensor `out` (row-major)."""
    n = numel(out._sizes)
    generator = _generator(generator, out._device)
    if _vmap_hook is not None:
        _vmap_hook(generator)
    seed_, offset = generator._reserve(words_per_number(out._dtype) * n)
    if n:
        lookup(kind, out._device)(out, seed_, offset)
    return out


def _draw(kind, sizes, dtype, device, generator):
    return _fill(kind, _empty(sizes, dtype, device), generator)


def _no_grad(fn):
    """Random draws record no graph: their internal arithmetic is an implementation detail."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        prev = _grad_mode.set_grad_enabled(False)
        try:
            return fn(*args, **kwargs)
        finally:
            _grad_mode.set_grad_enabled(prev)
    return wrapper


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def _float_dtype(dtype, kernel):
    d = dtype or dt.get_default_dtype()
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{d.scalar_name}'")
    return d


def _wide(dtype):
    """The dtype derived draws compute in: float64 for float64, else float32."""
    return dt.float64 if dtype is dt.float64 else dt.float32


# ---- factories ------------------------------------------------------------------------------

def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False,
         pin_memory=False):
    """Uniforms in [0, 1) (complex: real and imaginary parts each)."""
    sizes, dev = sizes_or_keyword(sizes, size), factory_device(device)
    if follows_pytorch_stream(dev, generator):          # PyTorch's: empty(size).uniform_()
        out = _empty(sizes, dtype or dt.get_default_dtype(), dev)
        return _finish(uniform_(out, generator=generator), requires_grad)
    if dtype is not None and dtype.is_complex:
        return _finish(_complex_draw("random_uniform", sizes, dtype, dev, generator, 1.0),
                       requires_grad)
    d = _float_dtype(dtype, "check_uniform_bounds")
    return _finish(_draw("random_uniform", sizes, d, dev, generator), requires_grad)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False,
          pin_memory=False):
    """Standard normals (complex: variance 1 in all, 1/2 in each part, as PyTorch's)."""
    sizes, dev = sizes_or_keyword(sizes, size), factory_device(device)
    if follows_pytorch_stream(dev, generator):          # PyTorch's: empty(size).normal_()
        out = _empty(sizes, dtype or dt.get_default_dtype(), dev)
        return _finish(normal_(out, generator=generator), requires_grad)
    if dtype is not None and dtype.is_complex:
        return _finish(_complex_draw("random_normal", sizes, dtype, dev, generator,
                                     math.sqrt(0.5)), requires_grad)
    d = _float_dtype(dtype, f"normal_kernel_{dev.type}")
    return _finish(_draw("random_normal", sizes, d, dev, generator), requires_grad)


def _complex_draw(kind, sizes, dtype, device, generator, scale):
    """(real, imaginary) pairs drawn as a float tensor with a last dim of 2, viewed as
    complex."""
    from tensorlib.ops.complex import view_as_complex
    real = {"complex64": dt.float32, "complex128": dt.float64}.get(dtype.name)
    if real is None:
        raise NotImplementedError(f"random draws are not implemented for '{dtype.scalar_name}'")
    pairs = _draw(kind, tuple(sizes) + (2,), real, device, generator)
    if scale != 1.0:
        pairs = _p.mul(pairs, scale)
    out = view_as_complex(pairs)
    out._base = None        # a new tensor, as PyTorch's, not a view of the pairs nobody keeps
    return out


def _int_bounds(dtype):
    """The inclusive value range of an integral/bool dtype."""
    if dtype is dt.bool_:
        return 0, 1
    info = np.iinfo(dtype.np)
    return int(info.min), int(info.max)


def _check_int_range(low, high, dtype):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if not dtype.is_floating_point:
        lo, hi = _int_bounds(dtype)
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {dtype}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {dtype}")


@_no_grad
def _random_ints(sizes, low, high, dtype, device, generator):
    """Integers in [low, high) as `dtype`: low + floor(u * span), u a float64 uniform, the
    addition done in int64 (wrapping, so low near the int64 limits stays exact)."""
    _check_int_range(low, high, dtype)
    span = high - low
    x = _p.floor(_p.mul(_draw("random_uniform", sizes, dt.float64, device, generator),
                        float(span)))
    if span <= 1 << 63:
        ints, shift = x.to(dt.int64), low
    else:                                    # x may not fit int64: shift it down by 2**63
        ints = _p.sub(x, float(1 << 63)).to(dt.int64)
        shift = ((low + (1 << 63) + (1 << 63)) & _U64) - (1 << 63)
    out = _p.add(ints, shift)
    if span > _EXACT_SPAN:                   # float rounding may reach high: keep it below
        out = _p.minimum(out, high - 1)
    return out if dtype is dt.int64 else out.to(dtype)


def _int_arg(v, name):
    if isinstance(v, TensorImpl):
        v = v.item()
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"randint(): argument '{name}' must be int, not "
                        f"{type(v).__name__}") from None


def _randint_args(low, high, size):
    """randint(high, size), randint(low, high, size), keywords high=/size= as PyTorch."""
    if size is None:
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    return _int_arg(low, "low"), _int_arg(high, "high"), size


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, pin_memory=False):
    """Integers uniform in [low, high) (int64 by default); see the module notes on exactness."""
    low, high, size = _randint_args(low, high, size)
    d = dtype or dt.int64
    if follows_pytorch_stream(factory_device(device), generator):   # empty(size).random_(l, h)
        out = _empty(sizes_arg((size,)), d, factory_device(device))
        return _finish(random_(out, low, high, generator=generator), requires_grad)
    out = _random_ints(sizes_arg((size,)), low, high, d, factory_device(device), generator)
    return _finish(out, requires_grad)


@_no_grad
def _permutation(n, dtype, device, generator):
    mt = _mersenne(generator, device)
    order = None if mt is None else _ts.randperm_values(n, mt)
    if order is not None:
        return order if dtype is dt.int64 else order.to(dtype)
    if mt is not None:        # n >= 2**32 / 20: argsort keys from a Philox stream seeded by mt
        generator = _ts.philox_seeded_from(mt, device)
    keys = _draw("random_uniform", (n,), dt.float64, device, generator)
    values, order = _empty((n,), dt.float64, device), _empty((n,), dt.int64, device)
    lookup("sort", device)(values, order, keys, 0, False, True)
    return order if dtype is dt.int64 else order.to(dtype)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of 0 .. n-1: the argsort of n float64 uniforms."""
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = dtype or dt.int64
    refuse_unsigned("randperm", d)
    if not d.is_floating_point and n > 0 and n - 1 > _int_bounds(d)[1]:
        raise RuntimeError(f"n is too large for result tensor type: '{d.scalar_name}'")
    return _finish(_permutation(n, d, factory_device(device), generator), requires_grad)


def _check_std_number(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _normal_tensors(mean, std, generator):
    """mean + std * randn, in differentiable ops: gradients reach mean and std. The result
    has mean's dtype (std's when mean is a number), as in PyTorch."""
    ref = mean if isinstance(mean, TensorImpl) else std
    if not ref._dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_{ref._device.type}\" not implemented for "
                                  f"'{ref._dtype.scalar_name}'")
    if isinstance(std, TensorImpl):
        if _p.lt(std.detach(), 0).any().item():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std_number(std)
    shape = broadcast_shapes(*(t._sizes for t in (mean, std) if isinstance(t, TensorImpl)))
    if follows_pytorch_stream(ref._device, generator):
        return _ts.normal_tensors(mean, std, shape, ref, generator)
    z = _draw("random_normal", shape, ref._dtype, ref._device, generator)
    out = _p.add(mean, _p.mul(std, z))
    return out if out._dtype is ref._dtype else out.to(ref._dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False, pin_memory=False):
    """normal(mean, std) with a tensor mean and/or std (broadcast; differentiable), or
    normal(mean: float, std: float, size) like randn."""
    if isinstance(mean, TensorImpl) or isinstance(std, TensorImpl):
        if size is not None:
            raise TypeError("normal(): size is only accepted when mean and std are numbers")
        return _normal_tensors(mean, std, generator)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments: with float "
                        "mean and std, size is required")
    _check_std_number(std)
    if follows_pytorch_stream(factory_device(device), generator):   # empty(size).normal_(m, s)
        out = _empty(sizes_arg((size,)), dtype or dt.get_default_dtype(), factory_device(device))
        return _finish(normal_(out, mean, std, generator=generator), requires_grad)
    out = randn(size, generator=generator, dtype=dtype, device=device)
    if (mean, std) != (0, 1):
        out = _p.add(_p.mul(out, std), mean)
    return _finish(out, requires_grad)


def _like(input, dtype, device):
    return (dtype or input._dtype), (factory_device(device) if device is not None
                                     else input._device)


def _laid_out_like(out, input, memory_format, requires_grad):
    """The random values `out` (drawn in row-major order) laid out in memory_format
    (default preserve_format: input's layout)."""
    from tensorlib.ops import memory_format as mf
    fmt = mf.resolve(mf.preserve_format if memory_format is None else memory_format, input)
    if fmt is not mf.contiguous_format:
        out = mf.contiguous_in(out, fmt)
    return _finish(out, requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    d, dev = _like(input, dtype, device)
    if follows_pytorch_stream(dev, generator):     # PyTorch's: empty_like(input).uniform_()
        out = uniform_(_ts.empty_like(input, d, dev, memory_format), generator=generator)
        return _finish(out, requires_grad)
    return _laid_out_like(rand(input._sizes, generator=generator, dtype=d, device=dev),
                          input, memory_format, requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               memory_format=None):
    d, dev = _like(input, dtype, device)
    if follows_pytorch_stream(dev, generator):     # PyTorch's: empty_like(input).normal_()
        out = normal_(_ts.empty_like(input, d, dev, memory_format), generator=generator)
        return _finish(out, requires_grad)
    return _laid_out_like(randn(input._sizes, generator=generator, dtype=d, device=dev),
                          input, memory_format, requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None):
    """randint_like(input, high) or randint_like(input, low, high); input's dtype by default."""
    if high is None:
        low, high = 0, low
    d, dev = _like(input, dtype, device)
    if follows_pytorch_stream(dev, generator):     # empty_like(input).random_(low, high)
        out = _ts.empty_like(input, d, dev, memory_format)
        return _finish(random_(out, low, high, generator=generator), requires_grad)
    out = _random_ints(input._sizes, _int_arg(low, "low"), _int_arg(high, "high"), d, dev,
                       generator)
    return _finish(out, requires_grad)


# ---- bernoulli and multinomial --------------------------------------------------------------

def _all_in_unit_interval(p):
    """True when every element is in [0, 1] (NaN is not)."""
    return _p.logical_and(_p.ge(p, 0), _p.le(p, 1)).all().item()


def _check_p_number(p, name="bernoulli_"):
    if not 0 <= p <= 1:
        raise RuntimeError(f"{name} expects p to be in [0, 1], but got p={p:g}")


@_no_grad
def _bernoulli_mask(shape, p, device, generator):
    """A bool tensor of `shape`: uniform < p (p a number or a tensor broadcasting to shape)."""
    wide = _wide(p._dtype) if isinstance(p, TensorImpl) else dt.float64
    return _p.lt(_draw("random_uniform", shape, wide, device, generator), p)


def bernoulli(input, p=None, *, generator=None):
    """Draws 0/1 with probability `input` (or the number p), in input's dtype."""
    if p is None:
        if not input._dtype.is_floating_point:
            raise NotImplementedError(f"\"bernoulli_tensor_{input._device.type}_p_\" not "
                                      f"implemented for '{input._dtype.scalar_name}'")
        probs = input.detach()
        if not _all_in_unit_interval(probs):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    else:
        if isinstance(p, TensorImpl):
            raise TypeError("bernoulli(): argument 'p' must be float, not Tensor")
        _check_p_number(p)
        probs = p
    if follows_pytorch_stream(input._device, generator):   # empty(sizes).bernoulli_(probs)
        out = _empty(input._sizes, input._dtype, input._device)
        return bernoulli_(out, probs, generator=generator)
    mask = _bernoulli_mask(input._sizes, probs, input._device, generator)
    return mask.to(input._dtype)


# ---- in-place Tensor methods ----------------------------------------------------------------

def _write(self, values):
    """Overwrite self with `values` through copy_ (version bump; autograd as for copy_: a
    leaf that requires grad refuses, a graph tensor's old history is cut)."""
    return self.copy_(values)


def _require_float(self, kernel):
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{self._dtype.scalar_name}'")


@_no_grad
def _uniform_values(self, from_, to, generator):
    mt = _mersenne(generator, self._device)
    if mt is not None:
        return _ts.uniform_values(self, mt, from_, to)
    u = _draw("random_uniform", self._sizes, self._dtype, self._device, generator)
    if (from_, to) == (0, 1):
        return u
    return _p.add(_p.mul(u.to(_wide(self._dtype)), to - from_), from_)


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fill with uniforms in [from_, to) (complex: each part, as PyTorch's)."""
    if self._dtype.is_complex:
        uniform_(_parts(self), from_, to, generator=generator)
        return self
    _require_float(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    return _write(self, _uniform_values(self, from_, to, generator))


@_no_grad
def _normal_values(self, mean, std, generator):
    mt = _mersenne(generator, self._device)
    if mt is not None:
        return _ts.normal_values(self, mt, mean, std)
    z = _draw("random_normal", self._sizes, self._dtype, self._device, generator)
    if (mean, std) == (0, 1):
        return z
    return _p.add(_p.mul(z.to(_wide(self._dtype)), std), mean)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normals of the given mean and std (complex: std/sqrt(2) in each part and the
    mean added to both, as PyTorch's)."""
    if self._dtype.is_complex:
        _check_std_number(std)
        normal_(_parts(self), mean, std * math.sqrt(0.5), generator=generator)
        return self
    _require_float(self, f"normal_kernel_{self._device.type}")
    _check_std_number(std)
    return _write(self, _normal_values(self, mean, std, generator))


def _parts(t):
    """A complex tensor's (real, imaginary) float view, written through by the fills."""
    from tensorlib.ops.complex import view_as_real
    return view_as_real(t)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 drawn with probability p (a number or a tensor broadcasting to self)."""
    if isinstance(p, TensorImpl):
        if not _all_in_unit_interval(p.detach()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        p = p.detach()
    else:
        _check_p_number(p)
    mt = _mersenne(generator, self._device)
    if mt is not None:
        return _write(self, _ts.bernoulli_values(self, mt, p))
    return _write(self, _bernoulli_mask(self._sizes, p, self._device, generator))


_MISSING = object()


def _float_random_limit(dtype):
    """random_()'s default bound for floats: every integer up to 2**digits is exact."""
    digits = {dt.float16: 11, dt.bfloat16: 8, dt.float32: 24, dt.float64: 53}[dtype]
    return (1 << digits) + 1


def random_(self, from_=_MISSING, to=_MISSING, *, generator=None):
    """random_(): integers in [0, 2**mantissa] (floats) or [0, max] (integers);
    random_(to): [0, to); random_(from, to): [from, to); random_(from, None): [from, max]."""
    bounded = from_ is not _MISSING
    if to is _MISSING:
        from_, to = (0, None) if from_ is _MISSING else (0, from_)
    elif from_ is _MISSING:
        from_ = 0
    if to is None:
        d = self._dtype
        to = _float_random_limit(d) if d.is_floating_point else _int_bounds(d)[1] + 1
    mt = _mersenne(generator, self._device)
    if mt is not None:
        low, high = _int_arg(from_, "from"), _int_arg(to, "to")
        _check_int_range(low, high, self._dtype)
        return _write(self, _ts.int_values(self, mt, low, high, bounded))
    values = _random_ints(self._sizes, _int_arg(from_, "from"), _int_arg(to, "to"),
                          self._dtype, self._device, generator)
    return _write(self, values)


@_no_grad
def _exponential_values(self, lambd, generator):
    mt = _mersenne(generator, self._device)
    if mt is not None:
        return _ts.exponential_values(self, mt, lambd)
    u = _draw("random_uniform", self._sizes, _wide(self._dtype), self._device, generator)
    return _p.div(_p.neg(_p.log(_p.sub(1.0, u))), lambd)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exp(lambd) draws: -log(1 - u) / lambd."""
    _require_float(self, f"exponential_{self._device.type}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _write(self, _exponential_values(self, lambd, generator))


TENSOR_METHODS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_,
                  "random_": random_, "exponential_": exponential_, "bernoulli": bernoulli}
