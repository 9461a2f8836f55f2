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


def _plugin_records(acc):
    from tensorboard.plugins.hparams import metadata
    content = acc.PluginTagToContent("hparams")
    return (metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG]),
            metadata.parse_session_start_info_plugin_data(
                content[metadata.SESSION_START_INFO_TAG]),
            metadata.parse_session_end_info_plugin_data(content[metadata.SESSION_END_INFO_TAG]))


def test_summary_hparams_records_written_by_hand_read_back(tmp_path):
    # Stable-Baselines3's logger calls summary.hparams and writes the three records itself
    from tensorlib.utils.tensorboard.summary import hparams
    records = hparams({"lr": 0.1, "opt": "adam", "steps": 3, "clip": tensorlib.tensor([0.5]),
                       "norm": True}, {"rollout/reward": 0},
                      hparam_domain_discrete={"opt": ["sgd", "adam"]})
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        for record in records:
            w.file_writer.add_summary(record)
    from tensorboard.plugins.hparams.api_pb2 import (DATA_TYPE_FLOAT64, DATA_TYPE_STRING,
                                                     STATUS_SUCCESS)
    experiment, start, end = _plugin_records(_read(tmp_path))
    number, string = DATA_TYPE_FLOAT64, DATA_TYPE_STRING      # a bool is a number, as torch's
    assert [(h.name, h.type) for h in experiment.hparam_infos] == \
        [("lr", number), ("opt", string), ("steps", number), ("clip", number), ("norm", number)]
    assert [v.string_value for v in experiment.hparam_infos[1].domain_discrete.values] == \
        ["sgd", "adam"]
    assert [m.name.tag for m in experiment.metric_infos] == ["rollout/reward"]
    assert start.hparams["lr"].number_value == 0.1 and start.hparams["opt"].string_value == "adam"
    assert start.hparams["clip"].number_value == 0.5 and start.hparams["norm"].number_value == 1
    assert end.status == STATUS_SUCCESS


def test_summary_hparams_equals_torchs():
    pytest.importorskip("torch")
    from torch.utils.tensorboard.summary import hparams as torch_hparams
    from tensorboard.plugins.hparams import metadata

    from tensorlib.utils.tensorboard.summary import hparams
    args = ({"lr": 0.1, "opt": "sgd", "flag": False, "n": 3}, {"acc": 0.9}, {"n": [3, 5]})
    parse = [metadata.parse_experiment_plugin_data,
             metadata.parse_session_start_info_plugin_data,
             metadata.parse_session_end_info_plugin_data]
    ours, theirs = hparams(*args), torch_hparams(*args)
    for read, a, b in zip(parse, ours, theirs):
        assert a.value[0].tag == b.value[0].tag
        assert read(a.value[0].metadata.plugin_data.content) == \
            read(b.value[0].metadata.plugin_data.content)


@pytest.mark.parametrize("bad, error", [
    (({"lr": [0.1]}, {}), ValueError), (([("lr", 0.1)], {}), TypeError),
    (({"lr": 0.1}, {}, {"lr": [0.1, "x"]}), TypeError), (({"lr": 0.1}, {}, {"b": [1]}), TypeError)])
def test_summary_hparams_refuses_bad_values(bad, error):
    from tensorlib.utils.tensorboard.summary import hparams
    with pytest.raises(error):
        hparams(*bad)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 16])
def test_video_frames_are_laid_out_as_torchs(n):
    pytest.importorskip("torch")
    from torch.utils.tensorboard._utils import _prepare_video

    from tensorlib.utils.tensorboard.summary import _to_uint8, _video_frames
    videos = np.random.default_rng(n).random((n, 3, 2, 4, 5)).astype(np.float32)
    want = _to_uint8(_prepare_video(videos.copy()))
    np.testing.assert_array_equal(_video_frames(videos), want)


def test_add_video_writes_a_gif_or_says_moviepy_is_needed(tmp_path, capsys):
    import importlib.util
    videos = tensorlib.rand(2, 6, 3, 8, 8)
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        w.add_video("clip", videos, global_step=1, fps=5)
    image = _read(tmp_path).Images("clip")[0]
    assert (image.height, image.width) == (8, 16)
    if importlib.util.find_spec("moviepy") is None:
        assert "add_video needs package moviepy" in capsys.readouterr().out
    else:
        assert image.encoded_image_string[:6] == b"GIF89a"


def test_add_video_refuses_other_ranks(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as w:
        with pytest.raises(ValueError, match=r"\(N, T, C, H, W\)"):
            w.add_video("clip", tensorlib.rand(6, 3, 8, 8))
