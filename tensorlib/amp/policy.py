"""PyTorch's autocast op lists, per device type, as data. Checked op by op against torch 2.13's
own CPU autocast (tests/amp/test_autocast.py compares every CPU entry tensorlib has); the GPU
lists are CUDA's (aten/src/ATen/autocast_mode.cpp), used by every GPU backend.

An op's policy says what happens to its eligible inputs (floating tensors on the region's
device type, float64 excepted) inside an enabled region:
  LOWER       cast to the region's dtype (bfloat16 / float16)
  FP32        cast to float32
  FP32_OPT    cast to float32 unless the call passes `dtype=` (torch's fp32_set_opt_dtype)
  PROMOTE     cast to the widest floating dtype among them
  BANNED      refuse (RuntimeError), as CUDA autocast refuses binary_cross_entropy
Ops not listed run on their inputs as they are (softmax, layer_norm and sum on the CPU keep
their input's dtype)."""

LOWER, FP32, FP32_OPT, PROMOTE, BANNED = "lower", "fp32", "fp32_opt", "promote", "banned"

_CPU_LOWER = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear", "matmul",
              "prelu", "scaled_dot_product_attention",
              "einsum", "tensordot")      # these two: torch's composites over bmm
_CPU_FP32 = ("prod", "trace", "cdist", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d",
             "max_unpool2d", "max_unpool3d", "mse_loss", "l1_loss", "smooth_l1_loss",
             "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
             "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
             "hinge_embedding_loss", "margin_ranking_loss", "soft_margin_loss",
             "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
             "poisson_nll_loss", "grid_sample")
_CPU_PROMOTE = ("cat", "stack", "index_copy")

_GPU_LOWER = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm",
              "mv", "linear", "addbmm", "baddbmm", "bmm", "lstm_cell", "gru_cell",
              "rnn_tanh_cell", "rnn_relu_cell", "scaled_dot_product_attention")
_GPU_FP32 = ("acos", "asin", "cosh", "exp", "expm1", "log", "log10", "log2", "log1p",
             "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm",
             "group_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss",
             "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss",
             "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
             "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
             "binary_cross_entropy_with_logits", "pdist", "cdist", "logsumexp", "interpolate",
             "trace")
_GPU_FP32_OPT = ("prod", "softmax", "log_softmax", "cumprod", "cumsum", "vector_norm", "sum")
_GPU_PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "dot", "index_put", "scatter_add",
                "tensordot", "cat", "stack", "index_copy")
_GPU_BANNED = ("binary_cross_entropy",)


def _table(**lists):
    return {name: policy for policy, names in lists.items() for name in names}


CPU = _table(lower=_CPU_LOWER, fp32=_CPU_FP32, promote=_CPU_PROMOTE)
GPU = _table(lower=_GPU_LOWER, fp32=_GPU_FP32, fp32_opt=_GPU_FP32_OPT, promote=_GPU_PROMOTE,
             banned=_GPU_BANNED)


def for_device(device_type):
    """The op table of a device type: the CPU's for "cpu", CUDA's for every GPU backend."""
    return CPU if device_type == "cpu" else GPU
