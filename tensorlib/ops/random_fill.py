"""The sampling PyTorch offers beside the basic draws: torch.poisson, torch.binomial and
torch._standard_gamma (draws from a tensor of rates / trials / shapes), and the in-place fills
cauchy_, geometric_ and log_normal_. Each transforms uniforms or normals of the given
(default: global) generator, so manual_seed makes them repeatable. In pytorch stream mode
(ops/random_torch_stream.py) the three fills, poisson, binomial and _standard_gamma draw
PyTorch's numbers (its samplers, in C)."""
import math

import tensorlib._C.dtypes as dt
from tensorlib.ops import random_torch_stream as _ts
from tensorlib.ops.random import _generator, _mersenne, _require_float, _write

__all__ = ["binomial", "poisson", "_standard_gamma"]

_CHUNK = 64          # binomial trials drawn per pass (bounds the memory of one pass)


def _uniform(self, dtype, generator):
    from tensorlib.ops.random import rand
    return rand(self.shape, dtype=dtype, device=self.device,
                generator=_generator(generator, self.device))


def poisson(input, generator=None):  # noqa: A002 - PyTorch's name
    """Poisson(input) counts, in input's dtype."""
    from tensorlib.distributions._sampling import sample_poisson
    from tensorlib.autograd.grad_mode import no_grad
    _require_float(input, "poisson_cpu")
    with no_grad():
        rate = input.detach()
        if rate.numel() and bool((rate < 0).any()):
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        mt = _mersenne(generator, rate.device)
        if mt is not None:
            return _ts.poisson_values(rate, mt)
        return sample_poisson(rate, tuple(rate.shape), _generator(generator, rate.device))


def _standard_gamma(input, generator=None):  # noqa: A002 - PyTorch's name
    """torch._standard_gamma: a Gamma(input, 1) draw per element (float32/float64, as
    PyTorch's gamma_cpu), differentiable in input through the implicit gradient."""
    from tensorlib.distributions._sampling import standard_gamma
    if input.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f"\"gamma_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return standard_gamma(input, tuple(input.shape), generator)


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws: `count` Bernoulli(prob) trials summed, a pass of up to
    64 trials at a time."""
    from tensorlib.autograd.grad_mode import no_grad
    from tensorlib.ops.creation import arange, zeros
    from tensorlib.ops.random import rand
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype.scalar_name}")
    if not prob.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for prob, got: "
                         f"{prob.dtype.scalar_name}")
    with no_grad():
        from tensorlib._C.broadcast import broadcast_shapes
        shape = tuple(broadcast_shapes(count.shape, prob.shape))
        n, p = count.detach().expand(shape), prob.detach().expand(shape)
        mt = _mersenne(generator, n.device)
        if mt is not None:
            return _ts.binomial_values(n, p.to(n.dtype), mt)
        generator = _generator(generator, n.device)
        top = int(n.max().item()) if n.numel() else 0
        out = zeros(shape, dtype=count.dtype, device=count.device)
        for start in range(0, max(top, 0), _CHUNK):
            width = min(_CHUNK, top - start)
            u = rand((width,) + shape, dtype=p.dtype, device=p.device, generator=generator)
            trial = arange(start, start + width, dtype=n.dtype, device=n.device)
            trial = trial.view((width,) + (1,) * len(shape))
            out = out + ((u < p) & (trial < n)).to(count.dtype).sum(0)
        return out


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) draws: median + sigma * tan(pi (u - 1/2))."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_c_name(self.dtype)}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    from tensorlib.autograd.grad_mode import no_grad
    with no_grad():
        mt = _mersenne(generator, self.device)
        if mt is not None:
            return _write(self, _ts.cauchy_values(self, mt, median, sigma))
        u = _uniform(self, _wide(self.dtype), generator)
        values = ((u - 0.5) * math.pi).tan() * sigma + median
    return _write(self, values)


def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (>= 1):
    ceil(log(u) / log(1 - p))."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    from tensorlib.autograd.grad_mode import no_grad
    with no_grad():
        mt = _mersenne(generator, self.device)
        if mt is not None:
            return _write(self, _ts.geometric_values(self, mt, p))
        u = _uniform(self, dt.float64, generator)
        values = (u.log() / math.log1p(-p)).ceil().clamp(min=1)
    return _write(self, values)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std)) draws."""
    _require_float(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    from tensorlib.autograd.grad_mode import no_grad
    from tensorlib.ops.random import randn
    with no_grad():
        mt = _mersenne(generator, self.device)
        if mt is not None:
            return _write(self, _ts.log_normal_values(self, mt, mean, std))
        z = randn(self.shape, dtype=_wide(self.dtype), device=self.device,
                  generator=_generator(generator, self.device))
        values = (z * std + mean).exp()
    return _write(self, values)


def _wide(dtype):
    return dt.float32 if dtype in (dt.float16, dt.bfloat16) else dtype


def _c_name(dtype):
    """PyTorch's C type name of an integer or bool dtype, as its Cauchy error spells it."""
    return {"Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char",
            "Byte": "unsigned char", "Bool": "bool"}.get(dtype.scalar_name, dtype.scalar_name)


TENSOR_METHODS = {"cauchy_": cauchy_, "geometric_": geometric_, "log_normal_": log_normal_}
