"""export.save / export.load: a round trip in tensorlib's checkpoint format, with no pickle."""
import io

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.export import Dim, export, load, save

from tests.export.models import WithKwargs, cnn_eval


def test_round_trip_keeps_graph_signature_weights_and_guards(tmp_path):
    m = cnn_eval()
    x = tl.randn(2, 3, 8, 8)
    ep = export(m, (x,), dynamic_shapes={"x": {0: Dim("batch", max=8)}})
    path = tmp_path / "cnn.pt2"
    save(ep, str(path))
    assert b"pickle" not in path.read_bytes()[:8] and path.read_bytes()[:8] == b"\x89TLCKPT\n"
    back = load(str(path))
    assert back.graph_signature == ep.graph_signature
    assert str(back.graph) == str(ep.graph)
    assert list(back.state_dict) == list(ep.state_dict)
    x5 = tl.randn(5, 3, 8, 8)
    np.testing.assert_allclose(back.module()(x5).detach().numpy(), m(x5).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] <= 8"):
        back.module()(tl.randn(9, 3, 8, 8))
    assert back.range_constraints == {"batch": (0, 8)}
    assert tl.equal(back.example_inputs[0][0], x)


def test_round_trip_file_object_with_kwargs_and_extra_files():
    m = WithKwargs()
    x, mask = tl.randn(3, 4), tl.ones(3, 4)
    buf = io.BytesIO()
    save(export(m, (x,), {"mask": mask}), buf, extra_files={"note": "hello"})
    buf.seek(0)
    extra = {}
    back = load(buf, extra_files=extra)
    assert extra == {"note": "hello"}
    np.testing.assert_allclose(back.module()(x, mask=mask).detach().numpy(),
                               m(x, mask=mask).detach().numpy(), rtol=1e-6)


def test_load_refuses_other_files(tmp_path):
    path = tmp_path / "w.pt"
    tl.save({"a": tl.ones(1)}, str(path))
    with pytest.raises(RuntimeError, match="not a file written by tensorlib.export.save"):
        load(str(path))
    with pytest.raises(TypeError, match="ExportedProgram"):
        save(object(), io.BytesIO())
