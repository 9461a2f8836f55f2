"""Under randomness='different', a random op with no argument batched at the level (such
as `torch.rand(3)`) must still give each sample its own numbers: this mode runs such a call
once per sample and stacks the draws."""
import tensorlib
from tensorlib.func._batching._batched import make, top_level
from tensorlib.overrides import TorchFunctionMode

_RANDOM_OPS = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "poisson",
               "_standard_gamma", "multinomial", "rand_like", "randn_like", "randint_like"}


class DifferentRandomness(TorchFunctionMode):
    def __init__(self, level, size):
        self.level, self.size = level, size

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", None) not in _RANDOM_OPS or \
                top_level(args, kwargs) >= self.level:
            return func(*args, **kwargs)
        draws = [func(*args, **kwargs) for _ in range(self.size)]
        if not draws:
            return make(tensorlib.stack([func(*args, **kwargs)])[:0], 0, self.level)
        return make(tensorlib.stack(draws), 0, self.level)
