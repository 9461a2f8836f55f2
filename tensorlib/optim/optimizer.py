r"""The optimizer base class (torch.optim.Optimizer): parameter groups, per-parameter state,
state_dict / load_state_dict, zero_grad and step hooks. `step` runs the closure and then
each group through `_step_group`, which an algorithm implements: it gathers the group's
tensors and state (`_functional.collect`) and calls the algorithm's functional form (e.g.
`tensorlib.optim.adam.adam`); see `_functional.py` for the single-tensor and foreach (flat,
few-launch) tiers. Constructor checks are in `_validation.py`."""
import functools
import itertools
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy

import tensorlib._C.dtypes as dt
from tensorlib._C import grad_mode as _grad_mode
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.grad_mode import enable_grad
from tensorlib.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    """torch.typename: 'torch.FloatTensor'-like names for tensors, module.qualname otherwise."""
    if isinstance(obj, TensorImpl):
        return "tensorlib.Tensor"
    cls = type(obj)
    module = cls.__module__
    if module in ("builtins", "__builtin__", None):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _to_scalar(x):
    """A 1-element tensor hyperparameter (lr=tensor(0.1)) as a Python number."""
    if isinstance(x, TensorImpl):
        return x.item()
    return x


def _default_foreach(params, differentiable=False):
    """foreach=None resolves to True when every parameter lives on a non-CPU device (where a
    kernel launch is the cost to save), as torch.optim does for CUDA; on CPU a launch costs
    about a microsecond and the flat path's gathers cost more than they save (see
    `_functional.py`)."""
    if differentiable:
        return False
    return all(p is None or p._device.type != "cpu" for p in params)


def _resolve_foreach(group, params):
    """The group's tier: fused and foreach=True/False as given, foreach=None the default for
    where `params` live."""
    if group.get("fused"):
        return True
    foreach = group.get("foreach")
    if foreach is None:
        return _default_foreach(params, group.get("differentiable", False))
    return bool(foreach)


def _use_grad_for_differentiable(step):
    """Run `step` with grad mode off unless the optimizer was built with differentiable=True."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        prev = _grad_mode.set_grad_enabled(bool(self.defaults.get("differentiable", False)))
        try:
            return step(self, *args, **kwargs)
        finally:
            _grad_mode.set_grad_enabled(prev)
    return wrapper


def _with_step_hooks(step):
    """Wraps a subclass's step: pre hooks may replace (args, kwargs); post hooks observe."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        # a subclass that never ran Optimizer.__init__ (a wrapper around another optimizer,
        # as PCGrad is) has no hook tables; PyTorch, which wraps step in __init__, runs it
        pre = getattr(self, "_optimizer_step_pre_hooks", None)
        post = getattr(self, "_optimizer_step_post_hooks", None)
        if not pre and not post:          # hooks cost nothing when unused
            return step(self, *args, **kwargs)
        for hook in list(pre.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        out = step(self, *args, **kwargs)
        for hook in list(post.values()):
            hook(self, args, kwargs)
        return out
    wrapper._hooked = True
    return wrapper


# shared docstring fragments, as in torch.optim.optimizer
_params_doc = r"""params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups"""

_capturable_doc = ("capturable (bool, optional): accepted for PyTorch compatibility "
                   "(no effect)")

_foreach_doc = r"""foreach (bool, optional): whether the foreach implementation of the optimizer
            is used: the group's tensors are updated as one flat tensor per (device, dtype),
            a handful of kernel launches per step instead of a handful per parameter. If
            unspecified by the user (None), foreach is used when every parameter is on a
            non-CPU device. (default: None)"""

_fused_doc = r"""fused (bool, optional): accepted for PyTorch compatibility; tensorlib routes it to
            the foreach (flat) implementation, which is a single pass over the group's
            parameters when they share one contiguous storage. (default: None)"""

_maximize_doc = r"""maximize (bool, optional): maximize the objective with respect to the
            params, instead of minimizing (default: False)"""

_differentiable_doc = r"""differentiable (bool, optional): whether autograd should occur
            through the optimizer step (default: False)"""


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of tensors or dicts; dicts define parameter groups
            (``{'params': [...], 'lr': ...}``) whose options override ``defaults``.
        defaults (dict): default values of the optimization options of every group.
    """

    # options a group pickled or saved by an older version may lack, and their values
    _group_defaults = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, TensorImpl):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling and printing ----------------------------------------------------------
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- hooks --------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), run before step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks, hook, key=object())
        self._optimizer_step_pre_hooks[handle._key] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, run after step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks, hook, key=object())
        self._optimizer_step_post_hooks[handle._key] = hook
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _register(container, hook, prepend):
        handle = RemovableHandle(container, hook, key=object())
        container[handle._key] = hook
        if prepend:
            container.move_to_end(handle._key, last=False)
        return handle

    # ---- state_dict ---------------------------------------------------------------------
    def state_dict(self):
        r"""The optimizer's state as a dict: ``state`` maps integer parameter ids (their
        position across all groups, in order) to each parameter's state, and
        ``param_groups`` lists each group's options with ``params`` as those ids. Tensors
        are the live state (not copies), as in PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, TensorImpl) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        """Floating state follows the parameter's dtype and device; `step` stays as saved
        (PyTorch keeps it on the CPU unless fused/capturable). Unlike PyTorch, the value is
        always a copy, so an optimizer loaded from another's live state_dict never shares
        buffers with it."""
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                out = value.to(dtype=dt.float32, device=param.device)
            else:
                out = value
        elif param.is_floating_point():
            out = value.to(dtype=param.dtype, device=param.device)
        else:
            out = value.to(device=param.device)
        return out.clone() if out is value else out

    def load_state_dict(self, state_dict):
        r"""Load a state_dict made by `state_dict()` (group sizes must match)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, TensorImpl):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v, param_id=param_id,
                                         param_groups=param_groups) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k,
                                     param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- gradients and groups -----------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        r"""Reset the gradients of all optimized tensors: to None (default), or to zeros in
        place with ``set_to_none=False``."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    prev = _grad_mode.set_grad_enabled(False)
                    try:
                        g.zero_()
                    finally:
                        _grad_mode.set_grad_enabled(prev)

    @_with_step_hooks
    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model
                and returns the loss.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._step_group(group)
        return loss

    def _step_group(self, group):
        """Update one parameter group (implemented by each algorithm)."""
        raise NotImplementedError(f"{type(self).__name__} must implement step() or _step_group()")

    def add_param_group(self, param_group):
        r"""Add a parameter group (a dict with ``params`` and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, TensorImpl):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        extracted, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple) and len(param) == 2 and isinstance(param[0], str):
                names.append(param[0])
                param = param[1]
            extracted.append(param)
        if names:
            if len(names) != len(extracted):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["params"] = extracted
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, TensorImpl):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
