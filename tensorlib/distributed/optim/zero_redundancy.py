"""ZeroRedundancyOptimizer (torch.distributed.optim): ZeRO stage 1, optimizer state sharded over
the ranks of a process group.

Every rank holds all the parameters and (after DDP's all-reduce) the same gradients, but each
parameter is stepped by one rank only: the rank keeps the optimizer state (Adam's moments...)
of its shard and nothing else, so the state's memory is divided by the world size. After its
local step a rank broadcasts its shard's new values to the others. The shards are PyTorch's:
within each parameter group the parameters, largest first, go one by one to the rank holding
the fewest elements so far (the lowest such rank on a tie), so a checkpoint's indices and
which rank owns which state agree with PyTorch's for the same model."""
import copy
import itertools

import tensorlib.distributed as dist
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.optim.optimizer import Optimizer, _typename

__all__ = ["ZeroRedundancyOptimizer"]


def _to_device(value, device):
    """A copy of `value` with every tensor in its lists, tuples and dicts moved to `device`."""
    if isinstance(value, TensorImpl):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        moved = [_to_device(v, device) for v in value]
        return moved if isinstance(value, list) else tuple(moved)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def _copy_options(src_groups, dst_groups):
    """Every option but `params` (lr, momentum, a scheduler's initial_lr...) from the groups
    of one optimizer to the matching groups of the other."""
    if len(src_groups) != len(dst_groups):
        raise RuntimeError(f"ZeroRedundancyOptimizer: {len(src_groups)} parameter groups "
                           f"against {len(dst_groups)} in the local optimizer")
    for src, dst in zip(src_groups, dst_groups):
        for key, value in src.items():
            if key != "params":
                dst[key] = value


class ZeroRedundancyOptimizer(Optimizer):
    r"""Wrap `optimizer_class` so that each rank of `process_group` (the world by default)
    keeps the state of, and steps, only its shard of `params`; `step()` then broadcasts each
    shard from its owner. `defaults` go to `optimizer_class`. The local optimizer is
    ``self.optim``; ``self.param_groups`` are the whole groups, and their options (a
    scheduler's lr) reach the local optimizer at every step.

    `state_dict()` needs `consolidate_state_dict(to=rank)` on every rank first, and then
    answers on `rank` only. With ``parameters_as_bucket_view=True`` each rank's shard lives in
    one flat tensor (the parameters become views of it) and is broadcast in one message.
    ``overlap_with_ddp=True`` (the step inside DDP's communication hook) is not supported."""

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported by "
                "tensorlib (it needs DDP's ZeRO communication hooks); use the default "
                "overlap_with_ddp=False and call step() after backward()")
        params = self._checked_params(params)
        self._ready = False
        self._shards_cache = None
        super().__init__(params, defaults)
        self.process_group = dist.group.WORLD if process_group is None else process_group
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self.global_rank = dist.get_global_rank(self.process_group, self.rank)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._default_device = self._all_params()[0].device
        self._optim_defaults = defaults
        self.optim = optimizer_class(self._shards()[self.rank], **defaults)
        _copy_options(self.optim.param_groups, self.param_groups)
        self._trainable = [p.requires_grad for p in self._all_params()]
        self._buckets = {}
        self._build_buckets()
        self._all_state_dicts = []
        self._ready = True

    # ---- the parameters and their shards ------------------------------------------------
    @staticmethod
    def _checked_params(params):
        if isinstance(params, TensorImpl):
            raise TypeError("`params` argument should be an iterable of Tensors, but got "
                            + _typename(params))
        try:
            params = list(params)
        except TypeError:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params)) from None
        if not params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, dict) for p in params):
            for group in params:
                if "params" not in group:
                    raise ValueError("Each parameter group passed-in via `params` must have a "
                                     "'params' key mapping to the parameters in the group")
            flat = [p for g in params for p in
                    ([g["params"]] if isinstance(g["params"], TensorImpl) else g["params"])]
        elif all(isinstance(p, TensorImpl) for p in params):
            flat = params
        else:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        kinds = {(p.dtype, p.device.type, p.is_sparse) for p in flat}
        if len(kinds) > 1 or any(sparse for _, _, sparse in kinds):
            names = sorted({f"{'sparse ' if s else ''}{d} on {t}" for d, t, s in kinds})
            raise ValueError("ZeroRedundancyOptimizer only supports using the same dense type "
                             f"for all parameters but got {' and '.join(names)}")
        return params

    def _all_params(self):
        """Every parameter, in the order of the groups (the state_dict's indices)."""
        return list(itertools.chain.from_iterable(g["params"] for g in self.param_groups))

    def _shards(self):
        """shards[rank]: that rank's parameter groups (each a copy of a whole group's options
        with its share of the parameters); one entry per group on every rank, maybe with no
        parameters."""
        if self._shards_cache is None:
            shards = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                mine = [[] for _ in range(self.world_size)]
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = sizes.index(min(sizes))
                    mine[rank].append(p)
                    sizes[rank] += p.numel()
                for rank, owned in enumerate(mine):
                    shard = copy.copy(group)
                    shard["params"] = owned
                    shards[rank].append(shard)
            self._shards_cache = shards
        return self._shards_cache

    def _owner(self):
        """id(parameter) -> the group rank that steps it."""
        return {id(p): rank for rank, groups in enumerate(self._shards())
                for g in groups for p in g["params"]}

    def add_param_group(self, param_group):
        """Add a group on every rank (call it on all of them): the new group's parameters
        are shared out as the constructor's were, without moving the earlier ones."""
        super().add_param_group(param_group)
        if not self._ready:
            return
        self._shards_cache = None
        groups = self._shards()[self.rank]
        if len(groups) == len(self.optim.param_groups) + 1:
            self.optim.add_param_group(groups[-1])
        self._trainable = [p.requires_grad for p in self._all_params()]
        self._build_buckets()

    # ---- buckets (parameters_as_bucket_view) --------------------------------------------
    def _build_buckets(self):
        """One flat tensor per (device, rank) holding that rank's trainable parameters of the
        device, which become views of it; a frozen parameter gets storage of its own."""
        self._buckets = {}
        if not self.parameters_as_bucket_view:
            return
        from tensorlib.ops.creation import empty, zeros
        for rank, groups in enumerate(self._shards()):
            by_device = {}
            for p in itertools.chain.from_iterable(g["params"] for g in groups):
                by_device.setdefault(p.device, []).append(p)
            for device, params in by_device.items():
                trainable = [p for p in params if p.requires_grad]
                for p in params:
                    if not p.requires_grad:
                        p.data = p.data.detach().clone()
                if not trainable:
                    self._buckets[(device, rank)] = zeros(1, device=device)
                    continue
                bucket = empty(sum(p.numel() for p in trainable), dtype=trainable[0].dtype,
                               device=device)
                offset = 0
                for p in trainable:
                    piece = bucket[offset:offset + p.numel()]
                    piece.copy_(p.data.flatten())
                    p.data = piece.view_as(p.data)
                    offset += p.numel()
                self._buckets[(device, rank)] = bucket

    # ---- stepping -----------------------------------------------------------------------
    def step(self, closure=None, **kwargs):
        """Step this rank's shard with the local optimizer, then give every rank every
        shard's new values. Returns the closure's loss, if any."""
        trainable = [p.requires_grad for p in self._all_params()]
        if trainable != self._trainable:
            # a parameter was frozen or unfrozen: the buckets hold the trainable ones only
            self._trainable = trainable
            self._build_buckets()
        _copy_options(self.param_groups, self.optim.param_groups)
        if closure is None:
            loss = self.optim.step(**kwargs)
        else:
            loss = self.optim.step(closure=closure, **kwargs)
        _copy_options(self.optim.param_groups, self.param_groups)
        self._broadcast_shards()
        return loss

    def _broadcast_shards(self):
        if self.world_size == 1:
            return
        works = []
        for rank in range(self.world_size):
            src = dist.get_global_rank(self.process_group, rank)
            if self.parameters_as_bucket_view:
                tensors = [b for (_, r), b in self._buckets.items() if r == rank]
            else:
                tensors = [p.data for g in self._shards()[rank] for p in g["params"]]
            works.extend(dist.broadcast(t, src=src, group=self.process_group, async_op=True)
                         for t in tensors)
        for work in works:
            work.wait()

    # ---- state_dict ---------------------------------------------------------------------
    def consolidate_state_dict(self, to=0):
        """Gather every rank's local optimizer state on group rank `to` (call it on all
        ranks), for `state_dict()` there. The states travel pickled, among the job's own
        ranks (as PyTorch's do)."""
        _copy_options(self.param_groups, self.optim.param_groups)
        mine = _to_device(self.optim.state_dict(), "cpu")
        if self.world_size == 1:
            self._all_state_dicts = [mine]
            return
        dst = dist.get_global_rank(self.process_group, to)
        gathered = [None] * self.world_size if self.rank == to else None
        dist.gather_object(mine, gathered, dst=dst, group=self.process_group)
        self._all_state_dicts = gathered if self.rank == to else []

    def state_dict(self):
        """The whole optimizer's state, as the wrapped optimizer class would give it for all
        the parameters, from the last `consolidate_state_dict` to this rank."""
        if not self._all_state_dicts:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you "
                "meant to save the global state.")
        state_dict = super().state_dict()
        index = {id(p): i for i, p in enumerate(self._all_params())}
        for rank, local in enumerate(self._all_state_dicts):
            for local_group, group in zip(local["param_groups"], self._shards()[rank]):
                for local_index, param in zip(local_group["params"], group["params"]):
                    if local_index in local["state"]:
                        state_dict["state"][index[id(param)]] = local["state"][local_index]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a whole state_dict (from `state_dict()`, or the wrapped optimizer class's for
        the same parameters): this rank's local optimizer takes its shard's state, and every
        group's options."""
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        params = self._all_params()
        owner = self._owner()
        for index, value in state_dict["state"].items():
            param = params[index]
            if owner[id(param)] == self.rank:
                moved = _to_device(value, param.device)
                # a scalar step counter stays on the CPU, as the optimizers keep it
                self.optim.state[param] = {
                    k: (v.cpu() if isinstance(v, TensorImpl) and v.dim() == 0 else v)
                    for k, v in moved.items()}
        _copy_options(saved, self.param_groups)
        _copy_options(self.param_groups, self.optim.param_groups)
