r"""Variable-length sequences: padding, and packing for the recurrent layers.

A PackedSequence stores a batch of sequences time step by time step: ``data`` holds, for each
step t, the rows of the ``batch_sizes[t]`` sequences still running at t (the batch sorted by
decreasing length), so a recurrent layer can shrink its batch as sequences end. Packing and
unpacking are one gather each (``index_select`` with indices computed by tensorlib ops on the data's device), so gradients
flow through both.
"""
from collections import namedtuple
from collections.abc import Iterable

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    output = tensorlib.empty_like(permutation)
    output.scatter_(0, permutation,
                    tensorlib.arange(0, permutation.numel(), device=permutation.device))
    return output


class PackedSequence(_PackedSequenceBase):
    r"""Holds the data and the list of batch_sizes of a packed sequence.

    Made by :func:`pack_padded_sequence` or :func:`pack_sequence`, never by hand in normal
    use. ``sorted_indices`` is the permutation that sorted the batch by decreasing length
    (None when the input was already sorted) and ``unsorted_indices`` its inverse.

    Attributes:
        data (Tensor): (sum of lengths, *) the packed rows
        batch_sizes (Tensor): int64 on the CPU: how many sequences run at each step
        sorted_indices (Tensor, optional), unsorted_indices (Tensor, optional)
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError("batch_sizes should always be on CPU. Instances of "
                                 "PackedSequence should never be created manually. They "
                                 "should be instantiated by functions like pack_sequence "
                                 "and pack_padded_sequences in nn.utils.rnn. "
                                 "https://pytorch.org/docs/stable/nn.html#torch.nn.utils."
                                 "rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise TypeError("PackedSequence: without batch_sizes, data must be a "
                            "(data, batch_sizes) pair")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        r"""data.to(*args, **kwargs); the indices follow data's device (batch_sizes stays
        on the CPU). Returns self when data does not change."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        rest = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices = None if self.sorted_indices is None else \
            self.sorted_indices.to(data.device, **rest)
        unsorted_indices = None if self.unsorted_indices is None else \
            self.unsorted_indices.to(data.device, **rest)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        ex = tensorlib.empty((), dtype=self.data.dtype, device=self.data.device).cuda(
            *args, **kwargs)
        return self.to(device=ex.device)

    def cpu(self, *args, **kwargs):
        return self.to(device="cpu")

    def pin_memory(self):
        """Host memory is not pinned in tensorlib; returns the sequence unchanged."""
        return self

    def is_pinned(self):
        return False

    def double(self):
        return self.to(dtype=tensorlib.float64)

    def float(self):
        return self.to(dtype=tensorlib.float32)

    def half(self):
        return self.to(dtype=tensorlib.float16)

    def long(self):
        return self.to(dtype=tensorlib.int64)

    def int(self):
        return self.to(dtype=tensorlib.int32)

    def short(self):
        return self.to(dtype=tensorlib.int16)

    def char(self):
        return self.to(dtype=tensorlib.int8)

    def byte(self):
        return self.to(dtype=tensorlib.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def _host_lengths(lengths):
    """lengths as a CPU int64 vector, checked as PyTorch checks them."""
    if not isinstance(lengths, TensorImpl):
        lengths = tensorlib.as_tensor(lengths, dtype=tensorlib.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=tensorlib.int64)
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {lengths.device.type} Long tensor")
    return lengths


def _pack_indices(lengths, batch, device):
    """Flat (t * batch + b) row of each packed row (on device), and batch_sizes (CPU), for
    sorted lengths."""
    steps = int(lengths[0]) if lengths.numel() else 0
    live = lengths.to(device)[None, :] > tensorlib.arange(steps, device=device)[:, None]
    rows = tensorlib.arange(steps * batch, device=device).reshape(steps, batch)[live]
    return rows, live.sum(1).to(device="cpu", dtype=tensorlib.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    r"""Pack a padded batch of variable-length sequences.

    Args:
        input (Tensor): (T, B, *) padded batch (B, T, * with batch_first)
        lengths (Tensor or list(int)): the length of each sequence (on the CPU)
        batch_first (bool): input is (B, T, *). Default: ``False``
        enforce_sorted (bool): the lengths must be in decreasing order; when ``False`` the
            batch is sorted here and the permutation kept in the result. Default: ``True``
    """
    lengths = _host_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = tensorlib.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if lengths.numel() != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.numel()} (batch_size={batch})")
    if int(lengths[-1]) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if bool((lengths[1:] > lengths[:-1]).any()):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if int(lengths[0]) > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({int(lengths[0])}) is longer "
                           f"than the padded input's {steps} time steps")
    rows, batch_sizes = _pack_indices(lengths, batch, input.device)
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    return PackedSequence(flat.index_select(0, rows), batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Inverse of :func:`pack_padded_sequence`: returns (padded, lengths), padded (T, B, *)
    (B, T, * with batch_first) in the original batch order and lengths an int64 CPU tensor.

    Args:
        sequence (PackedSequence): batch to pad
        batch_first (bool): output is (B, T, *). Default: ``False``
        padding_value (float): value of the padded elements. Default: ``0.0``
        total_length (int, optional): pad to this many steps (at least the longest)
    """
    batch_sizes = sequence.batch_sizes.to(dtype=tensorlib.int64)
    steps = batch_sizes.numel()
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    data = sequence.data
    batch = int(batch_sizes[0])
    lengths = (batch_sizes[None, :] > tensorlib.arange(batch)[:, None]).sum(1)
    # each padded slot reads its packed row, or the padding row appended after the data
    sizes = tensorlib.cat([batch_sizes, batch_sizes.new_zeros(steps - batch_sizes.numel())])
    sizes = sizes.to(data.device)
    column = tensorlib.arange(batch, device=data.device)[None, :]
    starts = (sizes.cumsum(0) - sizes)[:, None]
    source = tensorlib.where(column < sizes[:, None], starts + column, data.shape[0])
    if batch_first:
        source = source.mT
    pad_row = tensorlib.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                             device=data.device)
    rows = tensorlib.cat([data, pad_row]).index_select(0, source.reshape(-1))
    padded = rows.reshape(tuple(source.shape) + tuple(data.shape[1:]))
    lengths = lengths.to(tensorlib.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


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


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""Split a padded batch back into a list of its sequences (each (L_i, *)).

    Unlike PyTorch's, which transposes `padded_sequences` in place when batch_first is
    False, the input is left as it was."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Pack a list of (L_i, *) tensors (decreasing lengths unless enforce_sorted=False)."""
    lengths = tensorlib.as_tensor([v.shape[0] for v in sequences], dtype=tensorlib.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""The list of (L_i, *) sequences of a PackedSequence, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
