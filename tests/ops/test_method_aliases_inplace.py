"""The in-place spellings (arccos_, greater_, digamma_, ...) and the small queries
(get_device, itemsize, nbytes, H) against torch."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

VALUES = [0.25, 0.5, 0.75, 1.5]
CASES = [("arccos_", (), [0.1, 0.5, -0.3]), ("arcsin_", (), [0.1, 0.5, -0.3]),
         ("arctan_", (), VALUES), ("arctan2_", ("other",), VALUES),
         ("greater_", ("other",), VALUES), ("greater_equal_", ("other",), VALUES),
         ("less_", ("other",), VALUES), ("less_equal_", ("other",), VALUES),
         ("not_equal_", ("other",), VALUES), ("digamma_", (), VALUES),
         ("erfinv_", (), [0.1, -0.5, 0.9]), ("i0_", (), VALUES), ("lgamma_", (), VALUES),
         ("sinc_", (), VALUES), ("polygamma_", (1,), VALUES), ("mvlgamma_", (1,), [1.5, 2.0])]


@pytest.mark.parametrize("name,args,values", CASES)
def test_inplace_spelling_matches_torch(device, name, args, values):
    other = [0.5] * len(values)
    ours, theirs = tensorlib.tensor(values, device=device), torch.tensor(values)
    ours_args = [tensorlib.tensor(other, device=device) if a == "other" else a for a in args]
    torch_args = [torch.tensor(other) if a == "other" else a for a in args]
    result = getattr(ours, name)(*ours_args)
    getattr(theirs, name)(*torch_args)
    assert result is ours
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_bitwise_not_and_toplevel_and_grad():
    x = tensorlib.tensor([0, 5, -3])
    x.bitwise_not_()
    assert x.numpy().tolist() == [-1, -6, 2]
    y = tensorlib.tensor([0.2, 0.4])
    tensorlib.arccos_(y)
    np.testing.assert_allclose(y.numpy(), np.arccos([0.2, 0.4]), rtol=1e-6)
    leaf = tensorlib.tensor([0.5, 1.5], requires_grad=True)
    z = leaf * 1.0
    z.digamma_().sum().backward()
    tleaf = torch.tensor([0.5, 1.5], requires_grad=True)
    (tleaf * 1.0).digamma_().sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), tleaf.grad.numpy(), rtol=1e-5)
    with pytest.raises(RuntimeError):
        tensorlib.tensor([1, 2]).digamma_()


def test_queries():
    x = tensorlib.ones(2, 3, dtype=tensorlib.float16)
    assert x.get_device() == -1 and x.itemsize == 2 and x.nbytes == 12
    assert tensorlib.ones(2, 2).expand(3, 2, 2).nbytes == 48
    m = tensorlib.tensor([[1 + 1j, 2], [3, 4 - 2j]])
    assert m.H.numpy().tolist() == torch.tensor([[1 + 1j, 2], [3, 4 - 2j]]).H.tolist()
    with pytest.raises(RuntimeError, match="2-D"):
        tensorlib.ones(3).H
    with pytest.warns(UserWarning):
        assert tensorlib.tensor(2.0).H.item() == 2.0


@pytest.mark.parametrize("name,args", [("unsafe_chunk", (2, 1)), ("unsafe_split", (2,)),
                                       ("unsafe_split_with_sizes", ([1, 2], 0))])
def test_unsafe_split_family(name, args):
    ours = getattr(tensorlib, name)(tensorlib.arange(12.0).reshape(3, 4), *args)
    want = getattr(torch, name)(torch.arange(12.0).reshape(3, 4), *args)
    assert [o.numpy().tolist() for o in ours] == [w.tolist() for w in want]
    again = getattr(tensorlib.arange(12.0).reshape(3, 4), name)(*args)
    assert [o.numpy().tolist() for o in again] == [w.tolist() for w in want]
