"""Derivatives of every differentiable op, written in tensorlib ops (so they run on every
backend and are differentiable themselves), one module per op family."""
from tensorlib.autograd.formulas import (activations, complex, decompositions, fft,  # noqa: F401
                                         indexing, joining, linalg, pointwise,
                                         pointwise_math, reduction, shape, sorting, special)
# (random draws have no formulas: they are leaves, and normal(mean, std) with tensor arguments
# is composed of differentiable ops)
