"""Tensor.__format__: a plain 0-dim tensor formats as its Python number (f"{x.sum()}" reads
"2" in error messages, as in PyTorch); other tensors format as object does (str, and a
format spec is refused)."""
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _cases(lib):
    return [lib.tensor(2), lib.tensor(2.5, requires_grad=True), lib.tensor(True),
            lib.tensor([1, 2]), lib.nn.Parameter(lib.tensor(1.0)),
            lib.empty((), device="meta")]


def _format(value, spec):
    try:
        return format(value, spec)
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("spec", ["", ".2f", "d", ">6"])
def test_format_matches_torch(spec):
    for ours, theirs in zip(_cases(tl), _cases(torch)):
        assert _format(ours, spec) == _format(theirs, spec), (theirs, spec)


def test_zero_dim_in_an_f_string_reads_as_a_number():
    count = tl.tensor([1.0, float("nan"), float("nan")]).isnan().sum()
    assert f"Got Y with {count} NaN values." == "Got Y with 2 NaN values."
