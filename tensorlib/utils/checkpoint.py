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
backward(inputs=...) through the segment (the parameters' gradients go to .grad).
`context_fn` (use_reentrant=False) is honoured: the forward runs in its first context, the
recomputation in its second. The whole segment is always recomputed, so early stopping
(set_checkpoint_early_stop) changes nothing, and per-op selective checkpointing
(create_selective_checkpoint_contexts) is not supported."""
import contextlib
import enum
import warnings

import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.ops import random as _random

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "CheckpointPolicy", "DefaultDeviceType", "check_backward_validity",
           "create_selective_checkpoint_contexts", "detach_variable",
           "get_device_states", "noop_context_fn", "set_checkpoint_debug_enabled",
           "set_checkpoint_early_stop", "set_device_states"]

_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = True


class CheckpointError(RuntimeError):
    """A checkpointed segment's recomputation disagreed with its forward."""


class CheckpointPolicy(enum.Enum):
    """Per-op decisions of selective checkpointing: save the output in forward or recompute
    it in backward (MUST_* may not be overridden by other subsystems)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def noop_context_fn():
    """checkpoint's default context_fn: no context around forward or recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's `debug` inside the block (None defers to the argument)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether recomputation may stop once the needed tensors exist. tensorlib recomputes
    whole segments either way (same results), so the flag is only recorded."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Selective activation checkpointing needs a per-op hook into the forward and the
    recomputation, which tensorlib's checkpoint does not have: NotImplementedError."""
    if not isinstance(policy_fn_or_list, list) and not callable(policy_fn_or_list):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    raise NotImplementedError("create_selective_checkpoint_contexts: selective (per-op) "
                              "activation checkpointing is not supported by "
                              "tensorlib.utils.checkpoint, which recomputes whole segments; "
                              "use checkpoint without a context_fn")


def detach_variable(inputs):
    """The tuple's tensors detached, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad)
                 if isinstance(x, tensorlib.Tensor) else x for x in inputs)


def check_backward_validity(inputs):
    """Warn when no input requires grad (the checkpointed gradients would all be None)."""
    if not any(x.requires_grad for x in inputs if isinstance(x, tensorlib.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG states set_device_states restores when not told (cuda
    unless set, as torch)."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type or "cuda"


def _device_tensors(args):
    from tensorlib.utils._pytree import tree_flatten
    return [t for t in tree_flatten(args)[0] if isinstance(t, tensorlib.Tensor)
            and t.device.type not in ("cpu", "meta")]


def get_device_states(*args):
    """(device ids, RNG states) of the non-CPU devices args' tensors live on (one state per
    tensor, as torch), for set_device_states."""
    tensors = _device_tensors(args)
    ids = [t.get_device() for t in tensors]
    states = [_random._default(t.device.type).get_state() for t in tensors]
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restore get_device_states' RNG states (device_type: the devices' type; default
    DefaultDeviceType's)."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    for _, state in zip(devices, states):
        _random._default(device_type).set_state(state)


def _devices(tensors):
    return sorted({t.device.type for t in tensors} | {"cpu"})


def _rng_states(device_types):
    return {d: _random._default(d).get_state() for d in device_types}


def _restore_rng(states):
    for d, s in states.items():
        _random._default(d).set_state(s)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, contexts, preserve_rng_state, n_args, *args):
        ctx.run = run
        forward_context, ctx.recompute_context = contexts
        inputs = args[:n_args]
        tensors = [a for a in inputs if isinstance(a, tensorlib.Tensor)]
        ctx.rng = _rng_states(_devices(tensors)) if preserve_rng_state else None
        ctx.autocast = _autocast_state()
        ctx.slots = [isinstance(a, tensorlib.Tensor) for a in inputs]
        ctx.others = [None if s else a for a, s in zip(inputs, ctx.slots)]
        ctx.save_for_backward(*tensors)
        with tensorlib.no_grad(), forward_context:
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
            with tensorlib.enable_grad(), _autocast_region(ctx.autocast), \
                    ctx.recompute_context:
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
        return (None, None, None, None) + input_grads + (None,)


def _autocast_state():
    from tensorlib.amp import autocast_mode as m
    return [(d, m.get_autocast_dtype(d)) for d, on in m.enabled_state()[0].items() if on]


def _autocast_region(state):
    """The recomputation runs under the autocast regions that the forward ran under."""
    stack = contextlib.ExitStack()
    for device_type, dtype in state:
        stack.enter_context(tensorlib.autocast(device_type, dtype=dtype))
    return stack


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), keeping only its inputs for backward (see the NOTE)."""
    if use_reentrant is None:
        warnings.warn("tensorlib.utils.checkpoint: the use_reentrant parameter should be "
                      "passed explicitly. Both values run tensorlib's one recomputing "
                      "checkpoint; pass use_reentrant=False (torch's recommended value).",
                      stacklevel=2)
    if use_reentrant is not False and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
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
    return _Checkpoint.apply(run, context_fn(), preserve_rng_state, len(args), *args, dummy)


class CheckpointFunction(Function):
    """torch's reentrant checkpoint as an autograd Function:
    CheckpointFunction.apply(run_function, preserve_rng_state, *args)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        return _Checkpoint.forward(ctx, run_function, noop_context_fn(), preserve_rng_state,
                                   len(args), *args)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + _Checkpoint.backward(ctx, *grads)[4:-1]


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
