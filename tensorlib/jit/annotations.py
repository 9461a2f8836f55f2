"""torch.jit.annotations: the type names TorchScript signatures use. `BroadcastingListN[T]`
(an argument given as one T or N of them) is subscriptable and means nothing in Python, as in
PyTorch."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401 - re-exported


class BroadcastingListCls:
    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()
BroadcastingList4 = BroadcastingList5 = BroadcastingList6 = BroadcastingList1

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union", "BroadcastingList1",
           "BroadcastingList2", "BroadcastingList3", "BroadcastingList4", "BroadcastingList5",
           "BroadcastingList6"]
