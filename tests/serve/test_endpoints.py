"""Every endpoint of a real `tensorlib serve` subprocess, through a real HTTP client."""
import io

import numpy as np
import pytest

import tensorlib

NPY = "application/x-npy"


def _expected(path, *arrays):
    m = tensorlib.jit.load(path)
    with tensorlib.no_grad():
        out = m(*[tensorlib.from_numpy(np.ascontiguousarray(a)) for a in arrays])
    return [o.numpy() for o in out] if isinstance(out, tuple) else out.numpy()


def _npy(a):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, allow_pickle=False)
    return buf.getvalue()


def test_ping(server):
    assert server.json("GET", "/ping") == (200, {"status": "Healthy"})


def test_predict_json_matches_the_model(server, model_files):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    status, doc = server.json("POST", "/predictions/mlp", {"inputs": x.tolist()})
    assert status == 200
    np.testing.assert_allclose(doc["outputs"], _expected(model_files["mlp"], x), rtol=1e-5,
                               atol=1e-6)


def test_predict_several_inputs_and_outputs(server, model_files):
    a = np.ones((2, 5), np.float32)
    b = np.arange(10, dtype=np.float32).reshape(2, 5)
    status, doc = server.json("POST", "/predictions/pair", {"inputs": [a.tolist(), b.tolist()]})
    assert status == 200
    want = _expected(model_files["pair"], a, b)
    assert len(doc["outputs"]) == 2
    for got, w in zip(doc["outputs"], want):
        np.testing.assert_allclose(got, w, rtol=1e-6)


def test_predict_npy_in_and_out(server, model_files):
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    status, headers, body = server.request("POST", "/predictions/mlp", _npy(x),
                                           {"Content-Type": NPY, "Accept": NPY})
    assert status == 200 and headers["Content-Type"].startswith(NPY)
    got = np.lib.format.read_array(io.BytesIO(body), allow_pickle=False)
    assert got.dtype == np.float32 and got.shape == (2, 3)
    np.testing.assert_allclose(got, _expected(model_files["mlp"], x), rtol=1e-5, atol=1e-6)


def test_npy_of_objects_is_refused_unread(server):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array([[object()] * 4], dtype=object), allow_pickle=True)
    status, doc = server.json("POST", "/predictions/mlp", buf.getvalue(),
                              {"Content-Type": NPY})
    assert status == 400 and "npy" in doc["message"]


@pytest.mark.parametrize("body, words", [
    (b"{not json", "malformed JSON"),
    ({"input": [[1, 2, 3, 4]]}, '"inputs"'),
    ({"inputs": [[1, 2, 3]]}, "(N, 4) float32"),
    ({"inputs": [[1, 2], [3]]}, "(N, 4) float32"),
    ({"inputs": [[1, 2, 3, 4]], "dtype": "float64"}, "(N, 4) float32"),
    ({"inputs": [[1, 2, 3, 4]], "dtype": "nonsense"}, "unknown dtype"),
])
def test_bad_requests_name_the_signature(server, body, words):
    status, doc = server.json("POST", "/predictions/mlp", body)
    assert status == 400
    assert doc["code"] == 400 and doc["type"] == "BadRequestException"
    assert words in doc["message"]


def test_wrong_number_of_inputs(server):
    status, doc = server.json("POST", "/predictions/pair", {"inputs": [[1, 2, 3, 4, 5]]})
    assert status == 400 and "takes 2 inputs" in doc["message"]
    assert "(N, 5) float32; (N, 5) float32" in doc["message"]


def test_unknown_model_is_404(server):
    status, doc = server.json("POST", "/predictions/nope", {"inputs": [[1.0]]})
    assert (status, doc["code"], doc["type"]) == (404, 404, "ModelNotFoundException")
    assert server.json("GET", "/models/nope")[0] == 404
    assert server.json("DELETE", "/models/nope")[0] == 404


def test_model_exception_is_500_and_the_server_keeps_serving(server):
    status, doc = server.json("POST", "/predictions/matmul",
                              {"inputs": [np.ones((2, 3)).tolist(), np.ones((4, 5)).tolist()]})
    assert status == 500 and doc["type"] == "InternalServerException"
    assert "matmul" in doc["message"]
    status, doc = server.json("POST", "/predictions/matmul",
                              {"inputs": [np.ones((2, 3)).tolist(), np.ones((3, 2)).tolist()]})
    assert status == 200 and doc["outputs"] == [[3.0, 3.0], [3.0, 3.0]]
    assert server.metric("tensorlib_serve_requests_total", model="matmul", code="500") >= 1


def test_body_over_the_limit_is_413(server):
    status, doc = server.json("POST", "/predictions/mlp", b"[" + b"0," * 60000 + b"0]")
    assert (status, doc["code"]) == (413, 413)


def test_npy_of_several_outputs_is_406(server):
    status, doc = server.json("POST", "/predictions/pair",
                              {"inputs": [[[1.0] * 5], [[2.0] * 5]]}, {"Accept": NPY})
    assert status == 406 and doc["type"] == "NotAcceptableException"


def test_list_and_describe_models(server, model_files):
    status, doc = server.json("GET", "/models")
    assert status == 200
    assert {"modelName": "mlp", "modelUrl": model_files["mlp"]} in doc["models"]
    status, doc = server.json("GET", "/models/mlp")
    assert status == 200
    (desc,) = doc
    assert desc["batchSize"] == 16 and desc["maxBatchDelay"] == 50
    assert desc["inputs"] == [{"shape": [None, 4], "dtype": "float32"}]
    assert len(desc["workers"]) == desc["minWorkers"] >= 1


def test_register_scale_and_unregister(server, model_files):
    path = f"/models?url={model_files['mlp']}&model_name=mlp2&batch_size=4&max_batch_delay=7"
    assert server.json("POST", path)[0] == 200
    assert server.json("POST", path)[0] == 409
    desc = server.json("GET", "/models/mlp2")[1][0]
    assert (desc["batchSize"], desc["maxBatchDelay"]) == (4, 7)
    assert server.json("PUT", "/models/mlp2?min_worker=3")[0] == 200
    assert len(server.json("GET", "/models/mlp2")[1][0]["workers"]) == 3
    assert server.metric("tensorlib_serve_workers", model="mlp2") == 3
    status, doc = server.json("POST", "/predictions/mlp2", {"inputs": [[0.5, 0, 0, 1]]})
    assert status == 200 and len(doc["outputs"][0]) == 3
    assert server.json("PUT", "/models/mlp2?min_worker=1")[0] == 200
    assert server.json("POST", "/predictions/mlp2", {"inputs": [[0.5, 0, 0, 1]]})[0] == 200
    assert server.json("PUT", "/models/mlp2?min_worker=-1")[0] == 400
    assert server.json("DELETE", "/models/mlp2")[0] == 200
    assert server.json("POST", "/predictions/mlp2", {"inputs": [[0.5, 0, 0, 1]]})[0] == 404
    assert "mlp2" not in [m["modelName"] for m in server.json("GET", "/models")[1]["models"]]


def test_register_a_missing_file_is_400(server, tmp_path):
    status, doc = server.json("POST", f"/models?url={tmp_path / 'absent.tlj'}&model_name=x")
    assert status == 400 and "cannot read" in doc["message"]


def test_metrics_are_prometheus_text(server):
    server.json("POST", "/predictions/mlp", {"inputs": [[1, 2, 3, 4]]})
    status, headers, body = server.request("GET", "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    for name in ("tensorlib_serve_requests_total", "tensorlib_serve_request_latency_seconds_bucket",
                 "tensorlib_serve_batch_size_bucket", "tensorlib_serve_queue_depth"):
        assert name in text
    assert server.metric("tensorlib_serve_requests_total", model="mlp", code="200") >= 1


def test_unknown_path_is_json_404(server):
    status, doc = server.json("GET", "/nowhere")
    assert (status, doc["code"]) == (404, 404)
