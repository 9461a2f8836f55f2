"""The CPU backend against the backend conformance suite (what every plugin must pass)."""
from tensorlib.testing.conformance import ConformanceSuite


class TestCPUConformance(ConformanceSuite):
    device = "cpu"
