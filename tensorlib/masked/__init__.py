"""tensorlib.masked (torch.masked): reductions, normalizations and scans that take a
boolean `mask=` (broadcast to the input) and leave the masked-out elements out. The
MaskedTensor type (masked_tensor, as_masked_tensor, is_masked_tensor) is not implemented."""
from tensorlib.masked._normalizations import (cumprod, cumsum, log_softmax, logaddexp,
                                              normalize, softmax, softmin)
from tensorlib.masked._reductions import (amax, amin, argmax, argmin, logsumexp, mean,
                                          median, norm, prod, std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax",
           "logaddexp", "logsumexp", "mean", "median", "norm", "normalize", "prod",
           "softmax", "softmin", "std", "sum", "var"]
