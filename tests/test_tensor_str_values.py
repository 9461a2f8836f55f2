"""torch._tensor_str._tensor_str (the values of a repr alone, with continuation lines
indented: PyG writes OFF files with it) and the choice between `2.` and scientific notation
for whole-number floats, both against PyTorch."""
import pytest

import tensorlib as tl
from tensorlib._tensor_str import _tensor_str

torch = pytest.importorskip("torch")
from torch._tensor_str import _tensor_str as torch_tensor_str  # noqa: E402

VALUES = [[[1.0, 2.5], [3.0, 4.0]], [[1, 2], [3, 4]], [1.0, 2.5], 1.5, [True, False],
          [0.0, 1.0, 2000.0], [1.0, 1000.0], [1.0, 1001.0], [3.0, 2e8], [1e8, 2.0], [0.0, 0.0],
          [1.5, 2000.0], [-1.0, 5000.0], [float("nan"), 1.0, 3000.0], [float("inf"), -2.0]]


@pytest.mark.parametrize("values", VALUES, ids=str)
@pytest.mark.parametrize("indent", [0, 3])
def test_values_text_matches_torch(values, indent):
    assert _tensor_str(tl.tensor(values), indent) == torch_tensor_str(torch.tensor(values),
                                                                      indent)
    assert repr(tl.tensor(values)) == repr(torch.tensor(values))


def test_empty_and_summarised():
    assert _tensor_str(tl.zeros(0, 3), 2) == torch_tensor_str(torch.zeros(0, 3), 2) == "[]"
    ours, theirs = tl.arange(2000.0).view(1000, 2), torch.arange(2000.0).view(1000, 2)
    assert _tensor_str(ours, 2) == torch_tensor_str(theirs, 2)


@pytest.mark.parametrize("sci_mode", [True, False])
def test_forced_notation_on_whole_numbers(sci_mode):
    try:
        tl.set_printoptions(sci_mode=sci_mode)
        torch.set_printoptions(sci_mode=sci_mode)
        for values in ([1.0, 5.0], [1.0, 5000.0]):
            assert repr(tl.tensor(values)) == repr(torch.tensor(values))
    finally:
        tl.set_printoptions(sci_mode=None)
        torch.set_printoptions(sci_mode=None)
