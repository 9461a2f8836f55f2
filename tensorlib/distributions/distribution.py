"""Distribution: the base class of every distribution (torch.distributions.Distribution).
Shapes follow PyTorch: a sample has shape sample_shape + batch_shape + event_shape."""
import warnings

import tensorlib
from tensorlib.distributions import constraints
from tensorlib.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The base of every distribution: batch and event shapes, argument validation,
    sample/rsample/log_prob as torch.distributions has them."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Switch argument/sample validation on or off for every distribution made later."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=tensorlib.Size(), event_shape=tensorlib.Size(),
                 validate_args=None):
        self._batch_shape = tensorlib.Size(batch_shape)
        self._event_shape = tensorlib.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             lazy_property):
                    continue               # the other parametrisation was given
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {repr(self)} to satisfy the "
                        f"constraint {repr(constraint)}, but found invalid values:\n{value}")
        # cooperative: a class that is a Distribution and an nn.Module (GPyTorch's priors)
        # reaches Module.__init__ through this call, as in PyTorch
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError(f"{type(self).__name__}.expand")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=tensorlib.Size()):
        """A sample without a graph (rsample under no_grad where it exists)."""
        with tensorlib.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=tensorlib.Size()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampler "
                                  "(rsample)")

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(tensorlib.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__}.log_prob")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.icdf")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__}.enumerate_support")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__}.entropy")

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=tensorlib.Size()):
        if not isinstance(sample_shape, tensorlib.Size):
            sample_shape = tensorlib.Size(sample_shape)
        return tensorlib.Size(tuple(sample_shape) + tuple(self._batch_shape)
                              + tuple(self._event_shape))

    def _validate_sample(self, value):
        """ValueError (PyTorch's messages) for a value of the wrong type, shape or support."""
        if not isinstance(value, tensorlib.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {tuple(self._event_shape)}.")
        actual_shape = value.shape
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{tuple(actual_shape)} vs {tuple(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.")
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({repr(support)}) of the "
                f"distribution {repr(self)}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{self.__class__.__name__}({args})"
