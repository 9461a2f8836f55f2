"""Model files are data: a pickle, a PyTorch zip holding a pickle, a pickle behind
tensorlib's header or a truncated graph is refused (400 when registered over HTTP, exit 2
on the command line) and nothing in it runs."""
import io
import os
import pickle
import zipfile

import pytest

from tensorlib._serialization import torch_pt
from tensorlib.serve.errors import BadRequest
from tensorlib.serve.registry import load_graph


class _Payload:
    """Unpickling this creates the directory `path`: proof that the pickle ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.makedirs, (self.path,)


def _evil(tmp_path, kind):
    marker = str(tmp_path / f"pwned-{kind}")
    data = pickle.dumps(_Payload(marker), protocol=2)
    path = tmp_path / f"{kind}.tlj"
    if kind == "pickle":
        path.write_bytes(data)
    elif kind == "torch-zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("archive/data.pkl", data)
            z.writestr("archive/version", "3\n")
        path.write_bytes(buf.getvalue())
    else:                                   # a pickle behind tensorlib's checkpoint header
        path.write_bytes(b"\x89TLCKPT\n" + data)
    return str(path), marker


KINDS = ["pickle", "torch-zip", "magic-then-pickle"]


@pytest.mark.parametrize("kind", KINDS)
def test_registering_a_crafted_file_is_400_and_runs_nothing(server, tmp_path, kind):
    path, marker = _evil(tmp_path, kind)
    status, doc = server.json("POST", f"/models?url={path}&model_name=evil")
    assert (status, doc["code"], doc["type"]) == (400, 400, "BadRequestException")
    assert not os.path.exists(marker)
    assert server.json("GET", "/models/evil")[0] == 404


def test_registering_a_truncated_graph_is_400(server, model_files, tmp_path):
    data = open(model_files["mlp"], "rb").read()
    path = tmp_path / "truncated.tlj"
    path.write_bytes(data[: len(data) // 2])
    status, doc = server.json("POST", f"/models?url={path}&model_name=cut")
    assert status == 400 and "not a loadable" in doc["message"]


@pytest.mark.parametrize("kind", KINDS)
def test_load_graph_refuses_without_unpickling(tmp_path, kind, monkeypatch):
    path, marker = _evil(tmp_path, kind)

    def no_unpickling(*args, **kwargs):
        raise AssertionError("a model file reached an unpickler")
    monkeypatch.setattr(pickle, "Unpickler", no_unpickling)
    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    monkeypatch.setattr(torch_pt, "read", no_unpickling)
    with pytest.raises(BadRequest):
        load_graph(path)
    assert not os.path.exists(marker)


def test_command_line_refuses_a_pickle(start_server, tmp_path):
    path, marker = _evil(tmp_path, "pickle")
    with pytest.raises(RuntimeError, match=r"exit 2\).*not a graph saved by tensorlib.jit"):
        start_server("--model", f"evil={path}")
    assert not os.path.exists(marker)
