"""SummaryWriter: event files read back with tensorboard's EventAccumulator hold what was
written."""
import os

import numpy as np
import pytest

import tensorlib

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa

from tensorlib.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "images": 0,
                                                     "histograms": 0, "scalars": 0})
    acc.Reload()
    return acc


def test_scalars_histograms_images_text(tmp_path):
    values = tensorlib.randn(1000)
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("loss", tensorlib.tensor(1.0 / (step + 1)), step)
        w.add_histogram("weights", values, global_step=7)
        w.add_image("img", tensorlib.rand(3, 8, 10), 1)
        w.add_images("batch", np.random.rand(4, 1, 5, 6).astype(np.float32), 2)
        w.add_text("note", "hello **world**", 0)
    acc = _read(tmp_path)
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in loss], [1.0, 0.5, 1 / 3], rtol=1e-6)
    (h,) = acc.Histograms("weights")
    v = values.numpy().astype(np.float64)
    assert h.step == 7 and h.histogram_value.num == 1000
    assert sum(h.histogram_value.bucket) == 1000
    np.testing.assert_allclose([h.histogram_value.min, h.histogram_value.max,
                                h.histogram_value.sum], [v.min(), v.max(), v.sum()], rtol=1e-6)
    (img,) = acc.Images("img")
    assert (img.height, img.width) == (8, 10)
    (grid,) = acc.Images("batch")
    assert (grid.height, grid.width) == (5, 4 * 6)
    (text,) = acc.Tensors("note")
    assert text.tensor_proto.string_val == [b"hello **world**"]


def test_add_scalars_hparams_embedding(tmp_path):
    w = SummaryWriter(log_dir=str(tmp_path))
    for step in range(2):
        w.add_scalars("run", {"train": step, "val": 2 * step}, step)
    w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hparam/acc": 0.9}, run_name="trial")
    w.add_embedding(tensorlib.randn(5, 3), metadata=list("abcde"),
                    label_img=tensorlib.rand(5, 3, 4, 4), tag="emb")
    w.close()
    val = _read(tmp_path / "run_val").Scalars("run")
    assert [e.value for e in val] == [0.0, 2.0]
    trial = _read(tmp_path / "trial")
    assert trial.Scalars("hparam/acc")[0].value == pytest.approx(0.9)
    assert "_hparams_/session_start_info" in trial.Tags()["tensors"] or \
        "_hparams_/session_start_info" in str(trial.PluginTagToContent("hparams"))
    folder = tmp_path / "00000" / "emb"
    assert np.loadtxt(folder / "tensors.tsv").shape == (5, 3)
    assert (folder / "metadata.tsv").read_text().split() == list("abcde")
    assert (folder / "sprite.png").exists()
    assert "tensor_path" in (tmp_path / "projector_config.pbtxt").read_text()


def test_add_graph_from_the_trace(tmp_path):
    model = tensorlib.nn.Sequential(tensorlib.nn.Linear(4, 8), tensorlib.nn.ReLU(),
                                    tensorlib.nn.Linear(8, 2))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(model, tensorlib.randn(3, 4))
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    graph = acc.Graph()
    ops = {n.name: n.op for n in graph.node}
    assert ops["Sequential/0"] == "Linear" and ops["Sequential/1"] == "ReLU"
    assert ops["input/input_1"] == "IO Node" and ops["output/output"] == "IO Node"
    linear2 = next(n for n in graph.node if n.name == "Sequential/2")
    assert list(linear2.input) == ["Sequential/1"]
    dims = [d.size for d in linear2.attr["_output_shapes"].list.shape[0].dim]
    assert dims == [3, 2]


def test_default_log_dir_and_bad_scalar(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    # torch.utils.tensorboard's errors: an assertion for several elements, and
    # NotImplementedError for what is neither a number, an array nor a tensor (programs
    # catch it to skip values they cannot log)
    with pytest.raises(AssertionError, match="one element"):
        w.add_scalar("bad", tensorlib.randn(3))
    with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
        w.add_scalar("bad", [1.0, 2.0])
    w.add_scalar("good", np.float32(0.5))
    w.add_scalar("good", tensorlib.tensor([2.0]))
    w.close()
