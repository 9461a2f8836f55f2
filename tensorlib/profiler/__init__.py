"""tensorlib.profiler: where the time goes (torch.profiler's API)."""
from tensorlib.profiler.profiler import (ProfilerAction, ProfilerActivity, profile,
                                         record_function, schedule, tensorboard_trace_handler)
from tensorlib.profiler.events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]
