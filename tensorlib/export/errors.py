"""The errors of tensorlib.export, typed as torch.export's so `except` clauses port."""

__all__ = ["GuardFailed", "GuardOnDataDependentSymNode", "UserError"]


class UserError(RuntimeError):
    """A program or dynamic_shapes spec export cannot honour (torch._dynamo.exc.UserError):
    a dynamic dimension the code specializes, an example outside its Dim's range."""


class GuardOnDataDependentSymNode(RuntimeError):
    """Python control flow (bool(), int(), .item()) on a tensor's data while exporting: the
    graph would hold one example's branch (torch's error of the same name)."""


class GuardFailed(AssertionError, RuntimeError):
    """An exported module called with an input its graph was not exported for (a static
    dimension of another size, a dynamic one out of range). torch 2.13 raises an
    AssertionError "Guard failed: ...", older releases a RuntimeError: this is both."""
