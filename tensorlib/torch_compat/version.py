"""`torch.version` (and `torch.torch_version`) under tensorlib.torch_compat: the PyTorch version
libraries' checks see, no CUDA/ROCm build numbers (tensorlib's GPUs are plugins, not a build)."""
import re

from tensorlib.torch_compat import TORCH_VERSION


class TorchVersion(str):
    """A version string that compares with strings and tuples by release numbers, as PyTorch's
    does (`torch.__version__ >= "2.1"`, `>= (2, 1)`)."""

    def _release(self):
        return _release_numbers(str(self))

    def _other(self, other):
        if isinstance(other, tuple):
            return tuple(int(part) for part in other)
        return _release_numbers(str(other))

    def __lt__(self, other):
        return self._release() < self._other(other)

    def __le__(self, other):
        return self._release() <= self._other(other)

    def __gt__(self, other):
        return self._release() > self._other(other)

    def __ge__(self, other):
        return self._release() >= self._other(other)

    def __eq__(self, other):
        if isinstance(other, (str, tuple)):
            return self._release() == self._other(other)
        return NotImplemented

    __hash__ = str.__hash__


def _release_numbers(text):
    """(2, 5) for "2.5.0", "2.5.0+cpu" or "2.5.0a0": the leading numbers, trailing zeros dropped."""
    numbers = []
    for part in text.split("+")[0].split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() < len(part):       # "0a0", "0rc1": a pre-release ends the release numbers
            break
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


__version__ = TorchVersion(TORCH_VERSION)
cuda = None
hip = None
git_version = "tensorlib"
debug = False
