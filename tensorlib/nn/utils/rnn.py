"""Utilities for variable-length sequences: pad_sequence."""
from collections.abc import Iterable

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["pad_sequence"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Stack a list of (L_i, *) tensors into one (T, B, *) tensor (or (B, T, *) with
    batch_first), T = max L_i, filling the rest with padding_value on padding_side.

    Differentiable with respect to the sequences."""
    if isinstance(sequences, TensorImpl):
        sequences = [sequences[i] for i in range(sequences.shape[0])]
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != trailing:
            for i, (a, b) in enumerate(zip(trailing, s.shape[1:])):
                if a != b:
                    raise RuntimeError(f"The size of tensor a ({a}) must match the size of "
                                       f"tensor b ({b}) at non-singleton dimension {i + 1}")
            raise RuntimeError(f"pad_sequence: expected every sequence to have "
                               f"{len(trailing) + 1} dimensions")
    max_len = max(s.shape[0] for s in sequences)
    batch = len(sequences)
    shape = (batch, max_len) + trailing if batch_first else (max_len, batch) + trailing
    out = tensorlib.full(shape, padding_value, dtype=first.dtype, device=first.device)
    for i, s in enumerate(sequences):
        length = s.shape[0]
        span = slice(0, length) if padding_side == "right" else \
            slice(max_len - length, max_len)
        if length == 0:
            continue
        if batch_first:
            out[i, span] = s
        else:
            out[span, i] = s
    return out
