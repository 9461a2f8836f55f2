"""torch.utils.benchmark: `Timer` measures a statement as PyTorch's does (warm-up, blocks of
runs, replicates summarised by median and IQR), `Measurement` holds the result, `Compare`
prints several as a table. Instruction counts (Callgrind) are not provided."""
from tensorlib.utils.benchmark.compare import Compare
from tensorlib.utils.benchmark.measurement import (Measurement, TaskSpec, select_unit,
                                                   trim_sigfig, unit_to_english)
from tensorlib.utils.benchmark.timer import Language, Timer, timer

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Language", "timer", "select_unit",
           "trim_sigfig", "unit_to_english"]
