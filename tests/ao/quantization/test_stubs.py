"""QuantStub / DeQuantStub / QuantWrapper before conversion: they pass tensors through (model
code such as torchvision's quantizable models builds them unconditionally)."""
import tensorlib
import tensorlib.nn as nn
from tensorlib.ao.quantization import DeQuantStub, QConfig, QuantStub, QuantWrapper, \
    default_observer, default_weight_observer


def test_stubs_are_identities_that_keep_their_qconfig():
    qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
    x = tensorlib.randn(3)
    assert QuantStub()(x) is x and DeQuantStub()(x) is x
    assert QuantStub(qconfig).qconfig is qconfig and not hasattr(DeQuantStub(), "qconfig")


def test_wrapper_surrounds_the_module():
    lin = nn.Linear(2, 2).eval()
    wrapped = QuantWrapper(lin)
    x = tensorlib.randn(4, 2)
    assert tensorlib.equal(wrapped(x), lin(x))
    assert [name for name, _ in wrapped.named_children()] == ["quant", "dequant", "module"]
    assert wrapped.training is False
