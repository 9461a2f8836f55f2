"""torch._C._nn._parse_to: .to()'s arguments read as (device, dtype, non_blocking,
memory_format), compared with torch."""
import pytest

import tensorlib as tl
from tensorlib import _C

torch = pytest.importorskip("torch")

CASES = [
    lambda m: ((), {}), lambda m: (("cpu",), {}), lambda m: ((m.float64,), {}),
    lambda m: (("cpu", m.float16), {}), lambda m: ((m.ones(2, dtype=m.float64),), {}),
    lambda m: ((), {"dtype": m.float32, "non_blocking": True}),
    lambda m: ((), {"memory_format": m.channels_last}), lambda m: (("cpu", m.int64), {}),
    lambda m: ((m.device("cpu"), m.float32, True), {}),
]


@pytest.mark.parametrize("case", CASES)
def test_parse_to_reads_arguments_as_torch(case):
    args, kwargs = case(tl)
    t_args, t_kwargs = case(torch)
    ours, theirs = _C._nn._parse_to(*args, **kwargs), torch._C._nn._parse_to(*t_args, **t_kwargs)
    assert len(ours) == len(theirs) == 4
    assert (ours[0] is None) == (theirs[0] is None)
    if ours[0] is not None:
        assert isinstance(ours[0], tl.device) and str(ours[0]) == str(theirs[0])
    assert str(ours[1]).split(".")[-1] == str(theirs[1]).split(".")[-1]
    assert ours[2] == theirs[2] and str(ours[3]).split(".")[-1] == str(theirs[3]).split(".")[-1]


@pytest.mark.parametrize("case,error", [
    (lambda m: ((m.device("cpu"),), {"copy": False}), RuntimeError),
    (lambda m: ((m.float64,), {"dtype": m.float32}), TypeError)])
def test_parse_to_refuses_what_torch_refuses(case, error):
    with pytest.raises(error):
        torch._C._nn._parse_to(*case(torch)[0], **case(torch)[1])
    with pytest.raises(error):
        _C._nn._parse_to(*case(tl)[0], **case(tl)[1])
