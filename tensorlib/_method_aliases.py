"""torch functions that are the Tensor method of the same name (torch.exp_(x) is x.exp_(),
torch.greater(a, b) is a.greater(b)): exported from the methods, so the two never differ."""
from tensorlib._tensor import Tensor

NAMES = ("abs_", "acos_", "asin_", "atan_", "ceil_", "clamp_", "clamp_max_", "clamp_min_",
         "clip_", "cos_", "cosh_", "deg2rad_", "detach", "detach_", "erf_", "erfc_", "exp2_",
         "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_",
         "log_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
         "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
         "trunc_", "xlogy_", "zero_", "arccos", "arcsin", "arctan", "arctan2", "greater",
         "greater_equal", "less", "less_equal", "not_equal", "index_put_")

__all__ = list(NAMES)
globals().update({name: getattr(Tensor, name) for name in NAMES})
