"""torch.nn.modules.utils (tensorlib.nn.modules.utils): the helpers libraries import from it."""
from collections import OrderedDict

import pytest

from tensorlib.nn.modules.utils import (_list_with_default, _pair, _quadruple,
                                        _reverse_repeat_tuple, _single, _triple,
                                        consume_prefix_in_state_dict_if_present)


def test_ntuples():
    assert _single(3) == (3,) and _pair(3) == (3, 3) and _triple(1) == (1, 1, 1)
    assert _quadruple(0) == (0, 0, 0, 0) and _pair([1, 2]) == (1, 2) and _pair.__name__ == "_pair"
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)


def test_list_with_default():
    assert _list_with_default([None, 4], [1, 3, 8, 9]) == [8, 4]
    assert _list_with_default(5, [1, 2]) == 5
    with pytest.raises(ValueError, match="at least 3"):
        _list_with_default([1, 2], [7, 7])


def test_consume_prefix_strips_keys_and_metadata():
    sd = OrderedDict([("module.w", 1), ("module.b", 2), ("other", 3)])
    sd._metadata = {"": {}, "module": {"v": 1}, "module.sub": {"v": 2}}
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert list(sd) == ["other", "w", "b"]
    assert sd._metadata == {"": {"v": 1}, "sub": {"v": 2}}     # as PyTorch's
