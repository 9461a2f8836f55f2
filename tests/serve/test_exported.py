"""Programs written by tensorlib.export.save, served like jit graphs: a dynamic batch
dimension is stacked across requests, each answer equals the program's own output; a
program exported with a static batch is refused with 400 naming the fix."""
import concurrent.futures

import numpy as np
import pytest

import tensorlib
from tensorlib import export, nn


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("exported")
    tensorlib.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2)).eval()
    batch = export.Dim("batch", min=1, max=256)
    dynamic = export.export(model, (tensorlib.randn(3, 6),),
                            dynamic_shapes={"input": {0: batch}})
    export.save(dynamic, str(d / "dynamic.tl"))
    export.save(export.export(model, (tensorlib.randn(3, 6),)), str(d / "static.tl"))
    return model, str(d / "dynamic.tl"), str(d / "static.tl")


def test_exported_program_is_served_and_batched(start_server, exported):
    model, dynamic, _ = exported
    server = start_server("--model", f"ep={dynamic}", "--batch-size", "8",
                          "--max-batch-delay", "50")
    status, doc = server.json("GET", "/models/ep")
    assert status == 200 and doc[0]["inputs"] == [{"shape": [None, 6], "dtype": "float32"}]
    rng = np.random.default_rng(0)
    rows = [rng.standard_normal((1, 6)).astype(np.float32) for _ in range(16)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(
            lambda x: server.json("POST", "/predictions/ep", {"inputs": x.tolist()}), rows))
    with tensorlib.no_grad():
        for x, (status, doc) in zip(rows, answers):
            assert status == 200
            np.testing.assert_allclose(doc["outputs"], model(tensorlib.tensor(x)).numpy(),
                                       rtol=1e-5, atol=1e-6)
    assert server.metric("tensorlib_serve_batch_size_sum", model="ep") >= 16
    assert server.stop() == 0


def test_static_batch_program_is_refused(start_server, exported):
    _, _, static = exported
    server = start_server()
    status, doc = server.json("POST", f"/models?url={static}&model_name=st")
    assert status == 400
    assert "static dim 0" in doc["message"] and "export.Dim" in doc["message"]
    assert server.stop() == 0
