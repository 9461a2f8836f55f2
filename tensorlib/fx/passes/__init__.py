"""Passes over fx graphs."""
from tensorlib.fx.passes import shape_prop  # noqa: F401
