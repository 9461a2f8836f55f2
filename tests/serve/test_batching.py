"""Dynamic batching under load: concurrent requests are answered correctly, each as the
model answers it alone, and some forwards carried more than one request."""
import asyncio
import json

import numpy as np
import pytest

import tensorlib

aiohttp = pytest.importorskip("aiohttp", reason="tensorlib serve needs the [serve] extra "
                                                "(pip install '.[serve]')")


def _alone(path, x):
    m = tensorlib.jit.load(path)
    with tensorlib.no_grad():
        return m(tensorlib.from_numpy(x)).numpy()


async def _fire(url, bodies):
    async with aiohttp.ClientSession() as session:
        async def one(body):
            async with session.post(url, data=json.dumps(body).encode()) as r:
                return r.status, await r.json()
        return await asyncio.gather(*(one(b) for b in bodies))


def test_64_concurrent_requests_are_batched_and_correct(server, model_files):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1 + i % 3, 4)).astype(np.float32) for i in range(64)]
    forwards_before = server.metric("tensorlib_serve_batch_size_count", model="mlp")
    requests_before = server.metric("tensorlib_serve_batch_size_sum", model="mlp")
    answers = asyncio.run(_fire(server.url + "/predictions/mlp",
                                [{"inputs": x.tolist()} for x in inputs]))
    for x, (status, doc) in zip(inputs, answers):
        assert status == 200, doc
        np.testing.assert_allclose(doc["outputs"], _alone(model_files["mlp"], x), rtol=1e-5,
                                   atol=1e-5)
    forwards = server.metric("tensorlib_serve_batch_size_count", model="mlp") - forwards_before
    served = server.metric("tensorlib_serve_batch_size_sum", model="mlp") - requests_before
    assert served == 64
    assert forwards < 64            # at least one forward carried several requests
    assert server.metric("tensorlib_serve_batch_size_bucket", model="mlp", le="1.0") < \
        server.metric("tensorlib_serve_batch_size_count", model="mlp")


def test_batched_multi_input_requests_split_back(server, model_files):
    rng = np.random.default_rng(1)
    pairs = [(rng.standard_normal((2, 5)).astype(np.float32),
              rng.standard_normal((2, 5)).astype(np.float32)) for _ in range(16)]
    answers = asyncio.run(_fire(server.url + "/predictions/pair",
                                [{"inputs": [a.tolist(), b.tolist()]} for a, b in pairs]))
    for (a, b), (status, doc) in zip(pairs, answers):
        assert status == 200
        np.testing.assert_allclose(doc["outputs"][0], a * 2 + b, rtol=1e-6)
        np.testing.assert_allclose(doc["outputs"][1], (a - b).sum(1), rtol=1e-5, atol=1e-6)


def test_a_failing_request_does_not_fail_its_batch(server):
    good = {"inputs": [np.ones((1, 3)).tolist(), np.ones((3, 2)).tolist()]}
    bad = {"inputs": [np.ones((1, 3)).tolist(), np.ones((4, 2)).tolist()]}
    answers = asyncio.run(_fire(server.url + "/predictions/matmul", [good, bad] * 8))
    assert [s for s, _ in answers] == [200, 500] * 8
    assert all(doc["outputs"] == [[3.0, 3.0]] for _, doc in answers[::2])


def test_requests_that_cannot_share_a_forward_are_run_apart(server):
    """A graph saved without a signature takes any shape and dtype: requests that differ
    arrive together and are each answered as alone."""
    bodies = [{"inputs": [[1.0, 2.0, 3.0]]}, {"inputs": [[1.0, 2.0, 3.0, 4.0]]},
              {"inputs": [[5, 6]], "dtype": "int64"}] * 6
    answers = asyncio.run(_fire(server.url + "/predictions/double", bodies))
    assert [doc["outputs"] for _, doc in answers] == \
        [[[2.0, 4.0, 6.0]], [[2.0, 4.0, 6.0, 8.0]], [[10, 12]]] * 6
