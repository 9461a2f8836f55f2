"""vmap's batching: BatchedTensor (`_batched.py`), the rule lookup (`_dispatch.py`), the
batch rules per op family (`_rules_*.py`), the per-sample loop for ops without one
(`_fallback.py`), the differentiation of batched tensors (`_autograd.py`) and the mode that
batches random factories under randomness='different' (`_random.py`)."""
from tensorlib.func._batching import (_autograd, _rules_linalg, _rules_loss,  # noqa: F401
                                      _rules_pointwise, _rules_reduction, _rules_shape)
from tensorlib.func._batching._batched import (BatchedTensor, batch_size, make, pop_level,
                                               push_level)
from tensorlib.func._batching._fallback import counts as fallback_counts

__all__ = ["BatchedTensor", "batch_size", "make", "push_level", "pop_level",
           "fallback_counts"]
