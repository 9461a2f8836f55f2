"""torch.compiler.allow_in_graph / is_dynamo_compiling: libraries (einx) mark their functions
at import; a compiled call through a marked function gives the eager result."""
import pytest

import tensorlib


def scaled_softplus(x):
    return tensorlib.nn.functional.softplus(x) * 2


def test_allowed_function_compiles_to_the_eager_result():
    assert tensorlib.compiler.allow_in_graph(scaled_softplus) is scaled_softplus
    marked = tensorlib.compiler.allow_in_graph([scaled_softplus, tensorlib.exp])
    assert marked == [scaled_softplus, tensorlib.exp]
    x = tensorlib.linspace(-2, 2, 7)
    compiled = tensorlib.compile(lambda t: scaled_softplus(t) + 1)
    for _ in range(3):
        assert compiled(x).tolist() == pytest.approx((scaled_softplus(x) + 1).tolist())


def test_allow_in_graph_refuses_non_callables():
    with pytest.raises(TypeError, match="callable"):
        tensorlib.compiler.allow_in_graph(3)


def test_is_dynamo_compiling_only_inside_a_capture():
    seen = []

    def probe(x):
        seen.append(tensorlib.compiler.is_dynamo_compiling())
        return x * 2
    assert not tensorlib.compiler.is_dynamo_compiling()
    tensorlib.compile(probe)(tensorlib.ones(3))
    assert True in seen
