"""RemovableHandle in PyTorch's form (hooks_dict, *, extra_dict): the handle's id is the key
the caller stores its hook under (PyG's MessagePassing.register_*_hook); remove() deletes it
from every dict, as torch.utils.hooks.RemovableHandle does."""
from collections import OrderedDict

import pytest

from tensorlib.utils.hooks import RemovableHandle

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("cls", [RemovableHandle, torch.utils.hooks.RemovableHandle],
                         ids=["tensorlib", "torch"])
def test_handle_keys_and_removal(cls):
    hooks, extra, more = OrderedDict(), OrderedDict(), OrderedDict()   # torch weakrefs them
    first = cls(hooks)
    second = cls(hooks, extra_dict=[extra, more])
    assert second.id > first.id
    hooks[first.id] = "a"
    hooks[second.id] = extra[second.id] = more[second.id] = "b"
    second.remove()
    assert hooks == {first.id: "a"} and extra == {} and more == {}
    second.remove()                                  # a second remove changes nothing
    with first:
        pass
    assert hooks == {}
    third = cls(hooks, extra_dict=extra)
    hooks[third.id] = extra[third.id] = "c"
    third.remove()
    assert hooks == {} and extra == {}


def test_own_registrations_still_remove_list_hooks():
    hooks = [print]
    RemovableHandle(hooks, print).remove()
    assert hooks == []
