"""The public ops the differential fuzzer does not run, each with the reason (the one table
test_fuzz_coverage accepts). An op belongs here only when comparing its result with torch's
cannot say whether tensorlib is right: random draws (the generators differ by design), global
state and settings, I/O and memory sharing, autograd hooks. Each is tested elsewhere."""

_RANDOM = "random sampling: tensorlib's counter-based generator draws other numbers than " \
          "torch's (distributions are tested in tests/ops/test_random.py)"
_RNG_STATE = "generator state, not an op (tests/ops/test_random.py)"
_SETTING = "a global setting or query, not an op on tensors (tests of the runtime surface)"
_IO = "I/O or host memory sharing: no tensor result to compare (tests/test_serialization.py, " \
      "tests/multiprocessing)"
_AUTOGRAD = "autograd machinery, not a computation (tests/autograd)"

_DEVICE_MEMORY = ("a GPU's memory (CUDA tensors, pinned host buffers, streams): without a GPU "
                  "both libraries refuse; tests/ops/test_pinned.py checks torch's answers and "
                  "tests/backends/fake_cuda the CUDA side")

EXCLUDED = {
    "matrix_rank": "removed from PyTorch: both libraries raise, pointing to "
                   "linalg.matrix_rank (tests/linalg/test_legacy_names.py)",
    "Tensor.as_subclass": "type machinery: a view of the same data under another class, no "
                          "new values (tests/test_tensor_subclass.py compares it with torch)",
    **{name: _RANDOM for name in (
        "bernoulli", "multinomial", "normal", "rand", "rand_like", "randint", "randint_like",
        "randn", "randn_like", "randperm", "Tensor.bernoulli", "Tensor.bernoulli_",
        "Tensor.exponential_", "Tensor.multinomial", "Tensor.normal_", "Tensor.random_",
        "Tensor.uniform_", "nn.functional.gumbel_softmax",
        "svd_lowrank", "pca_lowrank", "poisson", "binomial", "Tensor.cauchy_",
        "Tensor.geometric_", "Tensor.log_normal_")},
    **{name: _RNG_STATE for name in (
        "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state")},
    **{name: _SETTING for name in (
        "are_deterministic_algorithms_enabled", "use_deterministic_algorithms",
        "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode",
        "set_deterministic_debug_mode", "get_default_dtype", "set_default_dtype",
        "get_default_device", "set_default_device", "get_num_threads", "set_num_threads",
        "get_float32_matmul_precision", "set_float32_matmul_precision", "is_grad_enabled",
        "is_inference_mode_enabled", "clear_autocast_cache", "get_autocast_dtype",
        "set_autocast_dtype", "is_autocast_enabled", "set_autocast_enabled",
        "is_autocast_cache_enabled", "set_autocast_cache_enabled")},
    **{name: "a global setting or query, not an op on tensors (tests/test_runtime_misc.py)"
       for name in ("set_printoptions", "typename", "is_storage", "set_flush_denormal",
                    "set_warn_always", "is_warn_always_enabled", "get_num_interop_threads",
                    "set_num_interop_threads", "set_default_tensor_type")},
    **{name: "a factory without tensor inputs: compared with torch over lengths, periodic, "
             "dtypes and devices in tests/ops/test_windows.py"
       for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
                    "kaiser_window")},
    **{name: "compared with torch (values, gradients, errors) in tests/ops/test_small_math.py"
       for name in ("logaddexp2", "isreal", "dist", "unravel_index", "Tensor.logaddexp2",
                    "Tensor.isreal", "Tensor.dist")},
    **{name: "a view op's result copied: compared with torch (values, grads, no aliasing) in "
             "tests/ops/test_view_copies.py"
       for name in ("alias_copy", "as_strided_copy", "diagonal_copy", "expand_copy",
                    "narrow_copy", "permute_copy", "select_copy", "split_copy",
                    "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy",
                    "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy",
                    "view_as_real_copy", "view_as_complex_copy", "slice_copy",
                    "Tensor.narrow_copy")},
    "Tensor.get_device": "a query of the device, not an op "
                         "(tests/ops/test_method_aliases_inplace.py)",
    **{name: "a top-level nn native in its native signature (tuples, int modes): compared with "
             "torch (values, gradients) in tests/test_toplevel_nn_extra.py"
       for name in ("affine_grid_generator", "conv_tbc", "convolution", "grid_sampler",
                    "batch_norm", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
                    "ctc_loss", "embedding", "hinge_embedding_loss", "instance_norm", "kl_div",
                    "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
                    "gru_cell", "lstm_cell", "native_batch_norm", "native_group_norm",
                    "native_layer_norm", "norm_except_dim", "rnn_relu_cell", "rnn_tanh_cell")},
    "embedding_bag": "a top-level nn native in its native signature (the 4-tuple output, "
                     "offset2bag, bag_size, max_indices): compared with torch in "
                     "tests/test_toplevel_embedding_bag.py",
    **{name: _RANDOM for name in ("feature_dropout", "feature_dropout_", "native_dropout")},
    **{name: "Python callbacks, memory layout queries, uninitialised or resized memory, or "
             "memory shared with another library: compared with torch in "
             "tests/ops/test_tensor_methods_extra.py"
       for name in ("Tensor.apply_", "Tensor.map_", "Tensor.map2_", "Tensor.const_data_ptr",
                    "Tensor.dim_order", "Tensor.fill_diagonal_", "Tensor.is_set_to",
                    "Tensor.new_empty_strided", "Tensor.resize", "Tensor.resize_as",
                    "Tensor.resize_as_", "from_dlpack", "frombuffer", "to_dlpack")},
    **{name: "a global setting, a query of a tensor's origin or an uninitialised factory: "
             "compared with torch in tests/ops/test_aliases_extra.py"
       for name in ("get_device", "is_inference", "Tensor.is_inference", "empty_permuted",
                    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
                    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
                    "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
                    "get_autocast_gpu_dtype", "set_autocast_gpu_dtype")},
    "Tensor.polygamma_": "polygamma computed into self: compared with torch in "
                         "tests/ops/test_method_aliases_inplace.py",
    **{name: "split/chunk under another name: compared with torch in "
             "tests/ops/test_method_aliases_inplace.py"
       for name in ("unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",
                    "Tensor.unsafe_chunk", "Tensor.unsafe_split",
                    "Tensor.unsafe_split_with_sizes")},
    "compile": "compiles a function: tested by tests/compiler against eager runs",
    "vmap": "a function transform (torch.func.vmap), not an op: compared with torch in "
            "tests/func/test_vmap.py",
    **{name: _IO for name in (
        "save", "load", "from_numpy", "Tensor.numpy", "Tensor.data_ptr", "Tensor.untyped_storage",
        "Tensor.storage",
        "Tensor.share_memory_", "Tensor.is_shared")},
    **{name: _DEVICE_MEMORY for name in (
        "Tensor.cuda", "Tensor.pin_memory", "Tensor.is_pinned", "Tensor.record_stream")},
    **{name: _AUTOGRAD for name in (
        "Tensor.backward", "Tensor.register_hook", "Tensor.register_post_accumulate_grad_hook",
        "Tensor.retain_grad")},
    **{name: "random window starts unless _random_samples is given: compared with torch given "
             "the same samples in tests/nn/test_fractional_max_pool.py" for name in (
        "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool2d_with_indices",
        "nn.functional.fractional_max_pool3d",
        "nn.functional.fractional_max_pool3d_with_indices")},
    **{name: "the __torch_function__ protocol's helpers, not ops on tensors "
             "(tests/test_overrides.py; re-exported as torch's: "
             "tests/nn/test_shuffle_rrelu_lppool3d.py)" for name in (
        "nn.functional.has_torch_function", "nn.functional.has_torch_function_unary",
        "nn.functional.has_torch_function_variadic", "nn.functional.handle_torch_function")},
    **{name: "a constructor from Python data: compared with torch in "
             "tests/test_legacy_constructors.py" for name in ("Tensor.new", "asarray")},
}
