"""tensorlib.masked (torch.masked): reductions, normalizations and scans that take a
boolean `mask=` (broadcast to the input) and leave the masked-out elements out; and
MaskedTensor (maskedtensor.py: its own class, not a Tensor subclass)."""
from tensorlib.masked._normalizations import (cumprod, cumsum, log_softmax, logaddexp,
                                              normalize, softmax, softmin)
from tensorlib.masked._reductions import (amax, amin, argmax, argmin, logsumexp, mean,
                                          median, norm, prod, std, sum, var)

from tensorlib.masked.maskedtensor import (MaskedTensor, as_masked_tensor,  # noqa: E402
                                           is_masked_tensor, masked_tensor)

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor", "amax",
           "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
