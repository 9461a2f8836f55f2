"""Tensor's binary operators return NotImplemented for an operand they cannot take, as
PyTorch's do, so Python tries the right operand's reflected method."""
import pytest

import tensorlib as tl


class Reflects:
    """Any operand that knows what to do with a tensor on its left."""

    def __radd__(self, other):
        return ("radd", other)

    def __rsub__(self, other):
        return ("rsub", other)

    def __rmul__(self, other):
        return ("rmul", other)

    def __rtruediv__(self, other):
        return ("rtruediv", other)

    def __rfloordiv__(self, other):
        return ("rfloordiv", other)

    def __rmod__(self, other):
        return ("rmod", other)

    def __rpow__(self, other):
        return ("rpow", other)

    def __rmatmul__(self, other):
        return ("rmatmul", other)

    def __rand__(self, other):
        return ("rand", other)

    def __ror__(self, other):
        return ("ror", other)

    def __rxor__(self, other):
        return ("rxor", other)


@pytest.mark.parametrize("symbol, name", [
    ("+", "radd"), ("-", "rsub"), ("*", "rmul"), ("/", "rtruediv"), ("//", "rfloordiv"),
    ("%", "rmod"), ("**", "rpow"), ("@", "rmatmul"), ("&", "rand"), ("|", "ror"),
    ("^", "rxor")])
def test_right_operand_reflected_method_runs(device, symbol, name):
    t = tl.ones(2, device=device)
    got = eval(f"t {symbol} r", {"t": t, "r": Reflects()})
    assert got[0] == name and got[1] is t


def test_tensor_plus_masked_tensor():
    from tensorlib.masked import masked_tensor
    data, mask = tl.tensor([1.0, 2.0, 3.0]), tl.tensor([True, False, True])
    with pytest.warns(UserWarning):
        m = masked_tensor(data, mask)
    got = tl.tensor([10.0, 20.0, 30.0]) + m
    assert type(got).__name__ == "MaskedTensor"
    assert got.get_data()[mask].tolist() == [11.0, 33.0]
    assert got.get_mask().tolist() == mask.tolist()


def test_unsupported_operand_is_pythons_type_error():
    t = tl.ones(2)
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Tensor' and "
                                        r"'object'"):
        t + object()
    with pytest.raises(TypeError, match="'<' not supported"):
        t < object()
    assert (t == object()) is False and (t != "a") is True


def test_tensor_operand_errors_still_raise():
    with pytest.raises(RuntimeError):
        tl.ones(2) + tl.ones(3)
    with pytest.raises(RuntimeError, match="Subtraction"):
        tl.ones(2, dtype=tl.bool) - tl.ones(2, dtype=tl.bool)
