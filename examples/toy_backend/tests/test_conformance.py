"""The toy backend against tensorlib's backend conformance suite (install the package first:
`pip install -e examples/toy_backend`)."""
from tensorlib.testing.conformance import ConformanceSuite


class TestToyConformance(ConformanceSuite):
    device = "toy"


class TestToySecondDevice(ConformanceSuite):
    device = "toy:1"
