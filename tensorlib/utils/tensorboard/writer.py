"""SummaryWriter (torch.utils.tensorboard's API) over tensorboard's EventFileWriter."""
import os
import socket
import time
from datetime import datetime

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tensorlib.utils.tensorboard import summary as _summary


class FileWriter:
    """Events into one log directory, through tensorboard's own writer."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_summary(self, summary, global_step=None, walltime=None):
        event = Event(summary=summary, wall_time=time.time() if walltime is None
                      else walltime)
        if global_step is not None:
            event.step = int(global_step)
        self.event_writer.add_event(event)

    def add_event(self, event):
        self.event_writer.add_event(event)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


class SummaryWriter:
    """Write scalars, histograms, images, text, hparams and embeddings for TensorBoard.
    `log_dir` defaults to runs/<date>_<host><comment>, as torch's."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = \
            max_queue, flush_secs, filename_suffix
        self.file_writer = None
        self.all_writers = {}
        self._get_file_writer()

    def _get_file_writer(self):
        if self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    # ---- what can be logged --------------------------------------------------------------
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._get_file_writer().add_summary(_summary.scalar(tag, scalar_value), global_step,
                                            walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """One run per key (log_dir/<main_tag>_<key>), each holding main_tag, as torch."""
        walltime = time.time() if walltime is None else walltime
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self._get_file_writer().get_logdir(),
                                main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(path, self.max_queue,
                                                             self.flush_secs,
                                                             self.filename_suffix)
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        self._get_file_writer().add_summary(_summary.histogram(tag, values, bins, max_bins),
                                            global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats),
                                            global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None,
                   dataformats="NCHW"):
        self._get_file_writer().add_summary(_summary.images(tag, img_tensor, dataformats),
                                            global_step, walltime)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """(N, T, C, H, W) videos as one animated GIF (needs moviepy, as torch's)."""
        self._get_file_writer().add_summary(_summary.video(tag, vid_tensor, fps), global_step,
                                            walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid) rendered to an image."""
        figures = figure if isinstance(figure, list) else [figure]
        arrays = []
        for fig in figures:
            fig.canvas.draw()
            arrays.append(np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy())
            if close:
                import matplotlib.pyplot as plt
                plt.close(fig)
        if len(arrays) == 1:
            self.add_image(tag, arrays[0], global_step, walltime, dataformats="HWC")
        else:
            self.add_images(tag, np.stack(arrays), global_step, walltime, dataformats="NHWC")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step,
                                            walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """The hparams plugin's records (summary.hparams) and each metric as a scalar, in a
        run of their own (log_dir/<run_name>), as torch."""
        records = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = os.path.join(self._get_file_writer().get_logdir(),
                           run_name or str(time.time()))
        with SummaryWriter(log_dir=run) as w:
            for record in records:
                w.file_writer.add_summary(record, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        """The projector's files: <step>/<tag>/tensors.tsv (+ metadata.tsv, sprite.png) and
        an entry in projector_config.pbtxt."""
        from google.protobuf import text_format
        from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
        mat = _summary.to_numpy(mat)
        if mat.ndim != 2:
            raise ValueError(f"mat should be 2D, got shape {mat.shape}")
        sub = f"{global_step or 0:05d}/{tag}"
        folder = os.path.join(self._get_file_writer().get_logdir(), sub)
        os.makedirs(folder, exist_ok=True)
        np.savetxt(os.path.join(folder, "tensors.tsv"), mat, delimiter="\t", fmt="%.8g")
        config = ProjectorConfig()
        emb = config.embeddings.add()
        emb.tensor_name = f"{tag}:{global_step or 0:05d}"
        emb.tensor_path = f"{sub}/tensors.tsv"
        if metadata is not None:
            rows = ["\t".join(map(str, metadata_header))] if metadata_header else []
            rows += ["\t".join(map(str, m)) if isinstance(m, (list, tuple)) else str(m)
                     for m in metadata]
            with open(os.path.join(folder, "metadata.tsv"), "w") as f:
                f.write("\n".join(rows) + "\n")
            emb.metadata_path = f"{sub}/metadata.tsv"
        if label_img is not None:
            imgs = _summary.to_numpy(label_img)
            if imgs.shape[0] != mat.shape[0]:
                raise ValueError("#labels should equal with #data points")
            side = int(np.ceil(np.sqrt(imgs.shape[0])))
            hwc = np.transpose(imgs, (0, 2, 3, 1))
            grid = _summary._to_uint8(_summary.make_grid(hwc, ncols=side))
            full = np.zeros((side * hwc.shape[1], side * hwc.shape[2], grid.shape[2]),
                            np.uint8)
            full[:grid.shape[0], :grid.shape[1]] = grid
            with open(os.path.join(folder, "sprite.png"), "wb") as f:
                f.write(_summary._png(full))
            emb.sprite.image_path = f"{sub}/sprite.png"
            emb.sprite.single_image_dim.extend([hwc.shape[2], hwc.shape[1]])
        with open(os.path.join(self._get_file_writer().get_logdir(),
                               "projector_config.pbtxt"), "a") as f:
            f.write(text_format.MessageToString(config))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's graph, traced on input_to_model as tensorlib.jit.trace traces it."""
        from tensorlib.utils.tensorboard._graph import graph_def
        if input_to_model is None:
            raise ValueError("add_graph needs input_to_model (the example inputs to trace)")
        graph, traced = graph_def(model, input_to_model)
        if verbose:
            print(traced.graph)
        self._get_file_writer().add_event(Event(graph_def=graph.SerializeToString()))

    # ---- lifetime --------------------------------------------------------------------------
    def flush(self):
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = None
        self.all_writers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
