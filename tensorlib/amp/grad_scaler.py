"""GradScaler: loss scaling for low-precision training, PyTorch's algorithm step for step.

scale(loss) multiplies by the scale; unscale_(opt) divides the gradients back and records
whether any is inf/NaN; step(opt) skips the update when one was; update() halves the scale
after an overflow (backoff_factor) and doubles it after growth_interval clean steps. A
disabled scaler (or one whose device cannot be used) passes everything through."""
import warnings
from collections import defaultdict
from enum import Enum

import tensorlib


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _device_usable(device):
    if device == "cpu":
        return True
    try:
        return tensorlib.backends.get(device.split(":")[0]) is not None
    except (RuntimeError, KeyError, ValueError):
        return False


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and not _device_usable(device):
            warnings.warn(f"tensorlib.amp.GradScaler is enabled, but the '{device}' device "
                          f"is not available. Disabling.")
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def is_enabled(self):
        return self._enabled

    def _lazy_init(self, device):
        if self._scale is None:
            self._scale = tensorlib.full((), float(self._init_scale), dtype=tensorlib.float32,
                                         device=device)
            self._growth_tracker = self._init_growth_tracker

    # ---- scaling ----------------------------------------------------------------------------
    def scale(self, outputs):
        """outputs * scale (a tensor, or any nesting of lists/tuples of tensors)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, tensorlib.Tensor):
            self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        found = {}
        with tensorlib.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not allow_fp16 and p.grad.dtype is tensorlib.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    g = p.grad
                    key = str(g.device)
                    bad = (~tensorlib.isfinite(g)).any().to(tensorlib.float32)
                    found[key] = bad if key not in found else tensorlib.maximum(found[key],
                                                                                bad)
                    g.mul_(inv_scale.to(g.device).to(g.dtype))
        return found

    def unscale_(self, optimizer):
        """Divide optimizer's gradients by the scale, in place (once per step)."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted unscale_ but _scale is None.  This may indicate "
                               "your script did not use scaler.scale(loss or outputs) earlier "
                               "in the iteration.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = tensorlib.tensor(1.0 / float(self._scale.item()), dtype=tensorlib.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def _found_inf(self, optimizer):
        found = self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
        return sum(float(v.item()) for v in found.values())

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(...) unless the unscaled gradients hold an inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if self._found_inf(optimizer) == 0:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Back the scale off after an overflow, grow it after growth_interval clean steps."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted update but _scale is None.  This may indicate your "
                               "script did not use scaler.scale(loss or outputs) earlier in "
                               "the iteration.")
        if new_scale is not None:
            value = float(new_scale.item() if isinstance(new_scale, tensorlib.Tensor)
                          else new_scale)
            self._scale.fill_(value)
        else:
            infs = [v for s in self._per_optimizer_states.values()
                    for v in s["found_inf_per_device"].values()]
            if len(infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = float(self._scale.item())
            if sum(float(v.item()) for v in infs) > 0:
                scale *= self._backoff_factor
                self._growth_tracker = 0
            elif self._growth_tracker + 1 == self._growth_interval:
                scale *= self._growth_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
            self._scale.fill_(scale)      # float32, rounded as torch's in-place update
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- settings and state -----------------------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else self._growth_tracker

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]
