"""Stopping and back-pressure: SIGINT/SIGTERM stop listening, answer what is in flight and
exit 0; a full queue answers 503 with Retry-After."""
import json
import signal
import socket
import threading
import time

import pytest


def _wait_for(check, what, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _in_thread(fn):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("value", fn()))
    t.start()
    return t, out


def _refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_answers_in_flight_then_exits_0(start_server, model_files, sig):
    s = start_server("--model", f"slow={model_files['mlp']}", "--batch-size", "64",
                     "--max-batch-delay", "3000")
    t, out = _in_thread(lambda: s.json("POST", "/predictions/slow", {"inputs": [[1, 2, 3, 4]]}))
    _wait_for(lambda: s.metric("tensorlib_serve_queue_depth", model="slow") == 1,
              "the request to be accepted")
    s.proc.send_signal(sig)
    _wait_for(lambda: _refused(s.port), "the listener to close")
    assert s.proc.poll() is None            # still answering the request in flight
    t.join(60)
    status, doc = out["value"]
    assert status == 200 and len(doc["outputs"][0]) == 3
    assert s.proc.wait(60) == 0              # the one signal was enough


def test_a_repeated_signal_does_not_kill_the_shutdown(start_server, model_files):
    s = start_server("--model", f"slow={model_files['mlp']}", "--batch-size", "64",
                     "--max-batch-delay", "3000")
    t, out = _in_thread(lambda: s.json("POST", "/predictions/slow", {"inputs": [[1, 2, 3, 4]]}))
    _wait_for(lambda: s.metric("tensorlib_serve_queue_depth", model="slow") == 1,
              "the request to be accepted")
    s.proc.send_signal(signal.SIGTERM)
    _wait_for(lambda: _refused(s.port), "the listener to close")
    s.proc.send_signal(signal.SIGTERM)      # a supervisor's retry, a second Ctrl-C
    t.join(60)
    assert out["value"][0] == 200
    assert s.proc.wait(60) == 0


def test_full_queue_is_503_with_retry_after(start_server, model_files):
    s = start_server("--model", f"mlp={model_files['mlp']}", "--queue-size", "2",
                     "--max-batch-delay", "0")
    assert s.json("PUT", "/models/mlp?min_worker=0")[0] == 200
    body = {"inputs": [[1, 2, 3, 4]]}
    waiting = [_in_thread(lambda: s.json("POST", "/predictions/mlp", body)) for _ in range(2)]
    _wait_for(lambda: s.json("GET", "/models/mlp")[1][0]["queueDepth"] == 2, "a full queue")
    status, headers, data = s.request("POST", "/predictions/mlp", json.dumps(body).encode())
    assert status == 503 and headers["Retry-After"] == "1"
    assert json.loads(data)["type"] == "ServiceUnavailableException"
    assert s.json("PUT", "/models/mlp?min_worker=1")[0] == 200
    for t, out in waiting:
        t.join(60)
        assert out["value"][0] == 200
    assert s.metric("tensorlib_serve_requests_total", model="mlp", code="503") == 1
    assert s.stop() == 0


def test_unregistering_answers_queued_requests_503(start_server, model_files):
    s = start_server()
    assert s.json("POST", f"/models?url={model_files['mlp']}&model_name=m&initial_workers=0")[0] \
        == 200
    t, out = _in_thread(lambda: s.json("POST", "/predictions/m", {"inputs": [[1, 2, 3, 4]]}))
    _wait_for(lambda: s.json("GET", "/models/m")[1][0]["queueDepth"] == 1, "a queued request")
    assert s.json("DELETE", "/models/m")[0] == 200
    t.join(60)
    status, doc = out["value"]
    assert status == 503 and "unregistered" in doc["message"]
    assert s.stop() == 0
