"""Argument normalisation shared by the ops: PyTorch accepts sizes as varargs or one sequence,
dims as an int, a sequence or None (sizes_arg, dims_arg: tensorlib/_C/args.pyx)."""
from tensorlib._C.device import canonical
from tensorlib._C.args import dims_arg, sizes_arg  # noqa: F401 - in C: nearly every op parses one


def device_arg(device):
    return canonical(device)


def sizes_or_keyword(sizes, size):
    """The sizes of a factory given as varargs or as `size=` (torch.empty(size=(2, 3)), as
    PyTorch's factories and new_* methods take them), never both."""
    if size is not None:
        if sizes:
            raise TypeError("size given both positionally and as a keyword")
        sizes = (size,)
    return sizes_arg(sizes)


def sizes_by_keyword(op, args, keyword, name):
    """Methods taking sizes spread out also take them as one keyword, as PyTorch's parser
    does (x.permute(dims=(1, 0)), x.expand(size=(3, 4)), x.reshape(shape=(6,)))."""
    if not keyword:
        return args
    unexpected = [key for key in keyword if key != name]
    if unexpected:
        raise TypeError(f"{op}() got an unexpected keyword argument '{unexpected[0]}'")
    if args:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    return (keyword[name],)
