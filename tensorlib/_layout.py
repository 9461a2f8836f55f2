"""tensorlib.layout: how a tensor's elements are stored (torch.layout). `strided` is every
dense tensor's; the sparse layouts belong to the tensors of tensorlib.sparse."""
from tensorlib._C.dtypes import package_name

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged"]


class layout:  # noqa: N801 - torch.layout
    """One instance per layout, compared by identity; printed as PyTorch prints it."""

    __module__ = "tensorlib"
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'tensorlib.layout' instances")

    @classmethod
    def _make(cls, name):
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __repr__(self):
        return f"{package_name()}.{self._name}"

    def __reduce__(self):
        return (_by_name, (self._name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


# The tensor classes of the sparse layouts (registered by tensorlib.sparse when tensorlib is
# imported): a dense op that must take a sparse operand (zeros_like, add) finds it by its type
# here, a set lookup, and hands it to that class's hook (`_sparse_like`, `_sparse_add`).
SPARSE_TYPES = set()

strided = layout._make("strided")
sparse_coo = layout._make("sparse_coo")
sparse_csr = layout._make("sparse_csr")
sparse_csc = layout._make("sparse_csc")
sparse_bsr = layout._make("sparse_bsr")
sparse_bsc = layout._make("sparse_bsc")
jagged = layout._make("jagged")


def _by_name(name):
    return globals()[name]
