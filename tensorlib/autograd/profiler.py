"""tensorlib.autograd.profiler: torch's older spellings of the profiler."""
from tensorlib.profiler.events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from tensorlib.profiler.profiler import ProfilerActivity
from tensorlib.profiler.profiler import profile as _profile
from tensorlib.profiler.profiler import record_function  # noqa: F401


class profile(_profile):
    """`with tensorlib.autograd.profiler.profile(record_shapes=True) as prof:`; enabled=False
    records nothing; use_cuda=True or use_device= adds the device's kernel times."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False):
        activities = [ProfilerActivity.CPU]
        if use_cuda or use_device == "cuda":
            activities.append(ProfilerActivity.CUDA)
        elif use_device is not None:                  # "opencl", a plugin's device type
            activities.append(ProfilerActivity.PrivateUse1)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         acc_events=acc_events)
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.stop()
        return False

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)

    @property
    def function_events(self):
        return self.events()

    def __str__(self):
        """print(prof): the table of every event, in the order they ran (torch's too)."""
        if self._session is not None:
            return "<unfinished tensorlib.autograd.profile>"
        return self.events().table()
