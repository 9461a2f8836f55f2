"""tensorlib.utils.deterministic: PyTorch's `torch.utils.deterministic` switch.

`fill_uninitialized_memory` (default True): while `use_deterministic_algorithms(True)` is
on, `empty` and its relatives fill new tensors with NaN (floating, complex) or the largest
value (integers, bool: True), so a read of uninitialized memory gives the same, visible
result every run (NOTE [ Deterministic algorithms ] in tensorlib/_global_flags.py)."""
fill_uninitialized_memory = True
