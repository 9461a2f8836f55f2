"""torch.ops.profiler: a record_function range as two ops, what an fx graph calls to keep a
profiler range (the range's context manager cannot be a node): `_record_function_enter` opens
it and returns its handle, `_record_function_exit` closes it."""
from types import SimpleNamespace

from tensorlib.overrides import overridable
from tensorlib.profiler.profiler import record_function


def _record_function_enter(name, args=None):
    handle = record_function(name, args)
    handle.__enter__()
    return handle


def _record_function_exit(handle):
    if not isinstance(handle, record_function):
        raise TypeError(f"_record_function_exit: expected the handle _record_function_enter "
                        f"returned, got {type(handle).__name__}")
    handle.__exit__(None, None, None)


NAMESPACE = SimpleNamespace(
    _record_function_enter=overridable(_record_function_enter),
    _record_function_enter_new=overridable(_record_function_enter),
    _record_function_exit=overridable(_record_function_exit))
