"""The linear-algebra error class under both of PyTorch's names: `torch.linalg.LinAlgError`
is `torch._C._LinAlgError`, and solvers written for PyTorch (torchdiffeq's implicit methods)
catch a singular system by the second."""
import pytest

import tensorlib as tl


def test_linalg_error_is_the_cores_linalg_error():
    assert tl._C._LinAlgError is tl.linalg.LinAlgError
    assert issubclass(tl._C._LinAlgError, RuntimeError)


def test_a_singular_solve_is_caught_by_the_cores_name(device):
    singular = tl.tensor([[1.0, 2.0], [2.0, 4.0]], device=device)
    with pytest.raises(tl._C._LinAlgError, match="singular"):
        tl.linalg.solve(singular, tl.ones(2, device=device))
    # the failed call leaves everything usable
    eye = tl.eye(2, device=device)
    assert tl.linalg.solve(eye, tl.ones(2, device=device)).tolist() == [1.0, 1.0]
