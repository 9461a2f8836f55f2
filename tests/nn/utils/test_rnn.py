"""nn.utils.rnn against PyTorch: PackedSequence, pack/pad of padded batches and of lists,
unpack/unpad, batch_first, enforce_sorted, total_length, PyTorch's errors, and gradients
through packing and padding (gradcheck), on every device."""
import numpy as np
import pytest

import tensorlib
from tensorlib.autograd import gradcheck
from tensorlib.nn.utils import rnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

RNG = np.random.default_rng(3)


def npy(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[4, 3, 1], [2, 4, 2, 3]])
def test_pack_and_pad_match_torch(device, batch_first, lengths):
    steps, batch = 5, len(lengths)
    x = RNG.standard_normal((batch, steps, 2) if batch_first else (steps, batch, 2))
    ordered = lengths == sorted(lengths, reverse=True)
    ours = rnn.pack_padded_sequence(tensorlib.tensor(x, device=device), lengths,
                                    batch_first=batch_first, enforce_sorted=ordered)
    theirs = trnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first=batch_first,
                                       enforce_sorted=ordered)
    np.testing.assert_array_equal(npy(ours.data), theirs.data.numpy())
    assert ours.batch_sizes.device.type == "cpu" and ours.batch_sizes.dtype == tensorlib.int64
    np.testing.assert_array_equal(ours.batch_sizes.numpy(), theirs.batch_sizes.numpy())
    for a, b in ((ours.sorted_indices, theirs.sorted_indices),
                 (ours.unsorted_indices, theirs.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.device == ours.data.device
            np.testing.assert_array_equal(npy(a), b.numpy())
    padded, lens = rnn.pad_packed_sequence(ours, batch_first=batch_first, padding_value=-7.0,
                                           total_length=6)
    tpadded, tlens = trnn.pad_packed_sequence(theirs, batch_first=batch_first,
                                              padding_value=-7.0, total_length=6)
    np.testing.assert_array_equal(npy(padded), tpadded.numpy())
    np.testing.assert_array_equal(lens.numpy(), tlens.numpy())
    assert lens.device.type == "cpu"


def test_pack_sequence_and_unpack(device):
    seqs = [RNG.standard_normal((n, 3)) for n in (2, 5, 3)]
    ours = rnn.pack_sequence([tensorlib.tensor(s, device=device) for s in seqs],
                             enforce_sorted=False)
    theirs = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(npy(ours.data), theirs.data.numpy())
    for a, b in zip(rnn.unpack_sequence(ours), seqs):
        np.testing.assert_array_equal(npy(a), b)
    padded = rnn.pad_sequence([tensorlib.tensor(s, device=device) for s in seqs])
    before = npy(padded)
    unpadded = rnn.unpad_sequence(padded, tensorlib.tensor([2, 5, 3]))
    for a, b in zip(unpadded, seqs):
        np.testing.assert_array_equal(npy(a), b)
    np.testing.assert_array_equal(npy(padded), before)  # not transposed in place


def test_packed_sequence_tuple_and_conversions(device):
    p = rnn.pack_sequence([tensorlib.ones(3, 2), tensorlib.ones(1, 2)])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert sorted_indices is None and unsorted_indices is None
    assert p.double().data.dtype == tensorlib.float64 and p.long().data.dtype == tensorlib.int64
    assert p.to(tensorlib.float32) is p
    moved = rnn.pack_sequence([tensorlib.ones(1, 2), tensorlib.ones(3, 2)],
                              enforce_sorted=False).to(device)
    assert moved.data.device.type == device and moved.sorted_indices.device.type == device
    assert moved.batch_sizes.device.type == "cpu"
    assert moved.cpu().data.device.type == "cpu"
    assert not moved.is_cuda and not moved.is_pinned()
    again = rnn.PackedSequence((data, batch_sizes))
    assert again.batch_sizes is batch_sizes
    if device != "cpu":
        with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
            rnn.PackedSequence(data, batch_sizes.to(device))


@pytest.mark.parametrize("lengths, message", [
    ([4, 3, 0], "Length of all samples has to be greater than 0"),
    ([3, 4, 1], "must be sorted in decreasing order when `enforce_sorted` is True"),
    ([4, 3], r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
])
def test_pack_errors_match_torch(lengths, message):
    x = np.zeros((4, 3, 2))
    with pytest.raises(RuntimeError, match=message):
        trnn.pack_padded_sequence(torch.tensor(x), lengths)
    with pytest.raises(RuntimeError, match=message):
        rnn.pack_padded_sequence(tensorlib.tensor(x), lengths)


def test_more_errors():
    with pytest.raises(RuntimeError, match="Cannot pack empty tensors."):
        rnn.pack_padded_sequence(tensorlib.zeros(0, 3, 2), [0, 0, 0])
    with pytest.raises(RuntimeError, match="1D CPU int64 tensor, but got 2D cpu Long"):
        rnn.pack_padded_sequence(tensorlib.zeros(4, 3, 2), tensorlib.tensor([[4, 3, 1]]))
    with pytest.raises(RuntimeError, match="longer than the padded input's 4 time steps"):
        rnn.pack_padded_sequence(tensorlib.zeros(4, 3, 2), [5, 3, 1])
    p = rnn.pack_padded_sequence(tensorlib.zeros(4, 3, 2), [4, 2, 2])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 4"):
        rnn.pad_packed_sequence(p, total_length=2)


def test_gradients_flow_through_pack_and_pad(device):
    x = tensorlib.tensor(RNG.standard_normal((4, 3, 2)), device=device, requires_grad=True)

    def roundtrip(inp):
        packed = rnn.pack_padded_sequence(inp, [2, 4, 3], enforce_sorted=False)
        return rnn.pad_packed_sequence(packed, batch_first=True, padding_value=1.5)[0]

    assert gradcheck(roundtrip, (x,))
    padded = roundtrip(x)
    padded.sum().backward()
    mask = np.zeros((4, 3, 2))
    for b, n in enumerate([2, 4, 3]):
        mask[:n, b] = 1
    np.testing.assert_array_equal(npy(x.grad), mask)


def test_invert_permutation():
    perm = tensorlib.tensor([2, 0, 3, 1])
    np.testing.assert_array_equal(rnn.invert_permutation(perm).numpy(),
                                  trnn.invert_permutation(torch.tensor([2, 0, 3, 1])).numpy())
    assert rnn.invert_permutation(None) is None
    assert rnn.__all__ == trnn.__all__
