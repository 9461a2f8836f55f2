"""Derivatives of every differentiable op, written in tensorlib ops (so they run on every
backend and are differentiable themselves), one module per op family."""
from tensorlib.autograd.formulas import (indexing, joining, linalg, pointwise,  # noqa: F401
                                         random, reduction, shape, sorting)
