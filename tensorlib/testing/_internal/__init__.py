"""torch.testing._internal: the parts of PyTorch's own test framework that libraries' test
suites import (common_utils.TestCase)."""
