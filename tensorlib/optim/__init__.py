r"""tensorlib.optim: optimizers (torch.optim) and learning-rate schedulers
(`tensorlib.optim.lr_scheduler`)."""
from tensorlib.optim import lr_scheduler, swa_utils  # noqa: F401
from tensorlib.optim.optimizer import Optimizer
from tensorlib.optim.sgd import SGD
from tensorlib.optim.adam import Adam
from tensorlib.optim.adamw import AdamW
from tensorlib.optim.rmsprop import RMSprop
from tensorlib.optim.adagrad import Adagrad
from tensorlib.optim.adadelta import Adadelta
from tensorlib.optim.adamax import Adamax
from tensorlib.optim.nadam import NAdam
from tensorlib.optim.radam import RAdam
from tensorlib.optim.lbfgs import LBFGS
from tensorlib.optim.rprop import Rprop
from tensorlib.optim.asgd import ASGD
from tensorlib.optim.sparse_adam import SparseAdam
from tensorlib.optim.adafactor import Adafactor
from tensorlib.optim.muon import Muon

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "LBFGS", "Rprop", "ASGD", "SparseAdam", "Adafactor", "Muon",
           "lr_scheduler", "swa_utils"]
