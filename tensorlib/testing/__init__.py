"""tensorlib.testing: torch.testing's assert_close (and its deprecated assert_allclose) and make_tensor, and the backend
conformance suite for plugin authors (tensorlib.testing.conformance)."""
from tensorlib.testing._comparison import assert_allclose, assert_close
from tensorlib.testing._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
