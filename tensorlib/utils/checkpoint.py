"""Activation checkpointing (torch.utils.checkpoint): a segment's forward runs without
keeping its activations; backward runs it again, with grad, and backpropagates through the
recomputation. The RNG states of the CPU and of the inputs' devices are saved before the
forward and restored for the recomputation, so dropout draws the same masks.

NOTE [ One mechanism for both use_reentrant values ]
Both run as one autograd Function whose backward recomputes the segment and calls
tensorlib.autograd.backward on it, so gradients of the segment's parameters accumulate into
their .grad as torch's reentrant checkpoint does. A dummy input that requires grad keeps the
node in the graph when no input does (torch's non-reentrant variant allows that case).
Like torch's reentrant variant, it does not support tensorlib.autograd.grad or
backward(inputs=...) through the segment (the parameters' gradients go to .grad)."""
import contextlib
import warnings

import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.ops import random as _random

__all__ = ["checkpoint", "checkpoint_sequential"]


def _devices(tensors):
    return sorted({t.device.type for t in tensors} | {"cpu"})


def _rng_states(device_types):
    return {d: _random._default(d).get_state() for d in device_types}


def _restore_rng(states):
    for d, s in states.items():
        _random._default(d).set_state(s)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, preserve_rng_state, n_args, *args):
        ctx.run = run
        inputs = args[:n_args]
        tensors = [a for a in inputs if isinstance(a, tensorlib.Tensor)]
        ctx.rng = _rng_states(_devices(tensors)) if preserve_rng_state else None
        ctx.autocast = _autocast_state()
        ctx.slots = [isinstance(a, tensorlib.Tensor) for a in inputs]
        ctx.others = [None if s else a for a, s in zip(inputs, ctx.slots)]
        ctx.save_for_backward(*tensors)
        with tensorlib.no_grad():
            out = run(*inputs)
        return out

    @staticmethod
    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        inputs = []
        for is_tensor, other in zip(ctx.slots, ctx.others):
            if is_tensor:
                t = next(saved)
                inputs.append(t.detach().requires_grad_(t.requires_grad))
            else:
                inputs.append(other)
        outer = _rng_states(list(ctx.rng)) if ctx.rng is not None else None
        try:
            if ctx.rng is not None:
                _restore_rng(ctx.rng)
            with tensorlib.enable_grad(), _autocast_region(ctx.autocast):
                out = ctx.run(*inputs)
        finally:
            if outer is not None:
                _restore_rng(outer)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, tensorlib.Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        tensorlib.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        input_grads = tuple(x.grad if isinstance(x, tensorlib.Tensor) else None
                            for x in inputs)
        return (None, None, None) + input_grads + (None,)


def _autocast_state():
    from tensorlib.amp import autocast_mode as m
    return [(d, m.get_autocast_dtype(d)) for d, on in m._enabled.items() if on]


def _autocast_region(state):
    """The recomputation runs under the autocast regions that the forward ran under."""
    stack = contextlib.ExitStack()
    for device_type, dtype in state:
        stack.enter_context(tensorlib.autocast(device_type, dtype=dtype))
    return stack


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), keeping only its inputs for backward (see the NOTE)."""
    if use_reentrant is None:
        warnings.warn("tensorlib.utils.checkpoint: the use_reentrant parameter should be "
                      "passed explicitly. Both values run tensorlib's one recomputing "
                      "checkpoint; pass use_reentrant=False (torch's recommended value).",
                      stacklevel=2)
    if context_fn is not None:
        raise NotImplementedError("checkpoint(context_fn=...) is not supported by "
                                  "tensorlib.utils.checkpoint")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(*inputs):
        return function(*inputs, **kwargs)
    if not tensorlib.is_grad_enabled():
        return run(*args)
    dummy = tensorlib.empty((), requires_grad=True)
    out = _Checkpoint.apply(run, preserve_rng_state, len(args), *args, dummy)
    return out


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Run a Sequential (or list of modules) in `segments` checkpointed chunks; the last
    chunk runs normally, as torch does."""
    if isinstance(functions, tensorlib.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run_range(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_range(start, end), input,  # noqa: A001
                           use_reentrant=True if use_reentrant is None else use_reentrant,
                           **kwargs)
    return run_range(end + 1, len(functions) - 1)(input)
