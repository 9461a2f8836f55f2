r"""tensorlib.optim.swa_utils (torch.optim.swa_utils): Stochastic Weight Averaging and
exponential moving averages of a model's weights (`AveragedModel` and its averaging
functions), the SWA learning-rate schedule (`SWALR`) and `update_bn`, which recomputes
BatchNorm statistics for the averaged weights."""
import itertools
import math
from copy import deepcopy

import tensorlib
from tensorlib.nn.modules.batchnorm import _BatchNorm
from tensorlib.nn.modules.module import Module
from tensorlib.optim.lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. "
                         "Please provide a value in [0,1] range.")


def _is_inexact(tensor):
    return tensor.is_floating_point() or tensor.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ema <- decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @tensorlib.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for p_ema, p_model in zip(ema_param_list, current_param_list):
            if _is_inexact(p_ema):
                p_ema.lerp_(p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors (SWA): avg += (cur - avg) / (n + 1)."""
    @tensorlib.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        for p_avg, p_model in zip(averaged_param_list, current_param_list):
            if _is_inexact(p_avg):
                p_avg.lerp_(p_model, 1.0 / float(num_averaged + 1))
            else:
                p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """One tensor's EMA step, returned (not in place)."""
    _check_decay(decay)

    @tensorlib.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """One tensor's running-mean step, returned (not in place)."""
    @tensorlib.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    r"""A deep copy of `model` whose parameters (and buffers with ``use_buffers=True``)
    are an average of the weights passed to `update_parameters`: SWA's equal-weight
    running mean by default, or `avg_fn` (per tensor) / `multi_avg_fn` (per list).
    ``n_averaged`` counts the updates; it is a buffer, so it is in the state_dict."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged",
                             tensorlib.tensor(0, dtype=tensorlib.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model):
        if self.use_buffers:
            return (itertools.chain(self.module.parameters(), self.module.buffers()),
                    itertools.chain(model.parameters(), model.buffers()))
        return self.parameters(), model.parameters()

    def update_parameters(self, model):
        """Fold `model`'s current weights into the average (the first call copies them)."""
        ours, theirs = self._averaged_tensors(model)
        averaged, current = [], []
        first = int(self.n_averaged.item()) == 0
        for p_avg, p_model in zip(ours, theirs):
            p_model_ = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model_)
            if first:
                p_avg.detach().copy_(p_model_)
        if not first:
            with tensorlib.no_grad():
                self._average(averaged, current)
        if not self.use_buffers:
            with tensorlib.no_grad():
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1

    def _average(self, averaged, current):
        if self.avg_fn is not None:
            for p_avg, p_model in zip(averaged, current):
                n_averaged = self.n_averaged.to(p_avg.device)
                p_avg.copy_(self.avg_fn(p_avg, p_model, n_averaged))
            return
        multi_avg_fn = self.multi_avg_fn or get_swa_multi_avg_fn()
        groups = {}
        for p_avg, p_model in zip(averaged, current):
            key = (str(p_avg.device), p_avg.dtype)
            groups.setdefault(key, ([], []))
            groups[key][0].append(p_avg)
            groups[key][1].append(p_model)
        for avg_list, model_list in groups.values():
            multi_avg_fn(avg_list, model_list, self.n_averaged.to(avg_list[0].device))


@tensorlib.no_grad()
def update_bn(loader, model, device=None):
    r"""One pass over `loader` in train mode with every BatchNorm's momentum set to None,
    so the running statistics become the cumulative average over the data seen with the
    current (averaged) weights. A batch that is a list or tuple feeds its first item."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneals each group's lr from its value to ``swa_lr`` (one per group, or shared)
    over `anneal_epochs` steps along a cosine or a line, then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # the lr before annealing is recovered from the current one, so other schedulers
        # may have changed it in between (as torch does)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
