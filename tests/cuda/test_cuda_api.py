"""`tensorlib.cuda` answers as torch.cuda does: here (no GPU) False/0/no-ops where torch
allows the call without a GPU, a RuntimeError saying why where it needs one; with a GPU the
same calls describe it."""
import pytest

import tensorlib as tl
import tensorlib.cuda as cuda

HAS_GPU = cuda.is_available()
no_gpu = pytest.mark.skipif(HAS_GPU, reason="checks the answers of a machine without a GPU")
gpu = pytest.mark.skipif(not HAS_GPU, reason=f"no CUDA GPU: {tl.backends.why_unavailable('cuda')}")


def test_exposed_as_torch_cuda():
    assert tl.cuda is cuda
    assert issubclass(cuda.OutOfMemoryError, RuntimeError)


@no_gpu
def test_queries_that_work_without_a_gpu():
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert cuda.is_bf16_supported() is False
    assert cuda.get_arch_list() == []
    assert cuda.memory_allocated() == 0 and cuda.max_memory_allocated() == 0
    assert cuda.memory_reserved() == 0 and cuda.max_memory_reserved() == 0
    assert cuda.memory_stats() == {}
    assert "Allocated memory" in cuda.memory_summary()
    cuda.reset_peak_memory_stats()
    cuda.empty_cache()
    assert cuda.is_initialized() is False


def test_seeding_works_on_every_machine():
    cuda.manual_seed(123)
    assert cuda.initial_seed() == 123
    cuda.manual_seed_all(7)
    assert cuda.initial_seed() == 7
    cuda.seed()
    cuda.seed_all()
    state = cuda.get_rng_state()
    cuda.manual_seed(1)
    cuda.set_rng_state(state)
    assert cuda.get_rng_state().tolist() == state.tolist()


@no_gpu
@pytest.mark.parametrize("call", [
    cuda.current_device, lambda: cuda.set_device(0), cuda.get_device_name,
    cuda.get_device_properties, cuda.get_device_capability, cuda.synchronize,
    cuda.mem_get_info, cuda.init, cuda.Stream, cuda.Event, lambda: cuda.Event(enable_timing=True),
    cuda.current_stream, cuda.default_stream, lambda: cuda.device(0).__enter__(),
    lambda: cuda.set_per_process_memory_fraction(0.5)])
def test_calls_that_need_a_gpu_say_why(call):
    with pytest.raises(RuntimeError, match="CUDA is not available: "):
        call()
    assert cuda.is_initialized() is False


@no_gpu
def test_no_op_contexts_and_a_cuda_tensor_error_leave_the_library_working():
    with cuda.device(None), cuda.device(-1), cuda.stream(None):
        pass
    cuda.set_device(-1)
    with pytest.raises(RuntimeError, match="cuda"):
        tl.zeros(3, device="cuda")
    with pytest.raises(RuntimeError):
        tl.ones(2).to("cuda")
    assert tl.ones(2).add(1).tolist() == [2.0, 2.0]


def test_set_device_rejects_other_device_types():
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.set_device("cpu")


def test_memory_fraction_range_is_checked():
    with pytest.raises(ValueError, match="Allowed range"):
        cuda.set_per_process_memory_fraction(1.5)


def test_amp_is_imported_lazily_and_unknown_names_raise():
    with pytest.raises(AttributeError, match="no attribute 'not_a_function'"):
        cuda.not_a_function  # noqa: B018


@gpu
def test_a_gpu_is_described():
    assert cuda.device_count() >= 1
    p = cuda.get_device_properties(0)
    assert cuda.get_device_name(0) == p.name
    assert cuda.get_device_capability(0) == (p.major, p.minor)
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    with cuda.device(0):
        assert cuda.current_device() == 0


@gpu
def test_streams_events_and_memory_counters_on_a_gpu():
    x = tl.ones(1 << 20, device="cuda")
    assert cuda.memory_allocated() >= 4 << 20
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        assert cuda.current_stream() == s
        start.record()
        y = x * 2
        end.record()
    assert cuda.current_stream() == cuda.default_stream()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    cuda.current_stream().wait_stream(s)
    assert y.sum().item() == 2 * (1 << 20)
    del x, y
    cuda.synchronize()
    cuda.empty_cache()
