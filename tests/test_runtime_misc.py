"""set_printoptions and the start-up switches (typename, set_warn_always, ...) against torch."""
import warnings

import pytest

import tensorlib
from tensorlib._tensor_str import PRINT_OPTS

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_print():
    yield
    tensorlib.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _same_repr(values, **options):
    tensorlib.set_printoptions(**options)
    torch.set_printoptions(**options)
    ours = repr(tensorlib.tensor(values)).replace("tensorlib", "torch")
    assert ours == repr(torch.tensor(values))


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 6}, {"sci_mode": True}, {"sci_mode": False},
    {"profile": "short"}, {"threshold": 5, "edgeitems": 1}, {"linewidth": 30}])
def test_printoptions_change_repr_as_torch(restore_print, options):
    _same_repr([1.123456, 2.5, -3.0], **options)
    _same_repr([[0.5, 1.25, 3.0] * 4] * 3, **options)
    _same_repr([float(i) + 0.5 for i in range(40)], **options)


def test_long_vector_wraps_at_linewidth(restore_print):
    _same_repr(list(range(60)))
    _same_repr([float(i) / 7 for i in range(2000)])


def test_profile_then_options_and_unknown_profile(restore_print):
    tensorlib.set_printoptions(profile="full", precision=1)
    assert PRINT_OPTS.precision == 1 and PRINT_OPTS.threshold == float("inf")
    tensorlib.set_printoptions(profile="long")
    assert PRINT_OPTS.precision == 1 and PRINT_OPTS.threshold == float("inf")


def test_typename_and_is_storage():
    x = tensorlib.zeros(2, dtype=tensorlib.int64)
    assert tensorlib.typename(x) == "tensorlib.LongTensor"
    for obj in (3, "a", int, [1], pytest.raises):
        assert tensorlib.typename(obj) == torch.typename(obj)
    assert tensorlib.is_storage(x.untyped_storage()) and not tensorlib.is_storage(x)


def test_warn_always_and_interop_threads():
    before = tensorlib.is_warn_always_enabled()
    tensorlib.set_warn_always(True)
    assert tensorlib.is_warn_always_enabled()
    tensorlib.set_warn_always(before)
    with pytest.raises(TypeError):
        tensorlib.set_warn_always(1)
    n = tensorlib.get_num_interop_threads()
    tensorlib.set_num_interop_threads(2)
    assert tensorlib.get_num_interop_threads() == 2
    tensorlib.set_num_interop_threads(n)
    with pytest.raises(RuntimeError):
        tensorlib.set_num_interop_threads(0)
    assert tensorlib.set_flush_denormal(False) is False


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="deprecated"):
            tensorlib.set_default_tensor_type("tensorlib.DoubleTensor")
        assert tensorlib.get_default_dtype() is tensorlib.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tensorlib.set_default_tensor_type(tensorlib.FloatTensor)
            assert tensorlib.get_default_dtype() is tensorlib.float32
            with pytest.raises(TypeError, match="floating-point"):
                tensorlib.set_default_tensor_type(tensorlib.LongTensor)
    finally:
        tensorlib.set_default_dtype(tensorlib.float32)


def test_assert_is_a_callable_assert():
    tensorlib._assert(True, "never")
    tensorlib._assert(tensorlib.tensor(1), "never")
    with pytest.raises(AssertionError, match="the reason"):
        tensorlib._assert(tensorlib.tensor(False), "the reason")


def test_log_api_usage_once_prints_once_when_asked(monkeypatch, capsys):
    from tensorlib import _C
    monkeypatch.setenv("PYTORCH_API_USAGE_STDERR", "1")
    event = f"tensorlib.test.{id(capsys)}"
    _C._log_api_usage_once(event)
    _C._log_api_usage_once(event)
    assert capsys.readouterr().err.count(f"PYTORCH_API_USAGE {event}") == 1
    monkeypatch.delenv("PYTORCH_API_USAGE_STDERR")
    _C._log_api_usage_once(event + ".quiet")
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError):
        _C._log_api_usage_once(3)


def test_sizes_built_from_sizes_stay_sizes():
    import tensorlib as tl
    s = tl.ones(2, 3).shape
    for built in (s[:-1] + (4,), (1,) + s, s * 2, 2 * s, s + s,
                  tl.broadcast_shapes((2, 1), (1, 3))):
        assert type(built) is tl.Size
    assert (s[-2:] + (5,)).numel() == 30
    assert tl.broadcast_shapes((2, 1), (1, 3)) == (2, 3)
    with __import__("pytest").raises(TypeError):
        s + [4]


@pytest.mark.parametrize("values", [1, 0, [1], [1, 2], [], 0.0, True, False, float("nan"), 0j])
def test_assert_async_raises_where_torch_does(values):
    try:
        torch._assert_async(torch.tensor(values))
        expected = None
    except RuntimeError as exc:
        expected = str(exc)
    if expected is None:
        assert tensorlib._assert_async(tensorlib.tensor(values)) is None
    else:
        with pytest.raises(RuntimeError) as ours:
            tensorlib._assert_async(tensorlib.tensor(values))
        assert str(ours.value) == expected


def test_assert_async_takes_a_message_and_only_tensors():
    tensorlib._assert_async(tensorlib.tensor(2), "never")
    with pytest.raises(RuntimeError, match="^gamma must be non-negative$"):
        tensorlib._assert_async(tensorlib.tensor(False), "gamma must be non-negative")
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        tensorlib._assert_async(1)
